#!/usr/bin/env bash
# Call 65: the 128-pair Hopper tile's items of at most 64 pairs with their columns split between
# the consumers (col-split tree, Release, sm_90a) against the same binary with
# STRATA_Q10_HOPPER_SPLIT=off: GPU tests, sanitizers, resources, fused-hopper cells, ncu kernel
# durations, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" $t | head -20; done
} > "$OUT/tests.log" 2>&1
mark tests
{ for sp in on off; do
    v=""; [[ $sp == off ]] && v=off
    STRATA_Q10_HOPPER_SPLIT=$v STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
      --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_k_small:HopperFormats/*down_q6_k_small' 2>&1 | tail -2
    echo "memcheck split=$sp rc=${PIPESTATUS[0]}"
  done
  STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_k_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"
  STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool synccheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small' 2>&1 | tail -2
  echo "synccheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 -E "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"; } > "$OUT/resources.log" 2>&1
mark resources
hop() {  # hop PRESET T ROUTING [GATE DOWN]
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $p \
    --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror|WRONG"
}
both() { local label=$1; shift; echo "=== $label off"; STRATA_Q10_HOPPER_SPLIT=off hop "$@"; echo "=== $label split"; hop "$@"; }
{ both "T=4096 round 1" qwen35-a3b 4096 uniform
  both "T=4096 round 2" qwen35-a3b 4096 uniform
  both "T=4096 skewed" qwen35-a3b 4096 skewed
  both "T=512" qwen35-a3b 512 uniform
  both "T=16384" qwen35-a3b 16384 uniform
  both "T=4096 q4_K q6_K" qwen35-a3b 4096 uniform q4_K q6_K
  both "qwen3-30b T=4096" qwen3-30b 4096 uniform
  both "flash-next T=4096" flash-next 4096 uniform
} > "$OUT/bench.log" 2>&1
mark bench
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10 --launch-count 4 \
    $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens $1 --chunk $1 2>&1 | grep -E "hopper_q10|duration"; }
{ for t in 4096; do echo "=== T=$t off"; STRATA_Q10_HOPPER_SPLIT=off k $t; echo "=== T=$t split"; k $t; done; } > "$OUT/kernels.log" 2>&1
mark kernels
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
