#!/usr/bin/env bash
# Call 62: the weights-in-registers gate/up kernel with the activation stages arriving as their
# copies complete (default) against the producer waiting for them (STRATA_Q10_RS_ACTS=sync), and
# the old kernel (no switch); tests of the four carried formats; racecheck; ncu --set full with
# per-instruction samples of one IQ3_S gate/up launch (qwen35-a3b, T = 4096, uniform).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
D=bin-run/dev
W=$(mktemp -d)
{ STRATA_Q10_HOPPER_RS=on timeout 200 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*iq3_s*:HopperFormats/*q2_0*:HopperFormats/*q4_k*:HopperFormats/*q6_k*:FusedQ10Arm.HopperRs*:*Hopper*Deterministic*' > "$W/t.log" 2>&1
  echo "rc=$?" >> "$W/t.log"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Expected|Which is|seed" "$W/t.log" | head -40
  STRATA_Q10_HOPPER_RS=on STRATA_PF_FUSED_TILE=large timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 6 \
    $D/fused_q10_test --gtest_brief=1 --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' > "$W/race.log" 2>&1
  echo "racecheck rc=$?"; grep -E "Race|hazard|Warning|Error|at 0x|in .*\.cuh|SUMMARY" "$W/race.log" | head -30
} > "$OUT/tests.log" 2>&1
mark tests
hop() { timeout 150 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror|WRONG"; }
{ echo "=== off"; hop
  echo "=== on async"; STRATA_Q10_HOPPER_RS=on hop
  echo "=== on sync"; STRATA_Q10_HOPPER_RS=on STRATA_Q10_RS_ACTS=sync hop
} > "$OUT/bench.log" 2>&1
mark bench
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-count 2 \
    $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration|inst_executed"; }
{ echo "=== on async"; STRATA_Q10_HOPPER_RS=on k; echo "=== on sync"; STRATA_Q10_HOPPER_RS=on STRATA_Q10_RS_ACTS=sync k; } > "$OUT/kernels.log" 2>&1
mark kernels
STRATA_Q10_HOPPER_RS=on timeout 240 ncu --set full --import-source no --clock-control none -k regex:hopper_q10_rs_kernel --launch-skip 2 --launch-count 1 \
  -o "$W/rs-gu" $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 > "$OUT/ncu.log" 2>&1
mark ncu
ncu --import "$W/rs-gu.ncu-rep" --page details > "$OUT/rs-gu-details.txt" 2>&1
ncu --import "$W/rs-gu.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip > "$OUT/rs-gu-sass.csv.gz"
mark export
tar czf "$OUT/logs.tgz" -C "$W" t.log race.log
