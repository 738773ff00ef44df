#!/usr/bin/env bash
# Call 14: the GPU tests that reach the q10 Hopper kernels, built here from aec801e (whose kernels
# are c581f61's), the demo, and one bench cell beside the bf16 baseline. Each step writes its own
# file under $OUT.
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
for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test block_cuda_test \
         cuda_arguments_test arm_matrix_test; do
  echo "=== $t"; timeout 100 bin-run/$t --gtest_brief=1 2>&1 | tail -4; echo "rc=${PIPESTATUS[0]}"
  mark $t
done > "$OUT/tests.log" 2>&1
timeout 60 bin-run/strata-moe demo > "$OUT/demo.log" 2>&1; echo "demo rc=$?" >> "$OUT/info.txt"; mark demo
timeout 60 bin-run/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 > "$OUT/bench.log" 2>&1; mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
