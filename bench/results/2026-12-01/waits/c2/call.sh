#!/usr/bin/env bash
# One device call: this tree's GPU tests and memcheck, the q10 fused-hopper A/B against .ab-base on
# four format mixes, a full ncu profile of IQ3_S gate/up + Q2_0 down.
set -u
export O=${OUT:?}/r; mkdir -p "$O"
run() {
export STRATA_AB_NUMERICS=q10 STRATA_AB_BASE_ARM=fused-hopper STRATA_AB_ARMS=fused-hopper STRATA_AB_ROUTING=uniform \
  STRATA_AB_PRESETS=qwen35-a3b STRATA_AB_TOKENS=4096 STRATA_AB_CHUNKS=4096
STRATA_GPU_TESTS="$(for f in tests/gpu/*_test.cpp; do basename "$f" .cpp; done | tr '\n' ' ')" STRATA_AB_BF16=1 \
  STRATA_AB_ROUNDS=1 scripts/gpu-check "$O/a" ab-base
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=$PWD/deps-root/usr/lib/x86_64-linux-gnu
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/fused_q10_test \
  --gtest_filter='HopperFormats/*.*_small:HopperFormats/*.*_aligned' > "$O/a/memcheck.log" 2>&1
echo "memcheck rc=$?" >> "$O/a/info.txt"
for mix in "q8_0 q8_0" "iq4_xs iq4_xs" "mxfp4 mxfp4"; do
  set -- $mix
  STRATA_GPU_TESTS=quantize_q10_test STRATA_GPU_RUN_TESTS=0 STRATA_AB_ROUNDS=2 STRATA_AB_EXTRA="--gate-up $1 --down $2" \
    scripts/gpu-check "$O/m-$1-$2" ab-base
done
STRATA_GPU_TESTS=quantize_q10_test STRATA_GPU_RUN_TESTS=0 scripts/gpu-check "$O/p" profile
}
export -f run
timeout "${CALL_BUDGET:-540}" bash -c run
rm -f "$O"/p/*.ncu-rep
gzip -f "$O"/p/profile-sass.csv 2>/dev/null
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$O"
