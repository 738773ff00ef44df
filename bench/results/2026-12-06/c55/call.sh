#!/usr/bin/env bash
# Call 55: the tree to land (sm80-raw: the staged sm_80 tile for gate/up; the Hopper consumers'
# simplifications; q10_code in the device copies of the rule), built off the device (Release,
# sm_90a), against base (1cbfa06's strata-moe): GPU tests, sanitizers, resources, fused-sm80 and
# fused-hopper cells, the sm_80 gate/up kernel's ncu sections, the bf16 baseline. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='Formats/*gate_up_iq3_s_odd_skewed:Formats/*gate_up_q4_0_at_mapping_end:FusedQ10Arm.Sm80RawStages*:HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q5_1_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -3
  echo "memcheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 -E "hopper_q10_kernel|q10_product_kernel" > "$W/resources.txt"
{ echo "q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
sm80() {  # sm80 BIN T
  timeout 150 $1 bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $2 --chunk $2 2>&1 | grep -E "^A |^B |rror"
}
hop() {  # hop BIN T [GATE DOWN]
  local s=$1 t=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $s bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do
    for b in base dev; do echo "=== sm80 $b T=4096 round $round"; sm80 bin-run/$b/strata-moe 4096; done
  done
  for b in base dev; do echo "=== sm80 $b T=16384"; sm80 bin-run/$b/strata-moe 16384; done
  for round in 1 2; do
    for b in base dev; do echo "=== hopper $b T=4096 round $round"; hop bin-run/$b/strata-moe 4096; done
  done
  for b in base dev; do echo "=== hopper $b T=512"; hop bin-run/$b/strata-moe 512; done
  for b in base dev; do echo "=== hopper $b T=4096 q4_K q6_K"; hop bin-run/$b/strata-moe 4096 q4_K q6_K; done
  for b in base dev; do echo "=== hopper $b T=512 q4_K q6_K"; hop bin-run/$b/strata-moe 512 q4_K q6_K; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 150 ncu --clock-control none --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis --section Occupancy -k regex:q10_product --launch-skip 8 --launch-count 1 \
  $D/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
  --routing uniform --layers 2 --cells 1 --quiet --tokens 4096 --chunk 4096 > "$OUT/ncu-sm80-gate-up.txt" 2>&1
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
