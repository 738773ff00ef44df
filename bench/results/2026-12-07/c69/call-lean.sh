#!/usr/bin/env bash
# Call 69, lean form for what device time was left: "act" (desc + the producer's activation codes
# by cp.async; it holds both changes) against main. GPU tests of act, interleaved bench cells, the
# bf16 baseline, memcheck and racecheck of act (in that order: what matters most first).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/main A=bin-run/act
mkdir -p "$W/act"
gpu_tests $A "$W/act" > "$OUT/tests-act.log" 2>&1
mark tests
tar czf "$OUT/logs.tgz" -C "$W" .
two() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label act"; hopper_cell $A "$@"; }
{ two "T=4096" qwen35-a3b 4096
  two "T=512" qwen35-a3b 512
  two "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  two "T=16384" qwen35-a3b 16384
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
