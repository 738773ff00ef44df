#!/usr/bin/env bash
# Call 90: call 89's binaries again ("final2": main 5b54347's kernels; "ss": b6ce309's), the
# interleaved cells of IQ3_S + Q2_0 and Q4_K + Q6_K at T = 4096 and 16384 (final2, ss, ss, final2),
# then the bf16 baseline. The summary grows step by step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
S="$OUT/summary.txt"
: > "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
round() { local label=$1; shift; cell "$label" final2 "$@"; cell "$label" ss "$@"; cell "$label" ss "$@"; cell "$label" final2 "$@"; }
{ round "IQ3_S+Q2_0 T=4096" qwen35-a3b 4096
  round "IQ3_S+Q2_0 T=16384" qwen35-a3b 16384
  round "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells
timeout 60 python3 .device-probes/torch/grouped_bf16.py 2>&1 | tail -10 >> "$S"
mark bf16
{ round "Q4_K+Q6_K T=16384" qwen35-a3b 16384 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells2
