#!/usr/bin/env bash
# Call 72: "nan" again (branch nan-amax: call 71 with its test on device pointers and CUDA layer_run
# no longer reading device memory), against main's kernels ("main", 853df69): GPU tests of nan with the q8 arm matrix,
# memcheck of its overflow test, interleaved T = 4096 cells. Every output in one archive but the
# summary (the device returns at most eight files).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/main N=bin-run/nan
mkdir -p "$W/nan"
gpu_tests $N "$W/nan" > "$W/tests-nan.log" 2>&1 &
{ timeout 60 $N/cuda_arguments_test --gtest_brief=1 > "$W/nan/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/nan/test-cuda_arguments_test.log"; timeout 240 $N/arm_matrix_test --gtest_brief=1 > "$W/nan/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/nan/test-arm_matrix_test.log"; } &
wait
mark tests
{ echo "=== T=4096 main"; hopper_cell $B qwen35-a3b 4096
  echo "=== T=4096 nan"; hopper_cell $N qwen35-a3b 4096
  echo "=== T=4096 main again"; hopper_cell $B qwen35-a3b 4096
  echo "=== T=4096 nan again"; hopper_cell $N qwen35-a3b 4096; } > "$W/bench.log" 2>&1
mark bench
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $N/c_api_engine_test --gtest_brief=1 \
    --gtest_filter='*GateOverflow*' 2>&1 | tail -3
  echo "memcheck nan rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests-nan.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/nan/test-cuda_arguments_test.log"; echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/nan/test-arm_matrix_test.log" | head -20
  cat "$W/bench.log" "$W/sanitize.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c72.tgz" -C "$W" .
