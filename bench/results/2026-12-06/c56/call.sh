#!/usr/bin/env bash
# Call 56: the staged sm_80 gate/up tile with slot rows of ceil16(n + 15) bytes (sm80-stride: Q4_K
# and NVFP4 gate/up staged too), built off the device (Release, sm_90a), against base (main 4c195e0):
# fused_q10_test, memcheck, fused-sm80 cells and ncu kernel times. Logs in logs.tgz.
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
    --gtest_filter='Formats/*gate_up_q4_K_odd_skewed:Formats/*gate_up_q4_K_at_mapping_end:Formats/*gate_up_nvfp4_odd_skewed:Formats/*gate_up_nvfp4_multi_tile' 2>&1 | tail -3
  echo "memcheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
sm80() {  # sm80 BIN T GATE DOWN
  timeout 150 $1 bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $2 --chunk $2 --gate-up $3 --down $4 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do
    for b in base dev; do echo "=== sm80 $b T=4096 q4_K q6_K round $round"; sm80 bin-run/$b/strata-moe 4096 q4_K q6_K; done
  done
  for b in base dev; do echo "=== sm80 $b T=4096 nvfp4 nvfp4"; sm80 bin-run/$b/strata-moe 4096 nvfp4 nvfp4; done
  for b in base dev; do echo "=== sm80 $b T=4096 iq3_s q2_0"; sm80 bin-run/$b/strata-moe 4096 iq3_s q2_0; done
} > "$OUT/bench.log" 2>&1
mark bench
{ for b in base dev; do
    echo "=== $b"
    timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:q10_product --launch-skip 8 --launch-count 4 \
      bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 1 --quiet --tokens 4096 --chunk 4096 --gate-up q4_K --down q6_K 2>&1 \
      | grep -E "q10_product|gpu__time" | sed 's/(strata::[^)]*)//g' | cut -c1-200
  done; } > "$OUT/ncu.log" 2>&1
mark ncu
tar czf "$OUT/logs.tgz" -C "$W" .
