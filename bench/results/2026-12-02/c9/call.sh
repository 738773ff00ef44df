#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz): the decode tests, the
# new decodes' mixes against the tree before them (strata-moe-old) at qwen35-a3b T = 4096, the
# bf16 baseline, memcheck, then the full q10 GPU tests, in that order (the call may be cut short;
# each step writes its own file under $OUT, eight at most).
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
  timeout 150 bin-run/fused_q10_test --gtest_brief=1 --gtest_filter='HopperFormats/*q8_0*:HopperFormats/*q4_0*:HopperFormats/*q4_1*:HopperFormats/*q5_0*:HopperFormats/*q5_1*:HopperFormats/*nvfp4*:HopperFormats/*iq3_xxs*:HopperFormats/*iq2_xs_*'
  echo "rc=$?"
} > "$OUT/tests-formats.log" 2>&1
mark tests-formats
ab() {  # ab BINARY GATE_UP DOWN
  timeout 60 bin-run/$1 bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 --gate-up $2 --down $3
}
for m in "iq3_s q2_0" "q8_0 q8_0" "q4_0 q4_0" "q4_1 q5_1" "q5_0 q5_0" "nvfp4 nvfp4" "iq3_xxs iq3_xxs" "iq2_xs iq2_xs"; do
  set -- $m
  for b in strata-moe strata-moe-old; do echo "=== $b $1 + $2 T=4096"; ab $b $1 $2; done
done > "$OUT/mixes.log" 2>&1
mark mixes
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*q8_0_small:HopperFormats/*q4_0_small:HopperFormats/*q5_1_small:HopperFormats/*nvfp4_small:HopperFormats/*iq3_xxs_small:HopperFormats/*iq2_xs_small' --gtest_brief=1 > "$OUT/sanitize.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
{ echo "=== fused_q10_test"; timeout 150 bin-run/fused_q10_test --gtest_brief=1; echo "rc=$?"; } > "$OUT/tests.log" 2>&1
mark tests
