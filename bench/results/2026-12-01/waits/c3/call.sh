#!/usr/bin/env bash
# One device call: this tree's q10 GPU tests, memcheck and racecheck of the Hopper q10 cases, the
# q10 fused-hopper A/B against .ab-base (IQ3_S + Q2_0 at three T, two more mixes at T = 4096), the
# bf16 baseline, a full ncu profile of IQ3_S gate/up + Q2_0 down and every kernel's duration.
set -u
export O=${OUT:?}/r; mkdir -p "$O"
run() {
export STRATA_AB_NUMERICS=q10 STRATA_AB_BASE_ARM=fused-hopper STRATA_AB_ARMS=fused-hopper STRATA_AB_ROUTING=uniform \
  STRATA_AB_PRESETS=qwen35-a3b
STRATA_GPU_TESTS="fused_q10_test hopper_q10_decode_test quantize_q10_test f16_mma_exact_test" STRATA_AB_SANITIZE=1 \
  STRATA_AB_BF16=1 STRATA_AB_TOKENS=16384 STRATA_AB_CHUNKS=512,4096,16384 scripts/gpu-check "$O/a" ab-base
for mix in "iq4_xs iq4_xs" "q4_K q6_K"; do
  set -- $mix
  STRATA_GPU_TESTS=quantize_q10_test STRATA_GPU_RUN_TESTS=0 STRATA_AB_ROUNDS=1 STRATA_AB_TOKENS=4096 \
    STRATA_AB_CHUNKS=4096 STRATA_AB_EXTRA="--gate-up $1 --down $2" scripts/gpu-check "$O/m-$1-$2" ab-base
done
STRATA_GPU_TESTS=quantize_q10_test STRATA_GPU_RUN_TESTS=0 scripts/gpu-check "$O/p" profile
}
export -f run
timeout "${CALL_BUDGET:-540}" bash -c run
rm -f "$O"/p/*.ncu-rep
gzip -f "$O"/p/profile-sass.csv "$O"/a/tests.log 2>/dev/null
for f in "$O"/*/build.log; do grep -E "Compiling entry|spill" "$f" | gzip > "$f.ptxas.gz"; rm -f "$f"; done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$O"
