#!/usr/bin/env bash
# Call 82: "walk2" (call 81's walk with 32-bit tiles and no unit bounds kept: the state it carries
# back to what main's item loop carried) against main's kernels ("final", 6eb00f7's binary): the
# kernels' stack and local memory first, the GPU tests (the fused q10 test in four shards), two
# cell pairs, the bf16 baseline. The summary grows after each step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
F=bin-run/final N=bin-run/walk2
S="$OUT/summary.txt"
mkdir -p "$W/walk2"
hopper_resources walk2 $N > "$S" 2>&1
cuobjdump --dump-resource-usage $N/strata-moe 2>&1 | awk '/hopper_q10_kernel/ {f = $0; next}
  f != "" && /REG:/ { if ($0 !~ /STACK:0 / || $0 !~ /LOCAL:0 /) print f " :: " $0; f = "" }' | cut -c1-400 | head -20 >> "$S"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $N/fused_q10_test --gtest_brief=1 > "$W/walk2/test-fused_q10_test-$i.log" 2>&1
    echo "rc=$?" >> "$W/walk2/test-fused_q10_test-$i.log" ) &
done
for t in hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test cuda_arguments_test arm_matrix_test; do
  ( timeout 150 $N/$t --gtest_brief=1 > "$W/walk2/test-$t.log" 2>&1; echo "rc=$?" >> "$W/walk2/test-$t.log" ) &
done
wait
mark tests
for t in "$W"/walk2/test-*.log; do
  echo "=== $(basename "$t" .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" "$t" | head -20
done >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
for c in "T=4096 final qwen35-a3b 4096" "T=4096 walk2 qwen35-a3b 4096" "T=16384 final qwen35-a3b 16384" \
         "T=16384 walk2 qwen35-a3b 16384"; do cell $c >> "$S" 2>&1; done
mark bench
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c82.tgz" -C "$W" .
