#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz, sm_90a code inside): the
# GPU tests of this tree, the q10 fused-hopper A/B of this tree's strata-moe against the base tree's,
# the bf16 baseline, every kernel's duration and a memcheck, in that order (the call may be cut
# short; each step writes its own file under $OUT).
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
for t in bin-run/*_test; do
  echo "=== $t"; timeout 150 "$t" --gtest_brief=1; echo "rc=$?"
done > "$OUT/tests.log" 2>&1
mark tests
ab() {  # ab TREE ARGS...
  local bin=bin-run/strata-moe-$1; shift
  timeout 60 $bin bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet "$@"
}
for r in 1 2; do for tree in base new; do
  echo "=== $tree r$r T=4096"; ab $tree --tokens 4096 --chunk 4096
done; done > "$OUT/ab4096.log" 2>&1
mark ab4096
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
  bin-run/strata-moe-new bench --backend cuda --arms fused,fused --numerics q10 --preset qwen35-a3b --routing uniform \
  --tokens 4096 --chunk 4096 --layers 1 --cells 1 > "$OUT/kernels.log" 2>&1
mark ncu
for tree in base new; do
  echo "=== $tree T=512,16384"; ab $tree --tokens 16384 --chunk 512,16384
  echo "=== $tree skewed T=4096"; ab $tree --tokens 4096 --chunk 4096 --routing skewed
done > "$OUT/ab-other.log" 2>&1
mark ab-other
for p in qwen3-30b flash-next; do for tree in base new; do
  echo "=== $tree $p T=4096"
  timeout 60 bin-run/strata-moe-$tree bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $p \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096
done; done > "$OUT/presets.log" 2>&1
mark presets
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*.*_small' --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
