#!/usr/bin/env bash
# Call 37: call 36 cut to the device time left (~4 min with the machine's start), in order of
# need, each step's file written as it ends: the wait variants of bin-run/v2 (call 35's script:
# none, nohint, onewait, early, both, all3; ncu kernel durations, T = 512 then 4096), then the GPU
# tests and two cells of bin-run/l (the landing candidate of c37/landing.patch: c36's with the early
# release only where a chunk is one span per wait, as ptxas -v found the others spill).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/v2/strata-moe
L=bin-run/l
for t in 512 4096; do
  for v in none onewait early both nohint all3; do
    echo "=== T=$t $v"
    STRATA_Q10_VARIANT=$v timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel \
      --launch-count 4 $B bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
  done >> "$OUT/variants.log" 2>&1
  mark "variants T=$t"
done
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test; do
    ( timeout 200 $L/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
} > "$OUT/landing-tests.log" 2>&1
mark tests
{ for t in 512 4096; do for b in v2 l; do echo "=== $b T=$t"; STRATA_Q10_VARIANT=none timeout 60 bin-run/$b/strata-moe bench \
    --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 2 --cells 3 \
    --quiet --tokens $t --chunk $t 2>&1 | grep -E "^A |^B |rror"; done; done; } > "$OUT/cells.log" 2>&1
mark cells
