#!/usr/bin/env bash
# Call 61: the tree to land (the sm_80 few-pair tile only below a mean of 16 pairs per expert),
# built off the device (Release, sm_90a): fused_q10_test and the fused-sm80 cells by default.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ timeout 300 $D/fused_q10_test --gtest_brief=1 > "$W/test-fused_q10_test.log" 2>&1; echo "rc=$?" >> "$W/test-fused_q10_test.log"
  grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" "$W/test-fused_q10_test.log" | head -30
} > "$OUT/tests.log" 2>&1
mark tests
cell() {  # cell PRESET T
  timeout 100 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset $1 \
    --routing uniform --layers 2 --cells 2 --quiet --tokens $2 --chunk $2 2>&1 | grep -E "^A |^B |rror"
}
{ for pt in "qwen35-a3b 512" "qwen3-30b 512" "qwen35-a3b 1024" "qwen35-a3b 4096"; do echo "=== $pt"; cell $pt; done
  echo "=== q8 production against q10 fused-sm80, qwen35-a3b T=512"
  timeout 100 $D/strata-moe bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 512 --chunk 512 2>&1 | grep -E "^A |^B |rror"
} > "$OUT/bench.log" 2>&1
mark bench
tar czf "$OUT/logs.tgz" -C "$W" .
