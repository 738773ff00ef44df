#!/usr/bin/env bash
# Call 75: "stages" (quantise, grouping, down's tile) against main's binary: GPU tests, sanitizers of
# the new kernels, interleaved cells, the bf16 baseline, ncu durations of one layer's kernels. Every
# output in one archive but the summary (the device returns at most eight files).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/nan S=bin-run/stages
mkdir -p "$W/stages"
gpu_tests $S "$W/stages" > "$W/tests.log" 2>&1 &
{ timeout 60 $S/cuda_arguments_test --gtest_brief=1 > "$W/stages/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/stages/test-cuda_arguments_test.log"
  timeout 240 $S/arm_matrix_test --gtest_brief=1 > "$W/stages/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/stages/test-arm_matrix_test.log"; } &
wait
mark tests
tar czf "$OUT/c75.tgz" -C "$W" .  # now, so the tests' logs come back even if a later step runs out of time
skewed() { timeout 150 "$1/strata-moe" bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing skewed --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror|WRONG"; }
two() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label stages"; hopper_cell $S "$@"; }
{ two "T=4096" qwen35-a3b 4096
  two "T=512" qwen35-a3b 512
  two "T=16384" qwen35-a3b 16384
  two "T=4096 again" qwen35-a3b 4096
  echo "=== skewed T=4096 main"; skewed $B; echo "=== skewed T=4096 stages"; skewed $S
  two "qwen3-30b T=4096" qwen3-30b 4096
  two "flash-next T=4096" flash-next 4096
  two "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  two "Q4_K+Q6_K T=512" qwen35-a3b 512 --gate-up q4_K --down q6_K
  two "IQ4_XS+IQ4_XS T=4096" qwen35-a3b 4096 --gate-up iq4_xs --down iq4_xs
} > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
{ for t in cuda_pipeline_test quantize_q10_test; do
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $S/$t --gtest_brief=1 2>&1 | tail -2
    echo "memcheck $t rc=${PIPESTATUS[0]}"
    timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $S/$t --gtest_brief=1 2>&1 | tail -2
    echo "racecheck $t rc=${PIPESTATUS[0]}"; done
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $S/fused_q10_test --gtest_brief=1 \
    --gtest_filter='Edges/FusedQ10Layer.HopperKernels*/down_tile_of_its_own' 2>&1 | tail -2
  echo "memcheck down_tile_of_its_own rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
k() { timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip ${3:-0} --launch-count ${4:-12} \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens $2 --chunk $2 2>&1 | grep -E "^  [a-zA-Z_].*\(|duration" | sed 's/(.*//'; }
{ echo "=== stages T=4096"; k $S 4096; echo "=== stages T=512"; k $S 512; echo "=== stages T=16384"; k $S 16384; } > "$W/kernels.log" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/stages/test-cuda_arguments_test.log"
  echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/stages/test-arm_matrix_test.log" | head -20
  cat "$W/bench.log" "$W/sanitize.log"; cat "$W/bf16.log" | tail -12; cat "$W/kernels.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c75.tgz" -C "$W" .
