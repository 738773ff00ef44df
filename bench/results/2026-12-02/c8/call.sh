#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz): the decode tests, the
# format mixes at qwen35-a3b T = 4096 (and gpt-oss-120b) beside IQ3_S + Q2_0, the bf16 baseline,
# the kernels' durations, T = 512 and 16384, memcheck, then the full GPU tests, in that order (the
# call may be cut short; each step writes its own file under $OUT, eight at most).
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
  timeout 150 bin-run/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*iq4*:HopperFormats/*mxfp4*:HopperFormats/*iq2_xxs*'; echo "rc=$?"
} > "$OUT/tests-formats.log" 2>&1
mark tests-formats
ab() {  # ab PRESET TOKENS GATE_UP DOWN
  timeout 90 bin-run/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $1 \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $2 --chunk $2 --gate-up $3 --down $4
}
mixes=("iq3_s q2_0" "iq4_xs iq4_xs" "mxfp4 mxfp4" "q4_K q6_K" "q8_0 q8_0" "iq2_xxs iq4_nl" "iq3_s q2_0")
for m in "${mixes[@]}"; do set -- $m; echo "=== $1 + $2 T=4096"; ab qwen35-a3b 4096 $1 $2; done > "$OUT/mixes4096.log" 2>&1
{ echo "=== gpt-oss-120b mxfp4 T=4096"; ab gpt-oss-120b 4096 mxfp4 mxfp4; } >> "$OUT/mixes4096.log" 2>&1
mark mixes4096
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
for m in "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "q4_K q6_K" "mxfp4 mxfp4"; do set -- $m
  echo "=== $1 + $2"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 10 \
    bin-run/strata-moe bench --backend cuda --arms fused,fused --numerics q10 --preset qwen35-a3b --routing uniform \
    --tokens 4096 --chunk 4096 --layers 1 --cells 1 --gate-up $1 --down $2 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
done > "$OUT/kernels.log" 2>&1
mark ncu
for T in 512 16384; do for m in "${mixes[@]:0:6}"; do set -- $m; echo "=== $1 + $2 T=$T"; ab qwen35-a3b $T $1 $2; done; done > "$OUT/mixes-other.log" 2>&1
mark mixes-other
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*iq4*_small:HopperFormats/*mxfp4_small:HopperFormats/*iq2_xxs_small' --gtest_brief=1 > "$OUT/sanitize.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
for t in bin-run/fused_q10_test bin-run/cuda_pipeline_test; do
  echo "=== $t"; timeout 150 "$t" --gtest_brief=1; echo "rc=$?"
done > "$OUT/tests.log" 2>&1
mark tests
