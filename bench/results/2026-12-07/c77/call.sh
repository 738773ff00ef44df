#!/usr/bin/env bash
# Call 77: "final" (main + the quantise kernel, down's own tile, the capture fix) against main's
# binary: GPU tests, interleaved cells, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/nan F=bin-run/final
mkdir -p "$W/final"
gpu_tests $F "$W/final" > "$W/tests.log" 2>&1 &
{ timeout 60 $F/cuda_arguments_test --gtest_brief=1 > "$W/final/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/final/test-cuda_arguments_test.log"
  timeout 240 $F/arm_matrix_test --gtest_brief=1 > "$W/final/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/final/test-arm_matrix_test.log"; } &
wait
mark tests
tar czf "$OUT/c77.tgz" -C "$W" .
{ for t in 4096 512 16384; do
    echo "=== T=$t main"; hopper_cell $B qwen35-a3b $t
    echo "=== T=$t final"; hopper_cell $F qwen35-a3b $t; done
} > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/final/test-cuda_arguments_test.log"
  echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/final/test-arm_matrix_test.log" | head -20
  cat "$W/bench.log"; tail -10 "$W/bf16.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c77.tgz" -C "$W" .
