#!/usr/bin/env bash
# Call 53: the tree to land (lanes-main: the decoder warpgroups' lane mapping, gate/up's epilogue
# skipped per 8-row half of padding on both tiles; all 25 formats, built off the device: Release,
# sm_90a) -- its GPU tests, resources, and every cell of #14 and #15, with the bf16 baseline. Logs
# in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
S=$D/strata-moe
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
cuobjdump --dump-resource-usage $S 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
cell() {  # cell PRESET T ROUTING [GATE DOWN]
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $S bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for t in 512 4096; do
    for m in "iq3_s q2_0" "q4_K q6_K" "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0" "iq3_s q2_0"; do
      echo "=== qwen35-a3b T=$t $m uniform"; cell qwen35-a3b $t uniform $m
    done
  done
  echo "=== qwen35-a3b T=512 skewed"; cell qwen35-a3b 512 skewed
  echo "=== qwen35-a3b T=4096 skewed"; cell qwen35-a3b 4096 skewed
  echo "=== qwen35-a3b T=16384 uniform"; cell qwen35-a3b 16384 uniform
  echo "=== qwen3-30b T=512 uniform"; cell qwen3-30b 512 uniform
  echo "=== qwen3-30b T=4096 uniform"; cell qwen3-30b 4096 uniform
  echo "=== flash-next T=4096 uniform"; cell flash-next 4096 uniform
  echo "=== gpt-oss-120b T=4096 mxfp4 mxfp4 uniform"; cell gpt-oss-120b 4096 uniform mxfp4 mxfp4
  echo "=== q8 production against q10 fused-sm80, qwen35-a3b T=4096"
  timeout 150 $S bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror|verdict"
  echo "=== q8 production against q10 fused-hopper, qwen35-a3b T=4096"
  timeout 150 $S bench --backend cuda --numerics q8,q10 --arms production,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror|verdict"
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
