#!/usr/bin/env bash
# Call 13: one device call over binaries built elsewhere (.device-probes/bin/*.xz): base (e946298),
# mid (c581f61), new (mid + the fold's scale products formed while the products run) and the
# fused_q10_test of new. Each step writes its own file under $OUT.
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
{ echo "=== fused_q10_test (new)"; timeout 150 bin-run/fused_q10_test --gtest_brief=1; echo "rc=$?"; } > "$OUT/tests.log" 2>&1
mark tests
ab() {  # ab TREE PRESET ROUTING T ARGS...
  local tree=$1 preset=$2 routing=$3 t=$4; shift 4
  timeout 60 bin-run/strata-moe-$tree bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $preset --routing $routing --layers 2 --cells 3 --quiet --tokens $t --chunk $t "$@"
}
{ for r in 1 2; do for tree in base mid new; do echo "=== $tree r$r T=4096"; ab $tree qwen35-a3b uniform 4096; done; done
} > "$OUT/ab.log" 2>&1
mark ab4096
{ for tree in base mid new; do
    echo "=== $tree"
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
      bin-run/strata-moe-$tree bench --backend cuda --arms fused-hopper,fused-hopper --numerics q10 --preset qwen35-a3b \
      --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
  done
} > "$OUT/kernels.log" 2>&1
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{
  for m in "q4_K q6_K" "q8_0 q8_0" "iq4_xs iq4_xs" "mxfp4 mxfp4" "iq2_xxs iq4_nl"; do
    set -- $m
    for tree in base mid new; do echo "=== $tree $1 + $2 T=4096"; ab $tree qwen35-a3b uniform 4096 --gate-up $1 --down $2; done
  done
  for t in 512 16384; do for tree in base new; do echo "=== $tree T=$t"; ab $tree qwen35-a3b uniform $t; done; done
  for tree in base new; do echo "=== $tree skewed T=4096"; ab $tree qwen35-a3b skewed 4096; done
  for p in qwen3-30b flash-next; do for tree in base new; do echo "=== $tree $p T=4096"; ab $tree $p uniform 4096; done; done
  for m in "q4_K q6_K" "iq4_xs iq4_xs" "q8_0 q8_0"; do
    set -- $m
    for t in 512 16384; do echo "=== new $1 + $2 T=$t"; ab new qwen35-a3b uniform $t --gate-up $1 --down $2; done
  done
} > "$OUT/ab-other.log" 2>&1
mark ab-other
{ timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
    --gtest_filter='HopperFormats/*_small' --gtest_brief=1; echo "memcheck rc=$?"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 bin-run/fused_q10_test \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small' --gtest_brief=1; echo "racecheck rc=$?"
} > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump -sass .device-probes/bin/gate_up_iq3s.cubin 2>&1 | gzip > "$OUT/sass-gate-up-iq3s.txt.gz"
mark sass
