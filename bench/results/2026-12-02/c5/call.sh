#!/usr/bin/env bash
# One device call over the landed tree's strata-moe (.device-probes/bin/strata-moe-final.xz): the q10
# fused-hopper bench on the qwen3-30b and flash-next presets at T = 4096, and the bf16 baseline.
set -u
cd "$(dirname "$0")/.."
mkdir -p deps-root bin-run
dpkg -x deps/libfmt9_*.deb deps-root
export LD_LIBRARY_PATH=$PWD/deps-root/usr/lib/x86_64-linux-gnu PATH=/usr/local/cuda/bin:$PATH
for f in .device-probes/bin/*.xz; do xz -d -c "$f" > "bin-run/$(basename "$f" .xz)" & done; wait
chmod +x bin-run/*
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/info.txt"
t0=$SECONDS
mark() { echo "$1 $((SECONDS - t0)) s" >> "$OUT/info.txt"; }
for p in qwen3-30b flash-next qwen35-a3b; do
  echo "=== final $p T=4096"
  timeout 60 bin-run/strata-moe-final bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $p \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096
done > "$OUT/presets.log" 2>&1
mark presets
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
