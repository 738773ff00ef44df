#!/usr/bin/env bash
# Call 87: "ss" (scale-store: the decoders' lanes in column order again, only their 4-byte span
# scale stores permuted into hopper_q10_scale_slot's order; Q4_K's chunk scale as on fold-loads)
# against "final2" (main's kernels), "cs" (chunk-scale: the span scales in column order on every
# tile, Q4_K's chunk scale kept) and, at IQ3_S + Q2_0 T = 16384, "quads" (fold-loads: the
# decoders' lanes permuted). Resources; every GPU test on ss; interleaved cells (final2, ss, cs,
# ss, final2 at T = 4096 and 16384; final2, ss at T = 512); the bf16 baseline; ncu of IQ3_S
# gate/up and Q2_0 down (T = 16384) on final2, quads and ss: duration, instructions, shared-store
# wavefronts and bank conflicts. The summary grows step by step, the steps in the order of their
# weight, so that a call cut short keeps the first.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
S="$OUT/summary.txt"
{ hopper_resources ss bin-run/ss; hopper_resources quads bin-run/quads; } > "$S" 2>&1
mkdir -p "$W/ss"
gpu_tests_all bin-run/ss "$W/ss" > "$W/ss.verdicts" 2>&1
mark tests
{ echo "##### ss"; cat "$W/ss.verdicts"; } >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
both() { local label=$1; shift; cell "$label" final2 "$@"; cell "$label" ss "$@"; }
round() { local label=$1; shift; both "$label" "$@"; cell "$label" cs "$@"; cell "$label" ss "$@"; cell "$label" final2 "$@"; }
{ round "IQ3_S+Q2_0 T=16384" qwen35-a3b 16384; cell "IQ3_S+Q2_0 T=16384" quads qwen35-a3b 16384
  round "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
M=gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
k() { timeout 60 ncu --clock-control none --metrics $M -k regex:hopper_q10 --launch-skip 2 --launch-count 2 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet "${@:2}" 2>&1 | grep -E "hopper_q10|duration|inst_executed|shared_op_st" | sed 's/(HopperQ10Args).*//'; }
for b in final2 quads ss; do echo "=== ncu IQ3_S+Q2_0 T=16384 $b"; k bin-run/$b --tokens 16384 --chunk 16384; done >> "$S" 2>&1
mark kernels
{ round "IQ3_S+Q2_0 T=4096" qwen35-a3b 4096
  round "Q4_K+Q6_K T=16384" qwen35-a3b 16384 --gate-up q4_K --down q6_K
  both "IQ3_S+Q2_0 T=512" qwen35-a3b 512
  both "Q4_K+Q6_K T=512" qwen35-a3b 512 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells2
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c87.tgz" -C "$W" .
