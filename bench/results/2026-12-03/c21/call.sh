#!/usr/bin/env bash
# Call 21: fused_q10_test (sm_90a) of the tree with the driver entry-point lookup shared
# (cuda/common/driver_entry.hpp: tensor_map.cpp and the tests' mapped_end.hpp). The TMA selection
# case (the encoder found), every at_mapping_end case and the Hopper aligned cases (raw stages by TMA).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
timeout 200 bin-run/fused_q10_test --gtest_brief=1 \
  --gtest_filter='*Tma*:*tma*:*at_mapping_end*:HopperFormats/*_aligned' > "$OUT/tests.log" 2>&1
echo "rc=$?" >> "$OUT/tests.log"
mark tests
