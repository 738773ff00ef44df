#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz): the decode tests and the
# three formats' layer tests, their mixes against the tree before (strata-moe-old) at qwen35-a3b
# T = 4096, memcheck, in that order (each step writes its own file under $OUT).
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
{ timeout 60 bin-run/hopper_q10_decode_test --gtest_brief=1; echo "rc=$?"
  timeout 90 bin-run/fused_q10_test --gtest_brief=1 --gtest_filter='HopperFormats/*q5_K*:HopperFormats/*q2_K*:HopperFormats/*q3_K*:Formats/*q5_K*:Formats/*q2_K*:Formats/*q3_K*'
  echo "rc=$?"
} > "$OUT/tests-formats.log" 2>&1
mark tests-formats
ab() {  # ab BINARY GATE_UP DOWN
  timeout 40 bin-run/$1 bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 --gate-up $2 --down $3
}
for m in "iq3_s q2_0" "q5_K q6_K" "q3_K q5_K" "q2_K q3_K"; do
  set -- $m
  for b in strata-moe strata-moe-old; do echo "=== $b $1 + $2 T=4096"; ab $b $1 $2; done
done > "$OUT/mixes.log" 2>&1
mark mixes
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*q5_K_small:HopperFormats/*q2_K_small:HopperFormats/*q3_K_small' --gtest_brief=1 > "$OUT/sanitize.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
