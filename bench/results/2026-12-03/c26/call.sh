#!/usr/bin/env bash
# Call 26: every format whose kernel compiles without spills in the decoder warpgroup of the
# 128-pair tile (all but IQ1_S, IQ1_M, IQ2_S, NVFP4 and TQ1_0 gate/up). Binaries built off the
# device (sm_90a only): strata-moe and fused_q10_test of the change, strata-moe-base (call 25's
# tree) for the A/B, one process per binary and format.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck Hopper, every format's small cases"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='HopperFormats/*_small*' 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
{ for f in q1_0 q4_0 q4_1 q5_0 q5_1 q2_K q3_K q4_K q5_K iq1_s iq1_m iq2_xs iq2_s iq3_xxs nvfp4 tq1_0 tq2_0; do
    for b in -base ""; do
      echo "=== strata-moe$b $f $f"
      timeout 40 bin-run/strata-moe$b bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
        --preset qwen35-a3b --routing uniform --layers 1 --cells 2 --quiet --tokens 4096 --chunk 4096 \
        --gate-up $f --down $f 2>&1 | grep -E "^A |^B "
    done
  done
} > "$OUT/sweep.log" 2>&1
mark sweep
