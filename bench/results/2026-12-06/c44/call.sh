#!/usr/bin/env bash
# Call 44: on the 128-pair tile beside a decoder warpgroup, a consumer with no live pair (an
# expert's last tile of at most 64 pairs) issues no products and skips its epilogue (dev = 7ca386c,
# with the GPU tests) against base (37cdb2d, call 43's dev, main's kernels), binaries built off the
# device (Release, sm_90a). Tests and resources of dev, bench cells of both binaries interleaved,
# ncu durations and instruction counts, the bf16 baseline, memcheck and racecheck of the cases with
# an idle consumer. Logs in logs.tgz.
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
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
cell() {  # cell BINARY PRESET T ROUTING [GATE DOWN]
  local b=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do for b in base dev; do
    echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0 uniform"; cell $b qwen35-a3b 4096 uniform
    echo "=== round $round $b qwen35-a3b T=4096 q4_K q6_K uniform"; cell $b qwen35-a3b 4096 uniform q4_K q6_K
  done; done
  for b in base dev; do
    echo "=== $b qwen35-a3b T=4096 iq3_s q2_0 skewed"; cell $b qwen35-a3b 4096 skewed
    echo "=== $b qwen35-a3b T=512 iq3_s q2_0 uniform"; cell $b qwen35-a3b 512 uniform
    echo "=== $b qwen35-a3b T=16384 iq3_s q2_0 uniform"; cell $b qwen35-a3b 16384 uniform
    echo "=== $b qwen3-30b T=4096 iq3_s q2_0 uniform"; cell $b qwen3-30b 4096 uniform
    echo "=== $b flash-next T=4096 iq3_s q2_0 uniform"; cell $b flash-next 4096 uniform
    echo "=== $b qwen35-a3b T=4096 iq4_xs iq4_xs uniform"; cell $b qwen35-a3b 4096 uniform iq4_xs iq4_xs; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 4096 16384; do for b in base dev; do for m in "iq3_s q2_0" "q4_K q6_K"; do
    echo "=== $b T=$t $m"
    set -- $m
    timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10_kernel \
      --launch-count 4 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t --gate-up $1 --down $2 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time|inst_executed" | cut -c1-150
  done; done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
{ F='Edges/FusedQ10Layer.HopperKernelsBitwiseEqualToTheQ10RuleAndDeterministic/single_expert_192_rows:Edges/FusedQ10Layer.HopperKernelsBitwiseEqualToTheQ10RuleAndDeterministic/single_expert_600_rows:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small'
  for tool in memcheck racecheck; do
    [[ $tool == racecheck ]] && F='Edges/FusedQ10Layer.HopperKernelsBitwiseEqualToTheQ10RuleAndDeterministic/single_expert_192_rows'
    echo "=== $tool: $F"
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
      --gtest_filter="$F" 2>&1 | tail -3
    echo "rc=${PIPESTATUS[0]}"
  done; } > "$OUT/sanitize.log" 2>&1
mark sanitize
tar czf "$OUT/logs.tgz" -C "$W" .
