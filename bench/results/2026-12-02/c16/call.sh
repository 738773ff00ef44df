#!/usr/bin/env bash
# Call 16: binaries built here (.device-probes/bin/*.xz): strata-moe (ecee87c + half items),
# strata-moe-base (ecee87c), fused_q10_test (new). The tests, sanitizers on small cases that run half
# items, the A/B of the two trees, ncu kernel durations, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
{ echo "=== fused_q10_test"; timeout 200 bin-run/fused_q10_test --gtest_brief=1 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
{ for tool in memcheck racecheck; do
    echo "=== $tool"
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 bin-run/fused_q10_test --gtest_brief=1 \
      --gtest_filter='*HopperKernels*t17_skewed*:*HopperKernels*single_expert_many_rows*:*HopperKernels*single_expert_19*' 2>&1 | tail -5
    echo "rc=${PIPESTATUS[0]}"
  done; } > "$OUT/sanitize.log" 2>&1
mark sanitize
ab() {  # ab TREE PRESET ROUTING T
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $2 --routing $3 --layers 2 --cells 3 --quiet --tokens $4 --chunk $4
}
{ for r in 1 2; do for tree in -base ""; do echo "=== tree$tree r$r qwen35 uniform 4096"; ab "$tree" qwen35-a3b uniform 4096; done; done
  for cell in "qwen35-a3b uniform 512" "qwen35-a3b uniform 16384" "qwen35-a3b skewed 4096" "qwen3-30b uniform 4096" \
              "flash-next uniform 4096"; do
    for tree in -base ""; do echo "=== tree$tree $cell"; ab "$tree" $cell; done
  done
  echo "=== tree new flash-next uniform 4096, STRATA_PF_FUSED_TILE=large"
  STRATA_PF_FUSED_TILE=large ab "" flash-next uniform 4096
  echo "=== tree base flash-next uniform 4096, STRATA_PF_FUSED_TILE=large"
  STRATA_PF_FUSED_TILE=large ab "-base" flash-next uniform 4096
} > "$OUT/ab.log" 2>&1
mark ab
{ for tree in -base ""; do
    echo "=== tree$tree qwen35 4096"
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
      bin-run/strata-moe$tree bench --backend cuda --arms fused-hopper,fused-hopper --numerics q10 --preset qwen35-a3b \
      --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
  done
  for tile in small large; do
    echo "=== tree new flash-next 4096 tile $tile"
    STRATA_PF_FUSED_TILE=$tile timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
      bin-run/strata-moe bench --backend cuda --arms fused-hopper,fused-hopper --numerics q10 --preset flash-next \
      --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
  done
} > "$OUT/kernels.log" 2>&1
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
