#!/usr/bin/env bash
# Call 22: where the q10 kernels wait. strata-moe of db3de7f (sm_90a only, built off the device).
#  1. ncu --set full of one sm_80 gate/up and one down launch (q10 fused-sm80, IQ3_S + Q2_0,
#     qwen35-a3b T = 4096), with the SASS source page (stall samples per instruction);
#  2. every kernel's duration over one layer: fused-hopper at T = 512 and 4096, fused-sm80 at 4096;
#  3. the SASS of the sm_80 IQ3_S gate/up kernel.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
B=bin-run/strata-moe
cell="--backend cuda --numerics q10 --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet"
timeout 240 ncu --kernel-name regex:q10_product_kernel --launch-skip 2 --launch-count 2 --set full \
  --import-source no -f -o "$OUT/sm80" $B bench $cell --arms fused-sm80,fused-sm80 --tokens 4096 --chunk 4096 > "$OUT/ncu.log" 2>&1
echo "rc=$?" >> "$OUT/ncu.log"
mark ncu-full
ncu -i "$OUT/sm80.ncu-rep" --page details > "$OUT/sm80-details.txt" 2>&1
ncu -i "$OUT/sm80.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/sm80-sass.csv.gz"
rm -f "$OUT/sm80.ncu-rep"
mark export
for arm_t in "fused-hopper 512" "fused-hopper 4096" "fused-sm80 4096"; do
  set -- $arm_t
  echo "=== $1 T=$2" >> "$OUT/kernels.txt"
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 30 --launch-count 30 \
    $B bench $cell --arms $1,$1 --tokens $2 --chunk $2 2>&1 | grep -E "^\s+[a-zA-Z_].*\(|gpu__time_duration" >> "$OUT/kernels.txt"
done
mark kernels
false && cuobjdump -sass $B 2>/dev/null | awk '/Function :/ {p = ($0 ~ /q10_product_kernelINS_4Iq3SENS1_7Q10TileILi128ELi64/)} p' \
  | gzip -9 > "$OUT/sm80-gu-iq3s.sass.gz"
mark sass
