#!/usr/bin/env bash
# Call 66: the 128-pair Hopper tile with two decoder warpgroups (col-split-dec2 tree: "dec2")
# against call 65's binary (col-split tree: "split"), each also with STRATA_Q10_HOPPER_SPLIT=off
# (main's kernels are split's with it off): GPU tests and sanitizers of dec2, resources, cells,
# ncu kernel durations, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dec2
S=bin-run/split
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" $t | head -20; done
} > "$OUT/tests.log" 2>&1
mark tests
{ STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
      --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q1_0_small:HopperFormats/*down_tq2_0_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 -E "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"; } > "$OUT/resources.log" 2>&1
mark resources
hop() {  # hop BIN PRESET T ROUTING
  timeout 150 $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $2 \
    --routing $4 --layers 2 --cells 3 --quiet --tokens $3 --chunk $3 2>&1 | grep -E "^A |^B |rror|WRONG"
}
four() { local label=$1; shift
  echo "=== $label main"; STRATA_Q10_HOPPER_SPLIT=off hop $S "$@"
  echo "=== $label split"; hop $S "$@"
  echo "=== $label dec2"; STRATA_Q10_HOPPER_SPLIT=off hop $D "$@"
  echo "=== $label dec2+split"; hop $D "$@"; }
{ four "T=4096" qwen35-a3b 4096 uniform
  four "T=16384" qwen35-a3b 16384 uniform
  four "qwen3-30b T=4096" qwen3-30b 4096 uniform
} > "$OUT/bench.log" 2>&1
mark bench
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration"; }
{ echo "=== main"; STRATA_Q10_HOPPER_SPLIT=off k $S; echo "=== split"; k $S
  echo "=== dec2"; STRATA_Q10_HOPPER_SPLIT=off k $D; echo "=== dec2+split"; k $D; } > "$OUT/kernels.log" 2>&1
mark kernels
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
