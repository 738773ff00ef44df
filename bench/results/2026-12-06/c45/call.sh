#!/usr/bin/env bash
# Call 45: the full ncu profile (per-instruction stall samples) of the q10 Hopper kernels of the
# 64-pair tile at qwen35-a3b T = 512 (IQ3_S gate/up, Q2_0 down), landed tree 37cdb2d (bin-run/dev),
# binary built off the device (Release, sm_90a). Details and SASS pages to $OUT, logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
for k in 0 1; do  # launch 2: gate/up, launch 3: down (of the second layer run)
  timeout 240 ncu --clock-control none --kernel-name regex:hopper_q10_kernel --launch-skip $((2 + k)) --launch-count 1 \
    --set full --import-source no -f -o "$W/t512-$k" $D/strata-moe bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet \
    --tokens 512 --chunk 512 > "$W/ncu-$k.log" 2>&1
  echo "rc=$?" >> "$W/ncu-$k.log"
  ncu -i "$W/t512-$k.ncu-rep" --page details > "$OUT/t512-$k-details.txt" 2>&1
  ncu -i "$W/t512-$k.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/t512-$k-sass.csv.gz"
  mark "profile $k"
done
tar czf "$OUT/logs.tgz" -C "$W" --exclude='*.ncu-rep' .
