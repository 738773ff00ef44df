#!/usr/bin/env bash
# Call 86: "quads" and "quads2" (fold-loads: span scales four to a 16-byte load, one scale product
# per chunk for Q4_K; quads2 also on the two-decoder 64-pair tiles) against "final2" (main's
# kernels). Resources; every GPU test on quads; interleaved cells of IQ3_S + Q2_0 and Q4_K + Q6_K
# at T = 4096, 16384 and 512; the bf16 baseline; ncu durations and instructions of Q4_K + Q6_K's
# kernels. The summary grows step by step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
S="$OUT/summary.txt"
{ hopper_resources quads bin-run/quads; hopper_resources quads2 bin-run/quads2; } > "$S" 2>&1
mkdir -p "$W/quads"
gpu_tests_all bin-run/quads "$W/quads" > "$W/quads.verdicts" 2>&1
mark tests
{ echo "##### quads"; cat "$W/quads.verdicts"; } >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
tri() { local label=$1; shift; cell "$label" final2 "$@"; cell "$label" quads "$@"; cell "$label" quads2 "$@"; }
{ tri "IQ3_S+Q2_0 T=4096" qwen35-a3b 4096
  tri "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  tri "IQ3_S+Q2_0 T=16384" qwen35-a3b 16384
  tri "Q4_K+Q6_K T=16384" qwen35-a3b 16384 --gate-up q4_K --down q6_K
  tri "IQ3_S+Q2_0 T=512" qwen35-a3b 512
  tri "Q4_K+Q6_K T=512" qwen35-a3b 512 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
k() { timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 "${@:2}" 2>&1 | grep -E "hopper_q10|duration|inst_executed" | sed 's/(HopperQ10Args).*//'; }
for b in final2 quads; do echo "=== ncu Q4_K+Q6_K $b"; k bin-run/$b --gate-up q4_K --down q6_K; done >> "$S" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c86.tgz" -C "$W" .
