#!/usr/bin/env bash
# Call 25: IQ4_XS, MXFP4, IQ4_NL and IQ2_XXS on the decoder-warpgroup tile (128 pairs) of the q10
# Hopper kernels, with call 24's two span dots per wait. Binaries built off the device (sm_90a
# only): strata-moe and fused_q10_test of the change, strata-moe-base (287e11e) for the A/B.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
f='HopperFormats/*iq4_xs*:HopperFormats/*mxfp4*:HopperFormats/*iq4_nl*:HopperFormats/*iq2_xxs*'
{ echo "=== memcheck Hopper, IQ4_XS, MXFP4, IQ4_NL, IQ2_XXS"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 --gtest_filter="$f" 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck Hopper, IQ4_XS gate/up and MXFP4 down, small"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq4_xs_small*:HopperFormats/*down_mxfp4_small*' 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BIN ARMS NUMERICS T [GATE DOWN]
  local extra=""; [[ $# -ge 6 ]] && extra="--gate-up $5 --down $6"
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics $3 --arms $2 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $4 --chunk $4 $extra
}
{ for round in 1 2; do
    for m in "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4"; do for b in -base ""; do
      echo "=== round $round strata-moe$b mix $m fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 4096 $m
    done; done
  done
  for b in -base ""; do
    echo "=== strata-moe$b iq3_s q2_0 production,fused-hopper"; cell "$b" production,fused-hopper q8,q10 4096
    echo "=== strata-moe$b mix q4_K q6_K fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 4096 q4_K q6_K
    echo "=== strata-moe$b T=16384 mix iq4_xs iq4_xs fused-hopper,fused-sm80"; cell "$b" fused-hopper,fused-sm80 q10 16384 iq4_xs iq4_xs
  done
} > "$OUT/ab.log" 2>&1
mark ab
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 120 bin-run/strata-moe demo > "$OUT/demo.log" 2>&1
mark demo
