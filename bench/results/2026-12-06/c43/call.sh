#!/usr/bin/env bash
# Call 43: the q10 Hopper gate/up epilogue's codes from the row scale's reciprocal and the fp32
# intermediates in a loop of their own (dev = 37cdb2d, with the GPU tests) against base (91bcb5f's
# binary, whose kernels are main's 8ec5308), binaries built off the device (Release, sm_90a).
# Tests and resources of dev, bench cells of both binaries interleaved, ncu durations and
# instruction counts, the bf16 baseline, memcheck of dev's gate/up cases. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
cell() {  # cell BINARY PRESET T ROUTING [GATE DOWN]
  local b=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do for b in base dev; do
    echo "=== round $round $b qwen35-a3b T=512 iq3_s q2_0 uniform"; cell $b qwen35-a3b 512 uniform
    echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0 uniform"; cell $b qwen35-a3b 4096 uniform
    echo "=== round $round $b qwen35-a3b T=4096 q4_K q6_K uniform"; cell $b qwen35-a3b 4096 uniform q4_K q6_K
  done; done
  for b in base dev; do
    echo "=== $b qwen35-a3b T=512 q4_K q6_K uniform"; cell $b qwen35-a3b 512 uniform q4_K q6_K
    echo "=== $b qwen35-a3b T=16384 iq3_s q2_0 uniform"; cell $b qwen35-a3b 16384 uniform
    echo "=== $b qwen3-30b T=4096 iq3_s q2_0 uniform"; cell $b qwen3-30b 4096 uniform; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 4096 512; do for b in base dev; do for m in "iq3_s q2_0" "q4_K q6_K"; do
    echo "=== $b T=$t $m"
    set -- $m
    timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10_kernel \
      --launch-count 4 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t --gate-up $1 --down $2 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time|inst_executed" | cut -c1-150
  done; done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
{ echo "=== memcheck: iq3_s, q4_K, iq4_xs gate/up small and odd cases (both tiles)"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*gate_up_iq4_xs_small' 2>&1 | tail -3
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
tar czf "$OUT/logs.tgz" -C "$W" .
