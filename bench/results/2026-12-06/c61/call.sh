#!/usr/bin/env bash
# Call 61: the weights-in-registers q10 Hopper kernel (hopper-rs tree, Release, sm_90a) behind
# STRATA_Q10_HOPPER_RS=on against the same binary without it: GPU tests, sanitizers, resources,
# ncu kernel durations, fused-hopper cells, the bf16 baseline. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ timeout 280 $D/fused_q10_test --gtest_brief=1 > "$W/test-fused.log" 2>&1; echo "rc=$?" >> "$W/test-fused.log"
  grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Expected|Which is|seed" "$W/test-fused.log" | head -60
} > "$OUT/tests.log" 2>&1
mark tests
{ STRATA_Q10_HOPPER_RS=on STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 \
    $D/fused_q10_test --gtest_brief=1 --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_k_small:HopperFormats/*down_q6_k_small' 2>&1 | tail -3
  echo "memcheck rc=${PIPESTATUS[0]}"
  STRATA_Q10_HOPPER_RS=on STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 \
    $D/fused_q10_test --gtest_brief=1 --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -3
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_rs_kernel" > "$OUT/resources.log" 2>&1
mark resources
hop() {  # hop T [GATE DOWN]
  local t=$1; shift
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset ${PRESET:-qwen35-a3b} \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror|WRONG"
}
both() {  # both LABEL ARGS...: off, then on
  local label=$1; shift
  echo "=== $label off"; hop "$@"
  echo "=== $label on"; STRATA_Q10_HOPPER_RS=on hop "$@"
}
{ both "T=4096 round 1" 4096
  both "T=4096 round 2" 4096
  both "T=16384" 16384
  both "T=4096 q4_K q6_K" 4096 q4_K q6_K
  PRESET=qwen3-30b both "qwen3-30b T=4096" 4096
  PRESET=flash-next both "flash-next T=4096" 4096
} > "$OUT/bench.log" 2>&1
mark bench
k() {  # k LABEL: ncu durations of the q10 Hopper kernels of one layer at T = 4096
  echo "=== $1"
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-count 4 \
    $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration|inst_executed"
}
{ k off; STRATA_Q10_HOPPER_RS=on k on; } > "$OUT/kernels.log" 2>&1
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
