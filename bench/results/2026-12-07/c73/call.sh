#!/usr/bin/env bash
# Call 73: where the q10 fused-hopper layer's time goes outside its two product kernels. ncu
# durations of every kernel of one layer (main's tree, c72nan) at T = 512, 4096 and 16384, the
# layer's timeline from nsys where the machine has it, and the bench cells of the same binary.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/nan
cmd() { echo "$B/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens $1 --chunk $1"; }
{ for t in 4096 512 16384; do echo "=== T=$t"; hopper_cell $B qwen35-a3b $t; done; } > "$W/bench.log" 2>&1
mark bench
for t in 4096 512 16384; do
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-count 40 $(cmd $t) \
    > "$W/ncu-$t.log" 2>&1
done
for t in 4096 16384; do
  STRATA_PF_FUSED_TILE=small timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10 \
    --launch-skip 2 --launch-count 4 $(cmd $t) > "$W/ncu-small-$t.log" 2>&1
done
mark ncu
{ command -v nsys || ls /usr/local/cuda/bin /opt/nvidia 2>/dev/null | grep -i nsys; } > "$W/nsys-where.txt" 2>&1
NSYS=$(command -v nsys || ls -d /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [[ -n "$NSYS" ]]; then
  for t in 4096 512; do
    timeout 150 "$NSYS" profile --trace=cuda --sample=none --cpuctxsw=none -o "$W/rep-$t" $(cmd $t) > "$W/nsys-$t.log" 2>&1
    timeout 100 "$NSYS" stats --report cuda_gpu_trace --format csv -o "$W/trace-$t" "$W/rep-$t.nsys-rep" >> "$W/nsys-$t.log" 2>&1
    timeout 100 "$NSYS" stats --report cuda_api_sum --format csv -o "$W/api-$t" "$W/rep-$t.nsys-rep" >> "$W/nsys-$t.log" 2>&1
    rm -f "$W/rep-$t.sqlite"
  done
fi
mark nsys
cp "$OUT/info.txt" "$W/"
{ cat "$W/bench.log"; for t in 4096 512 16384; do echo "=== ncu T=$t"; grep -E "^  [a-zA-Z_].*\(|duration" "$W/ncu-$t.log" | head -90; done
  for t in 4096 16384; do echo "=== ncu 64-pair tile T=$t"; grep -E "^  [a-zA-Z_].*\(|duration" "$W/ncu-small-$t.log"; done
  cat "$W/nsys-where.txt"; } > "$OUT/summary.txt"
tar czf "$OUT/c73.tgz" -C "$W" .
