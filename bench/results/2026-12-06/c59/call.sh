#!/usr/bin/env bash
# Call 59: the tree to land (the staged sm_80 gate/up tile for the formats that measured faster),
# built off the device (Release, sm_90a): fused_q10_test and three fused-sm80 cells.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ timeout 300 $D/fused_q10_test --gtest_brief=1 > "$W/test-fused_q10_test.log" 2>&1; echo "rc=$?" >> "$W/test-fused_q10_test.log"
  grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" "$W/test-fused_q10_test.log" | head -30
} > "$OUT/tests.log" 2>&1
mark tests
{ for m in "iq3_s q2_0" "q4_K q6_K" "iq4_xs q2_0"; do
    echo "=== sm80 T=4096 $m"
    timeout 100 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 2 --quiet --tokens 4096 --chunk 4096 --gate-up ${m% *} --down ${m#* } 2>&1 | grep -E "^A |^B |rror"
  done; } > "$OUT/bench.log" 2>&1
mark bench
tar czf "$OUT/logs.tgz" -C "$W" .
