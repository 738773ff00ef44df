#!/usr/bin/env bash
# Call 70: call 69's three trees (c69/call.sh: "main", "desc", "act") and "nan" (branch nan-amax:
# main + the NaN-keeping block max of every arm's requantisation), all Release, sm_90a, built off
# the device. GPU tests of desc, act and nan (nan also the q8 arm matrix), interleaved bench cells
# (nan at T = 4096 only), the bf16 baseline, sanitizers of act and of nan's overflow test,
# resources, ncu kernel durations and instruction counts (in that order: what matters most first).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/main D=bin-run/desc A=bin-run/act N=bin-run/nan
mkdir -p "$W/desc" "$W/act" "$W/nan"
gpu_tests $D "$W/desc" > "$OUT/tests-desc.log" 2>&1 &
gpu_tests $A "$W/act" > "$OUT/tests-act.log" 2>&1 &
gpu_tests $N "$W/nan" > "$OUT/tests-nan.log" 2>&1
wait
mark tests
{ timeout 240 $N/arm_matrix_test --gtest_brief=1 2>&1 | grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|Failure|Which is" | head -30
  echo "arm_matrix rc=${PIPESTATUS[0]}"; } > "$OUT/tests-nan-arm-matrix.log" 2>&1
mark arm_matrix
tar czf "$OUT/logs.tgz" -C "$W" .  # now, so the tests' logs come back even if a later step runs out of time
three() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label desc"; hopper_cell $D "$@"
  echo "=== $label act"; hopper_cell $A "$@"; }
{ three "T=4096" qwen35-a3b 4096
  echo "=== T=4096 nan"; hopper_cell $N qwen35-a3b 4096
  echo "=== T=4096 main again"; hopper_cell $B qwen35-a3b 4096
  three "T=512" qwen35-a3b 512
  three "T=16384" qwen35-a3b 16384
  three "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small' 2>&1 | tail -2
  echo "memcheck act rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "racecheck act rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool synccheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "synccheck act rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $N/c_api_engine_test --gtest_brief=1 \
    --gtest_filter='*GateOverflow*' 2>&1 | tail -2
  echo "memcheck nan rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
{ hopper_resources desc $D; hopper_resources act $A; hopper_resources nan $N; } > "$OUT/resources.log" 2>&1
mark resources
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens ${2:-4096} --chunk ${2:-4096} 2>&1 | grep -E "hopper_q10|duration|inst_executed"; }
{ for x in main desc act nan; do echo "=== $x T=4096"; k bin-run/$x; done
  for x in main act; do echo "=== $x T=512"; k bin-run/$x 512; done; } > "$OUT/kernels.log" 2>&1
mark kernels
