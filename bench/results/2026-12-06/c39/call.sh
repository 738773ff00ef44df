#!/usr/bin/env bash
# Call 39: the full ncu profile (per-instruction stall samples) of the q10 Hopper IQ3_S gate/up
# kernel at qwen35-a3b T = 4096 (128-pair tile) and of the Q2_0 down kernel, at the bench's clocks,
# over the binary of 7f7d812 (the kernels of main d219d5c; bin-run/dev of call 34).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
for k in 0 1; do
  timeout 200 ncu --clock-control none --kernel-name regex:hopper_q10_kernel --launch-skip $((2 + k)) --launch-count 1 \
    --set full --import-source no -f -o "$W/t4096-$k" $D/strata-moe bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet \
    --tokens 4096 --chunk 4096 > "$W/ncu-$k.log" 2>&1
  echo "rc=$?" >> "$W/ncu-$k.log"
  ncu -i "$W/t4096-$k.ncu-rep" --page details > "$OUT/t4096-$k-details.txt" 2>&1
  ncu -i "$W/t4096-$k.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/t4096-$k-sass.csv.gz"
  mark "profile $k"
done
tar czf "$OUT/logs.tgz" -C "$W" --exclude='*.ncu-rep' .
