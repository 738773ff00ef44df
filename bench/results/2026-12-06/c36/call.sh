#!/usr/bin/env bash
# Call 36 (call 35 was never started: no machine): three changes to the waits of the q10 Hopper kernels, as variants of one binary
# (bin-run/v2/strata-moe: 7f7d812 + variants.patch, IQ3_S and Q2_0 only; STRATA_Q10_VARIANT =
# nohint: the mbarrier waits without the suspend-time hint; onewait: one warp of each consumer
# warpgroup waits for a B buffer, the others on a named barrier behind it; early: the chunk's last
# group takes its scales into registers and gives the B buffer back before its fold; both:
# onewait + early; all3: the three), timed by ncu; and bin-run/l, the landing candidate (123dcce +
# landing.patch: onewait + early for good, every format, the GPU tests). Binaries built off the
# device (Release, sm_90a).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/v2/strata-moe
VARS="none nohint onewait early both all3"
{ for t in 512 4096; do for v in $VARS; do
    echo "=== T=$t $v"
    STRATA_Q10_VARIANT=$v timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel \
      --launch-count 4 $B bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
  done; done; } > "$OUT/variants.log" 2>&1
mark variants
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
L=bin-run/l
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $L/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
  cuobjdump --dump-resource-usage $L/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
  echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines, $(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  echo "=== racecheck Hopper small iq3_s gate/up, q2_0 down"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $L/fused_q10_test --gtest_brief=1 \
    --gtest_filter="HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small" 2>&1 | tail -2
  echo "rc=${PIPESTATUS[0]}"
  for t in 512 4096; do echo "=== v2 none T=$t"; STRATA_Q10_VARIANT=none timeout 120 $B bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t \
    2>&1 | grep -E "^A |^B |rror"; done
  for t in 512 4096 16384; do echo "=== l T=$t"; timeout 120 $L/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset qwen35-a3b --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t 2>&1 | grep -E "^A |^B |rror"; done
} > "$OUT/landing.log" 2>&1
mark landing
