#!/usr/bin/env bash
# Call 48: the IQ3_S piece decode with one prmt per grid index; dev = 34edd8e with the GPU tests,
# base = 05378e2 (main), binaries built off the device (Release, sm_90a). Tests and resources of
# dev, bench cells of both binaries interleaved (fused-hopper, and fused-sm80 against q8
# production), ncu durations and instruction counts, the bf16 baseline. Logs in logs.tgz.
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
  done; done
  for b in base dev; do
    echo "=== $b qwen35-a3b T=512 iq3_s q2_0 skewed"; cell $b qwen35-a3b 512 skewed
    echo "=== $b qwen3-30b T=512 iq3_s q2_0 uniform"; cell $b qwen3-30b 512 uniform
    echo "=== $b qwen35-a3b T=16384 iq3_s q2_0 uniform"; cell $b qwen35-a3b 16384 uniform
    echo "=== $b q8 production against q10 fused-sm80, qwen35-a3b T=4096"
    timeout 150 bin-run/$b/strata-moe bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror"; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 512 4096; do for b in base dev; do for m in "iq3_s q2_0" "q4_K q6_K"; do
    [[ $m == "q4_K q6_K" ]] && continue
    echo "=== $b T=$t $m"
    set -- $m
    timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10_kernel \
      --launch-count 4 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t --gate-up $1 --down $2 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time|inst_executed" | cut -c1-150
  done; done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
tar czf "$OUT/logs.tgz" -C "$W" .
