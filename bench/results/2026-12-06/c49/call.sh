#!/usr/bin/env bash
# Call 49: the GPU tests of 2a183c0 (quantize_block_q10's codes through q10_code, which the
# 16x16x16 tile kernels call on the device), binaries built off the device (Release, sm_90a).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
D=bin-run/dev
for t in fused_q10_test quantize_q10_test; do
  { timeout 300 $D/$t --gtest_brief=1 2>&1 | grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|tests ran"; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/test-$t.log"
done
mark tests
