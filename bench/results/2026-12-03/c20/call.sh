#!/usr/bin/env bash
# Call 20: binaries built here (.device-probes/bin/*.xz, sm_90a only): strata-moe and fused_q10_test
# of the tree to land (3157f9d + load_words4_any without reads past its 16 bytes, the at_mapping_end
# test cases), strata-moe-c19 (3157f9d, call 19's strata-moe) for the Hopper A/B of that change,
# fused_q10_test-old (3157f9d's kernels with the new test cases).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 240 $T --gtest_brief=1 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
if [[ -x $T-old ]]; then  # the new cases on 3157f9d's kernels: they must fail there
  { echo "=== fused_q10_test-old, at_mapping_end, sm_80 then Hopper"
    timeout 60 $T-old --gtest_brief=1 --gtest_filter='Formats/*Sm80*at_mapping_end*' 2>&1 | tail -25; echo "rc=${PIPESTATUS[0]}"
    timeout 60 $T-old --gtest_brief=1 --gtest_filter='HopperFormats/*at_mapping_end*' 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  } > "$OUT/tests-old.log" 2>&1
  mark tests-old
fi
{ echo "=== memcheck sm_80, every format's odd_skewed case"
  timeout 130 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='*Sm80KernelsBitwise*odd_skewed*' 2>&1 | head -40; echo "rc=${PIPESTATUS[0]}"
  echo "=== memcheck Hopper, four formats of load_words4_any"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_mxfp4_small:HopperFormats/*down_q4_0_small:HopperFormats/*gate_up_iq4_xs_small:HopperFormats/*down_q8_0_small' 2>&1 | head -30
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BIN ARMS NUMERICS [GATE DOWN]
  local extra=""; [[ $# -ge 5 ]] && extra="--gate-up $4 --down $5"
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics $3 --arms $2 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 $extra
}
{ echo "=== new iq3_s q2_0 production,fused-sm80"; cell "" production,fused-sm80 q8,q10
  for m in "q4_K q6_K" "iq4_xs iq4_xs" "q8_0 q8_0" "iq2_xxs iq4_nl" "mxfp4 mxfp4"; do
    echo "=== new mix $m fused-hopper,fused-sm80"; cell "" fused-hopper,fused-sm80 q10 $m
  done
  for m in "iq4_xs iq4_xs" "q8_0 q8_0" "iq2_xxs iq4_nl" "mxfp4 mxfp4"; do
    echo "=== c19 mix $m fused-hopper,fused-hopper"; cell -c19 fused-hopper,fused-hopper q10 $m
  done
} > "$OUT/ab.log" 2>&1
mark ab
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 120 bin-run/strata-moe demo > "$OUT/demo.log" 2>&1
mark demo
