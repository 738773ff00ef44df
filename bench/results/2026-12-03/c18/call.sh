#!/usr/bin/env bash
# Call 18 (call 17's plan again, its logs lost): binaries built here (.device-probes/bin/*.xz, sm_90a
# only): strata-moe and fused_q10_test from e528cd1 + the sm_80 q10 kernels' ldmatrix fragments and
# HalfPiece decode, with the prefetch switch STRATA_Q10_SM80_PREFETCH. Base figures: call 14
# (ecee87c, whose sm_80 kernels are e528cd1's) and q8 production in each process.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  echo "=== fused_q10_test sm_80, prefetch 1"
  STRATA_Q10_SM80_PREFETCH=1 timeout 150 $T --gtest_brief=1 --gtest_filter='*Sm80*:Edges/*BitwiseEqualToTheQ10RuleAndDeterministic*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck"
  STRATA_Q10_SM80_PREFETCH=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_brief=1 \
    --gtest_filter='*Sm80*min_t1_k1*:*Sm80*odd_skewed*' 2>&1 | tail -5; echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 $T --gtest_brief=1 \
    --gtest_filter='*Sm80*gate_up_iq3_s_odd*:*Sm80*down_q2_0_odd*:*Sm80*q4_K_q6_K*:*Sm80*mxfp4_mxfp4*' 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
ab() {  # ab PRESET T [GATE DOWN]
  local extra=""; [[ $# -ge 4 ]] && extra="--gate-up $3 --down $4"
  timeout 60 bin-run/strata-moe bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 \
    --preset $1 --routing uniform --layers 2 --cells 3 --quiet --tokens $2 --chunk $2 $extra
}
{ for r in 1 2; do
    for p in 0 1 2; do echo "=== prefetch $p r$r qwen35 4096"; STRATA_Q10_SM80_PREFETCH=$p ab qwen35-a3b 4096; done
  done
  for cell in "qwen35-a3b 512" "qwen35-a3b 16384" "qwen35-a3b 4096 q4_K q6_K" "qwen35-a3b 4096 iq4_xs iq4_xs"; do
    for p in 0 1; do echo "=== prefetch $p $cell"; STRATA_Q10_SM80_PREFETCH=$p ab $cell; done
  done
} > "$OUT/ab.log" 2>&1
mark ab
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
nk() {  # nk PREFETCH
  STRATA_Q10_SM80_PREFETCH=$1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:q10_product \
    --launch-skip 8 --launch-count 4 bin-run/strata-moe bench --backend cuda --arms fused-sm80,fused-sm80 --numerics q10 \
    --preset qwen35-a3b --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E 'q10_product|gpu__time_duration'
}
{ for p in 0 1 2; do echo "=== prefetch $p"; nk $p; done
  for p in 0 1; do
    echo "=== prefetch $p: scheduler and warp state"
    STRATA_Q10_SM80_PREFETCH=$p timeout 90 ncu --clock-control none --section SchedulerStats --section WarpStateStats \
      --section Occupancy --section MemoryWorkloadAnalysis -k regex:q10_product --launch-skip 8 --launch-count 2 bin-run/strata-moe bench --backend cuda \
      --arms fused-sm80,fused-sm80 --numerics q10 --preset qwen35-a3b --routing uniform --tokens 4096 --chunk 4096 \
      --layers 1 --cells 1 2>&1 | grep -v '^==PROF==' | grep -E 'q10_product|Issue|Eligible|Active Warps|Stall|Warp Cycles|Achieved|Theoretical Occ|Block Limit|Throughput|Bank|Hit Rate'
  done
} > "$OUT/kernels.log" 2>&1
mark ncu
