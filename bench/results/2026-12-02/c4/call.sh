#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz): the q10 tests of the tree
# to land (strata-moe-final, fused_q10_test, cuda_pipeline_test), its bench beside the fold-overlap
# variant fo, the bf16 baseline, the q10 kernels' durations, the format mixes, memcheck and
# racecheck, in that order (the call may be cut short; each step writes its own file under $OUT).
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
ab() {  # ab TREE ROUTING ARGS...
  local bin=bin-run/strata-moe-$1 routing=$2; shift 2
  timeout 60 $bin bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing $routing --layers 2 --cells 3 --quiet "$@"
}
for r in 1 2; do for tree in final fo; do
  echo "=== $tree r$r T=4096"; ab $tree uniform --tokens 4096 --chunk 4096
done; done > "$OUT/ab4096.log" 2>&1
mark ab4096
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
for tree in final fo; do
  echo "=== $tree"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
    bin-run/strata-moe-$tree bench --backend cuda --arms fused,fused --numerics q10 --preset qwen35-a3b --routing uniform \
    --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
done > "$OUT/kernels.log" 2>&1
mark ncu
for tree in final fo; do
  echo "=== $tree T=512"; ab $tree uniform --tokens 512 --chunk 512
  echo "=== $tree T=16384"; ab $tree uniform --tokens 16384 --chunk 16384
done > "$OUT/ab-other.log" 2>&1
echo "=== final skewed T=4096" >> "$OUT/ab-other.log"; ab final skewed --tokens 4096 --chunk 4096 >> "$OUT/ab-other.log" 2>&1
mark ab-other
for m in "iq4_xs iq4_xs" "mxfp4 mxfp4" "q4_K q6_K" "q8_0 q8_0" "iq2_xxs iq4_nl"; do set -- $m
  echo "=== final $1 + $2 T=4096"; ab final uniform --tokens 4096 --chunk 4096 --gate-up $1 --down $2
done > "$OUT/mixes.log" 2>&1
mark mixes
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*.*_small' --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*iq3_s_small:HopperFormats/*q2_0_small:HopperFormats/*iq4_xs_small:HopperFormats/*tq1_0_small' --gtest_brief=1 > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$?" >> "$OUT/info.txt"; mark racecheck
