#!/usr/bin/env bash
# Call 23: the sm_80 q10 kernels with each item's decode rows and activation sources formed once
# per item (not per stage). Binaries built off the device (sm_90a only): strata-moe and
# fused_q10_test of the change, strata-moe-base (db3de7f) for the A/B in the same call.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck sm_80, every format's odd_skewed case"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='*Sm80KernelsBitwise*odd_skewed*' 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck sm_80, four formats"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='*Sm80KernelsBitwise*gate_up_iq3_s*odd_skewed*:*Sm80KernelsBitwise*down_q2_0*odd_skewed*:*Sm80KernelsBitwise*gate_up_q4_K*odd_skewed*:*Sm80KernelsBitwise*down_q6_K*odd_skewed*' 2>&1 | tail -6
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BIN ARMS NUMERICS T [GATE DOWN]
  local extra=""; [[ $# -ge 6 ]] && extra="--gate-up $5 --down $6"
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics $3 --arms $2 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $4 --chunk $4 $extra
}
{ for round in 1 2; do for b in -base ""; do
    echo "=== round $round strata-moe$b T=4096 production,fused-sm80"; cell "$b" production,fused-sm80 q8,q10 4096
  done; done
  for t in 512 16384; do for b in -base ""; do
    echo "=== strata-moe$b T=$t production,fused-sm80"; cell "$b" production,fused-sm80 q8,q10 $t
  done; done
  for m in "q4_K q6_K" "q8_0 q8_0" "iq4_xs iq4_xs"; do for b in -base ""; do
    echo "=== strata-moe$b mix $m fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 4096 $m
  done; done
} > "$OUT/ab.log" 2>&1
mark ab
for b in -base ""; do
  echo "=== strata-moe$b" >> "$OUT/ncu.log"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    -k regex:q10_product_kernel --launch-skip 4 --launch-count 4 bin-run/strata-moe$b bench --backend cuda --numerics q10 \
    --arms fused-sm80,fused-sm80 --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 \
    2>&1 | grep -E "q10_product_kernel|gpu__time|inst_executed|issue_active" >> "$OUT/ncu.log"
done
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 120 bin-run/strata-moe demo > "$OUT/demo.log" 2>&1
mark demo
