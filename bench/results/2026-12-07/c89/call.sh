#!/usr/bin/env bash
# Call 89: "ss" (branch scale-store: the decoders store each span scale at hopper_q10_scale_at's
# place, so that a fold lane reads its four columns of 16 with one 16-byte load, on every tile but
# the two-decoder 64-pair ones; Q4_K's scale product once per chunk) against "final2" (main's
# kernels). Resources; every GPU test on ss; interleaved cells (final2, ss, ss, final2); the bf16
# baseline; ncu of IQ3_S gate/up and Q2_0 down at T = 16384 on both (duration, instructions,
# shared-store wavefronts and bank conflicts); then every cell of the README's numbers on ss while
# the call's time lasts. The summary grows step by step, in the order of the steps' weight, so
# that a call cut short keeps the first.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
S="$OUT/summary.txt"
hopper_resources ss bin-run/ss > "$S" 2>&1
hopper_resources final2 bin-run/final2 >> "$S" 2>&1
mkdir -p "$W/ss"
gpu_tests_all bin-run/ss "$W/ss" > "$W/ss.verdicts" 2>&1
mark tests
{ echo "##### ss"; cat "$W/ss.verdicts"; } >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
round() { local label=$1; shift; cell "$label" final2 "$@"; cell "$label" ss "$@"; cell "$label" ss "$@"; cell "$label" final2 "$@"; }
{ round "IQ3_S+Q2_0 T=16384" qwen35-a3b 16384
  round "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
M=gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
k() { timeout 60 ncu --clock-control none --metrics $M -k regex:hopper_q10 --launch-skip 2 --launch-count 2 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet "${@:2}" 2>&1 | grep -E "hopper_q10|duration|inst_executed|shared_op_st" | sed 's/(HopperQ10Args).*//'; }
for b in final2 ss; do echo "=== ncu IQ3_S+Q2_0 T=16384 $b"; k bin-run/$b --tokens 16384 --chunk 16384; done >> "$S" 2>&1
mark kernels
{ round "IQ3_S+Q2_0 T=4096" qwen35-a3b 4096
  round "Q4_K+Q6_K T=16384" qwen35-a3b 16384 --gate-up q4_K --down q6_K
  round "IQ3_S+Q2_0 T=512" qwen35-a3b 512
  round "Q4_K+Q6_K T=512" qwen35-a3b 512 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells2
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c89.tgz" -C "$W" .
# The README's cells on ss, each only while the call has time for it (the rest go to a later call).
cellf() {  # cellf PRESET T ROUTING [GATE DOWN]
  (( SECONDS < 530 )) || { echo "=== skipped (time): $*"; return; }
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  echo "=== ss: $p T=$t $r ${fmt:-iq3_s q2_0}"
  timeout 60 bin-run/ss/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for m in "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do cellf qwen35-a3b 4096 uniform $m; done
  cellf qwen3-30b 4096 uniform; cellf flash-next 4096 uniform; cellf qwen35-a3b 4096 skewed
  cellf gpt-oss-120b 512 uniform mxfp4 mxfp4; cellf gpt-oss-120b 4096 uniform mxfp4 mxfp4
  for t in 512 16384; do
    for m in "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do cellf qwen35-a3b $t uniform $m; done
  done
  cellf qwen35-a3b 512 skewed; cellf qwen3-30b 512 uniform; } >> "$S" 2>&1
mark readme
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c89.tgz" -C "$W" .
