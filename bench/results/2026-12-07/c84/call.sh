#!/usr/bin/env bash
# Call 84: the tree to stop on ("final2": main with the walk and the K = 512 down test cases, as one
# binary): its kernels' stack and local memory, every GPU test, and the README cells call 83 could
# not give for main's kernels (the formats whose 128-pair down tile acts4 changed, at T = 16384, and
# gpt-oss-120b at T = 4096), with IQ3_S + Q2_0 at T = 4096 to tie it to call 83, and the bf16
# baseline. The summary grows step by step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
N=bin-run/final2
S="$OUT/summary.txt"
mkdir -p "$W/final2"
hopper_resources final2 $N > "$S" 2>&1
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $N/fused_q10_test --gtest_brief=1 > "$W/final2/test-fused_q10_test-$i.log" 2>&1
    echo "rc=$?" >> "$W/final2/test-fused_q10_test-$i.log" ) &
done
for t in hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test cuda_arguments_test arm_matrix_test; do
  ( timeout 200 $N/$t --gtest_brief=1 > "$W/final2/test-$t.log" 2>&1; echo "rc=$?" >> "$W/final2/test-$t.log" ) &
done
wait
mark tests
for t in "$W"/final2/test-*.log; do
  echo "=== $(basename "$t" .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" "$t" | head -20
done >> "$S"
cellf() {  # cellf PRESET T ROUTING [GATE DOWN]
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  echo "=== $p T=$t $r ${fmt:-iq3_s q2_0}"
  timeout 150 $N/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ cellf qwen35-a3b 4096 uniform
  for m in "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do cellf qwen35-a3b 16384 uniform $m; done
  cellf qwen35-a3b 16384 uniform
  cellf gpt-oss-120b 4096 uniform mxfp4 mxfp4; } >> "$S" 2>&1
mark bench
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c84.tgz" -C "$W" .
