#!/usr/bin/env bash
# Call 15: landed (aec801e) against new (the pipelined fold) and the fused_q10_test of new, on
# binaries built elsewhere (.device-probes/bin/*.xz). Each step writes its own file under $OUT.
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
{ echo "=== fused_q10_test (new), the decoder-warpgroup formats and the edge cases"
  timeout 90 bin-run/fused_q10_test --gtest_brief=1 \
    --gtest_filter='*iq3_s*:*q2_0*:*q6_K*:*q8_0*:*q4_K*:Edges/*'; echo "rc=$?"; } > "$OUT/tests.log" 2>&1
mark tests
ab() {  # ab TREE T ARGS...
  local tree=$1 t=$2; shift 2
  timeout 40 bin-run/strata-moe-$tree bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset qwen35-a3b --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t "$@"
}
{ for r in 1 2; do for tree in landed new; do echo "=== $tree r$r T=4096"; ab $tree 4096; done; done
} > "$OUT/ab.log" 2>&1
mark ab4096
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for tree in landed new; do
    echo "=== $tree"
    timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10 --launch-skip 8 \
      --launch-count 4 bin-run/strata-moe-$tree bench --backend cuda --arms fused-hopper,fused-hopper --numerics q10 \
      --preset qwen35-a3b --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 |
      grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
  done
} > "$OUT/kernels.log" 2>&1
mark ncu
{ timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*iq3_s_small:HopperFormats/*q2_0_small:HopperFormats/*q6_K_small:HopperFormats/*q8_0_small:HopperFormats/*q4_K_small'
  echo "memcheck rc=$?"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 1 bin-run/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small'; echo "racecheck rc=$?"
} > "$OUT/sanitize.log" 2>&1
mark sanitize
{ for m in "q4_K q6_K" "q8_0 q8_0"; do
    set -- $m
    for tree in landed new; do echo "=== $tree $1 + $2 T=4096"; ab $tree 4096 --gate-up $1 --down $2; done
  done
  for tree in landed new; do echo "=== $tree T=16384"; ab $tree 16384; done
} > "$OUT/ab-other.log" 2>&1
mark ab-other
