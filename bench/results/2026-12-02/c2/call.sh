#!/usr/bin/env bash
# Call 2: one device call over binaries built elsewhere (.device-probes/bin/*.xz): base (4440601),
# new (a79ed47) and var (a79ed47 with the IQ3_S gate/up and Q2_0 down translation units of
# variants.patch, sm_90a only; STRATA_Q10_VARIANT picks the variant at run time).
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
# A run is a binary (strata-moe-NAME) or the variant binary with STRATA_Q10_VARIANT=NAME.
variants="cfg_a cfg_b cfg_c pair dreg56 dn"
runs4096="base new $variants"
echo "runs: $runs4096 cdu" >> "$OUT/info.txt"
exe_of() { case $1 in base|new) echo "bin-run/strata-moe-$1" ;; *) echo "bin-run/strata-moe-var" ;; esac; }
env_of() { case $1 in base|new) echo "STRATA_Q10_VARIANT=" ;; *) echo "STRATA_Q10_VARIANT=$1" ;; esac; }
bin_of() { echo "env $(env_of $1) $(exe_of $1)"; }
for t in bin-run/*_test; do
  echo "=== $t"; timeout 150 "$t" --gtest_brief=1; echo "rc=$?"
done > "$OUT/tests.log" 2>&1
mark tests
ab() {  # ab RUN ROUTING ARGS...
  local bin; bin=$(bin_of $1); local routing=$2; shift 2
  timeout 60 $bin bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing $routing --layers 2 --cells 3 --quiet "$@"
}
for r in 1 2; do for tree in $runs4096; do
  echo "=== $tree r$r T=4096"; ab $tree uniform --tokens 4096 --chunk 4096
done; done > "$OUT/ab4096.log" 2>&1
mark ab4096
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
for tree in new $variants; do
  echo "=== $tree"
  env $(env_of $tree) timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
    $(exe_of $tree) bench --backend cuda --arms fused,fused --numerics q10 --preset qwen35-a3b --routing uniform \
    --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
done > "$OUT/kernels.log" 2>&1
mark ncu
for tree in base new cdu; do
  echo "=== $tree T=512"; ab $tree uniform --tokens 512 --chunk 512
done > "$OUT/ab512.log" 2>&1
mark ab512
for tree in new cfg_a pair dn; do
  echo "=== $tree T=16384"; ab $tree uniform --tokens 16384 --chunk 16384
  echo "=== $tree skewed T=4096"; ab $tree skewed --tokens 4096 --chunk 4096
done > "$OUT/ab-other.log" 2>&1
mark ab-other
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*.*_small' --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
