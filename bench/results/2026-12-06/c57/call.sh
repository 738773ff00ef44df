#!/usr/bin/env bash
# Call 57: the staged sm_80 gate/up tile with slot rows of an odd number of 16-byte units (2 mod 4
# where that does not fit), built off the device (Release, sm_90a), against base (main 4c195e0) and
# against itself with STRATA_Q10_SM80_RAW=direct: fused_q10_test, memcheck, fused-sm80 cells.
# Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ timeout 300 $D/fused_q10_test --gtest_brief=1 > "$W/test-fused_q10_test.log" 2>&1; echo "rc=$?" >> "$W/test-fused_q10_test.log"
  grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" "$W/test-fused_q10_test.log" | head -30
} > "$OUT/tests.log" 2>&1
mark tests
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='Formats/*gate_up_iq3_xxs_odd_skewed:Formats/*gate_up_q2_K_at_mapping_end:Formats/*gate_up_q4_K_multi_tile:Formats/*gate_up_iq2_xxs_odd_skewed' 2>&1 | tail -3
  echo "memcheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
sm80() {  # sm80 BIN GATE DOWN
  timeout 150 $1 bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 --gate-up $2 --down $3 2>&1 | grep -E "^A |^B |rror"
}
{ for m in "iq3_s q2_0" "iq3_xxs q2_0" "q2_K q2_0" "iq2_xxs q2_0" "q4_K q6_K"; do
    for b in base dev; do echo "=== sm80 $b T=4096 $m"; sm80 bin-run/$b/strata-moe $m; done
    echo "=== sm80 dev direct T=4096 $m"; export STRATA_Q10_SM80_RAW=direct; sm80 bin-run/dev/strata-moe $m; unset STRATA_Q10_SM80_RAW
  done
} > "$OUT/bench.log" 2>&1
mark bench
tar czf "$OUT/logs.tgz" -C "$W" .
