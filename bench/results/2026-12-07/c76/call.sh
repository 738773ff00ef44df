#!/usr/bin/env bash
# Call 76: stages2 (call 75's tree with a faster counting sort and the grouping on a high-priority
# side stream) against main's binary: GPU tests, sanitizers of the pipeline kernels, interleaved
# cells with the two measurement switches, the bf16 baseline, ncu durations of one layer.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/nan S=bin-run/stages2
mkdir -p "$W/stages2"
gpu_tests $S "$W/stages2" > "$W/tests.log" 2>&1 &
{ timeout 60 $S/cuda_arguments_test --gtest_brief=1 > "$W/stages2/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/stages2/test-cuda_arguments_test.log"
  timeout 240 $S/arm_matrix_test --gtest_brief=1 > "$W/stages2/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/stages2/test-arm_matrix_test.log"; } &
wait
mark tests
tar czf "$OUT/c76.tgz" -C "$W" .
v() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label stages2"; hopper_cell $S "$@"
  echo "=== $label stages2 side-off"; STRATA_Q10_SIDE_STREAM=0 hopper_cell $S "$@"
  echo "=== $label stages2 radix"; STRATA_GROUPING=radix hopper_cell $S "$@"; }
{ v "T=4096" qwen35-a3b 4096
  v "T=512" qwen35-a3b 512
  v "T=16384" qwen35-a3b 16384
  echo "=== T=4096 stages2 side-off radix"; STRATA_Q10_SIDE_STREAM=0 STRATA_GROUPING=radix hopper_cell $S qwen35-a3b 4096
  echo "=== T=4096 again main"; hopper_cell $B qwen35-a3b 4096
  echo "=== T=4096 again stages2"; hopper_cell $S qwen35-a3b 4096
} > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $S/cuda_pipeline_test --gtest_brief=1 2>&1 | tail -2
  echo "memcheck cuda_pipeline_test rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $S/cuda_pipeline_test --gtest_brief=1 --gtest_filter='*Grouping*' 2>&1 | tail -2
  echo "racecheck grouping rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
{ echo "=== stages2 T=4096"; timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-count 7 \
    $S/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^  [a-zA-Z_].*\(|duration" | sed 's/(.*//'; } > "$W/kernels.log" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/stages2/test-cuda_arguments_test.log"
  echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/stages2/test-arm_matrix_test.log" | head -20
  cat "$W/bench.log" "$W/sanitize.log"; tail -10 "$W/bf16.log"; cat "$W/kernels.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c76.tgz" -C "$W" .
