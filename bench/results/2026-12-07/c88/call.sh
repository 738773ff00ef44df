#!/usr/bin/env bash
# Call 88: every cell of the README's numbers on the binary named by $1 (the tree to land), with
# IQ3_S + Q2_0 and Q4_K + Q6_K at T = 4096 also on "final2" (main's kernels) in the same call,
# the bf16 baseline, and the stack / local-memory check. The summary grows step by step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
N=bin-run/$1
S="$OUT/summary.txt"
hopper_resources "$1" $N > "$S" 2>&1
cellf() {  # cellf BIN PRESET T ROUTING [GATE DOWN]
  local b=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  echo "=== $(basename $b): $p T=$t $r ${fmt:-iq3_s q2_0}"
  timeout 150 $b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ cellf bin-run/final2 qwen35-a3b 4096 uniform; cellf $N qwen35-a3b 4096 uniform
  cellf bin-run/final2 qwen35-a3b 4096 uniform q4_K q6_K; cellf $N qwen35-a3b 4096 uniform q4_K q6_K
  for t in 512 4096 16384; do
    for m in "iq3_s q2_0" "q4_K q6_K" "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do cellf $N qwen35-a3b $t uniform $m; done
  done
  cellf $N qwen35-a3b 512 skewed; cellf $N qwen35-a3b 4096 skewed
  cellf $N qwen3-30b 512 uniform; cellf $N qwen3-30b 4096 uniform; cellf $N flash-next 4096 uniform
  cellf $N gpt-oss-120b 512 uniform mxfp4 mxfp4; cellf $N gpt-oss-120b 4096 uniform mxfp4 mxfp4
  for arm in fused-hopper fused-sm80; do
    echo "=== q8 production against q10 $arm, qwen35-a3b T=4096"
    timeout 150 $N/strata-moe bench --backend cuda --numerics q8,q10 --arms production,$arm --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror"
  done; } >> "$S" 2>&1
mark bench
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c88.tgz" -C "$W" .
