#!/usr/bin/env bash
# Call 19: binaries built here (.device-probes/bin/*.xz, sm_90a only): strata-moe and fused_q10_test
# (the tree to land: e528cd1 + the sm_80 q10 kernels' ldmatrix fragments and HalfPiece decode) and
# strata-moe-wide and fused_q10_test-wide (that + wide.patch, the 128 x 128 16-warp tile behind STRATA_Q10_SM80_WIDE=1).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
T=bin-run/fused_q10_test
{ echo "=== fused_q10_test"; timeout 200 $T --gtest_brief=1 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  echo "=== fused_q10_test-wide, sm_80 and edges, STRATA_Q10_SM80_WIDE=1"
  STRATA_Q10_SM80_WIDE=1 timeout 150 $T-wide --gtest_brief=1 --gtest_filter='*Sm80*:Edges/*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $T --gtest_brief=1 \
    --gtest_filter='*Sm80*min_t1_k1*:*Sm80*odd_skewed*' 2>&1 | head -60; echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 $T --gtest_brief=1 \
    --gtest_filter='*Sm80*gate_up_iq3_s_odd*:*Sm80*down_q2_0_odd*:*Sm80*q4_K_q6_K*:*Sm80*mxfp4_mxfp4*' 2>&1 | tail -5
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
ab() {  # ab BIN PRESET T
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 \
    --preset $2 --routing uniform --layers 2 --cells 3 --quiet --tokens $3 --chunk $3
}
mix() {  # mix GATE DOWN: the q10 arms against each other
  timeout 60 bin-run/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-sm80 \
    --preset qwen35-a3b --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 --gate-up $1 --down $2
}
{ for r in 1 2; do
    echo "=== new r$r qwen35 4096"; ab "" qwen35-a3b 4096
    echo "=== wide r$r qwen35 4096"; STRATA_Q10_SM80_WIDE=1 ab -wide qwen35-a3b 4096
  done
  echo "=== new qwen35 16384"; ab "" qwen35-a3b 16384
  echo "=== wide qwen35 16384"; STRATA_Q10_SM80_WIDE=1 ab -wide qwen35-a3b 16384
  echo "=== new qwen35 512"; ab "" qwen35-a3b 512
  echo "=== new qwen35 4096 skewed"; timeout 60 bin-run/strata-moe bench --backend cuda --numerics q8,q10 \
    --arms production,fused-sm80 --preset qwen35-a3b --routing skewed --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096
  echo "=== new qwen3-30b 4096"; ab "" qwen3-30b 4096
  echo "=== new flash-next 4096"; ab "" flash-next 4096
  for m in "q4_K q6_K" "iq4_xs iq4_xs" "q8_0 q8_0" "iq2_xxs iq4_nl" "mxfp4 mxfp4"; do echo "=== new mix $m"; mix $m; done
} > "$OUT/ab.log" 2>&1
mark ab
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 120 bin-run/strata-moe demo > "$OUT/demo.log" 2>&1
mark demo
nk() {  # nk BIN
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    -k regex:q10_product --launch-skip 8 --launch-count 4 bin-run/strata-moe$1 bench --backend cuda --arms fused-sm80,fused-sm80 \
    --numerics q10 --preset qwen35-a3b --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E 'q10_product|gpu__|smsp__'
}
{ echo "=== new"; nk ""; echo "=== wide"; STRATA_Q10_SM80_WIDE=1 nk -wide; } > "$OUT/kernels.log" 2>&1
mark ncu
