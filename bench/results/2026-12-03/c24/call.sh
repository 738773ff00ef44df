#!/usr/bin/env bash
# Call 24: the q10 Hopper decoder-warpgroup tiles with two span dots in flight per wait for the
# formats of 16- and 32-value spans (Q6_K, Q8_0, Q4_K gate/up). Binaries built off the device
# (sm_90a only): strata-moe and fused_q10_test of the change, strata-moe-base (5d2381d) for the
# A/B in the same call.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
f='HopperFormats/*q6_K*:HopperFormats/*q8_0*:HopperFormats/*gate_up_q4_K*'
{ echo "=== memcheck Hopper, Q6_K, Q8_0, Q4_K gate/up"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 --gtest_filter="$f" 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck Hopper, Q6_K down and Q4_K gate/up, small"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_q6_K_small*:HopperFormats/*gate_up_q4_K_small*' 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BIN ARMS NUMERICS T [GATE DOWN]
  local extra=""; [[ $# -ge 6 ]] && extra="--gate-up $5 --down $6"
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics $3 --arms $2 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $4 --chunk $4 $extra
}
{ for round in 1 2; do
    for m in "q4_K q6_K" "q8_0 q8_0"; do for b in -base ""; do
      echo "=== round $round strata-moe$b mix $m fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 4096 $m
    done; done
    for b in -base ""; do
      echo "=== round $round strata-moe$b iq3_s q2_0 production,fused-hopper"; cell "$b" production,fused-hopper q8,q10 4096
    done
  done
  for b in -base ""; do
    echo "=== strata-moe$b mix iq4_xs iq4_xs fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 4096 iq4_xs iq4_xs
    for t in 512 16384; do
      echo "=== strata-moe$b T=$t mix q4_K q6_K fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 $t q4_K q6_K
    done
  done
} > "$OUT/ab.log" 2>&1
mark ab
for b in -base ""; do
  echo "=== strata-moe$b" >> "$OUT/ncu.log"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    -k regex:hopper_q10_kernel --launch-skip 4 --launch-count 4 bin-run/strata-moe$b bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 \
    --chunk 4096 --gate-up q4_K --down q6_K 2>&1 | grep -E "hopper_q10_kernel|gpu__time|inst_executed" | cut -c1-160 >> "$OUT/ncu.log"
done
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
