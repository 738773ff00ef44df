#!/usr/bin/env bash
# Call 78: the deferred gate/up epilogue (branch deferred-epilogue, binary "defer") against main
# (binary "main", the tree it branches from): GPU tests, sanitizers of the deferred tile,
# interleaved cells, the bf16 baseline, ncu durations of the product kernels.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/main D=bin-run/defer
mkdir -p "$W/defer"
gpu_tests $D "$W/defer" > "$W/tests.log" 2>&1
mark tests
tar czf "$OUT/c78.tgz" -C "$W" .
two() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label defer"; hopper_cell $D "$@"; }
{ two "T=4096" qwen35-a3b 4096
  two "T=512" qwen35-a3b 512
  two "T=16384" qwen35-a3b 16384
  two "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  two "qwen3-30b T=4096" qwen3-30b 4096
  two "T=4096 again" qwen35-a3b 4096; } > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*gate_up_q4_K_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration|inst_executed" | sed 's/(HopperQ10Args).*//'; }
{ echo "=== main"; k $B; echo "=== defer"; k $D; } > "$W/kernels.log" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests.log" "$W/bench.log" "$W/sanitize.log"; tail -10 "$W/bf16.log"; cat "$W/kernels.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c78.tgz" -C "$W" .
