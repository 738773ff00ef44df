#!/usr/bin/env bash
# Call 91: "cd" (branch chunk-decoders: two decoder warpgroups on alternate chunks of the 128-pair
# tile, IQ3_S gate/up and Q2_0) against "ss" (main's kernels, b6ce309). Resources; every GPU test
# on cd; interleaved cells (ss, cd, cd, ss); the bf16 baseline; ncu of both at T = 4096; more
# cells while the call's time lasts. The summary grows step by step, in the order of the steps'
# weight, so that a call cut short keeps the first.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
S="$OUT/summary.txt"
hopper_resources cd bin-run/cd > "$S" 2>&1
cuobjdump --dump-resource-usage bin-run/cd/strata-moe 2>&1 | grep -A1 -E "hopper_q10_kernel" | grep -B1 "REG:" \
  | grep -B1 -v "STACK:0 .*LOCAL:0" | grep -v "^--" | cut -c1-240 >> "$S"
mkdir -p "$W/cd"
gpu_tests_all bin-run/cd "$W/cd" > "$W/cd.verdicts" 2>&1
mark tests
{ echo "##### cd"; cat "$W/cd.verdicts"; } >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
round() { local label=$1; shift; cell "$label" ss "$@"; cell "$label" cd "$@"; cell "$label" cd "$@"; cell "$label" ss "$@"; }
{ round "IQ3_S+Q2_0 T=4096" qwen35-a3b 4096
  round "IQ3_S+Q2_0 T=16384" qwen35-a3b 16384
  round "qwen3-30b T=4096" qwen3-30b 4096; } >> "$S" 2>&1
mark cells
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
M=gpu__time_duration.sum,smsp__inst_executed.sum
k() { timeout 60 ncu --clock-control none --metrics $M -k regex:hopper_q10 --launch-skip 2 --launch-count 2 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet "${@:2}" 2>&1 | grep -E "hopper_q10|duration|inst_executed" | sed 's/(HopperQ10Args).*//'; }
for b in ss cd; do echo "=== ncu IQ3_S+Q2_0 T=4096 $b"; k bin-run/$b --tokens 4096 --chunk 4096; done >> "$S" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c91.tgz" -C "$W" .
roundt() { (( SECONDS < 330 )) || { echo "=== skipped (time): $1"; return; }; round "$@"; }
{ roundt "IQ3_S+Q2_0 T=512" qwen35-a3b 512
  roundt "flash-next T=4096" flash-next 4096
  roundt "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K; } >> "$S" 2>&1
mark cells2
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c91.tgz" -C "$W" .
