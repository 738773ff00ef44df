#!/usr/bin/env bash
# Call 85: the sanitizers on the tree to stop on (call 84's binary, final2) for the cases that share
# activation codes at K = 512 on both tiles: racecheck of Q2_0 down, memcheck of IQ3_S down and of
# IQ3_S gate/up's shared-codes case.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
N=bin-run/final2
S="$OUT/summary.txt"
( timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $N/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_q2_0_shared_codes_512' > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?" >> "$OUT/racecheck.log" ) &
( timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $N/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_iq3_s_shared_codes_512:HopperFormats/*gate_up_iq3_s_shared_codes' > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$OUT/memcheck.log" ) &
wait
mark sanitizers
{ tail -4 "$OUT/racecheck.log"; tail -4 "$OUT/memcheck.log"; } > "$S"
