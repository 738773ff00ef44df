#!/usr/bin/env bash
# One device call over binaries built elsewhere (.device-probes/bin/*.xz): the tokens-on-N kernels'
# tests, the bench of the tree against its own column kernels (STRATA_Q10_HOPPER_KERNELS=columns),
# the bf16 baseline, the kernels' durations, memcheck / racecheck, then the full GPU tests, in
# that order (the call may be cut short; each step writes its own file under $OUT, eight at most).
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
    --gtest_filter='Edges/*Hopper*:HopperFormats/*iq3_s*:HopperFormats/*q2_0*:FusedQ10Arm.*'; echo "rc=$?"
} > "$OUT/tests-tn.log" 2>&1
mark tests-tn
ab() {  # ab KERNELS ROUTING ARGS...
  local kernels=$1 routing=$2; shift 2
  STRATA_Q10_HOPPER_KERNELS=$kernels timeout 60 bin-run/strata-moe bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing $routing --layers 2 --cells 3 --quiet "$@"
}
for r in 1 2; do for k in tn columns; do
  echo "=== $k r$r T=4096"; ab $k uniform --tokens 4096 --chunk 4096
done; done > "$OUT/ab4096.log" 2>&1
mark ab4096
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
for k in tn columns; do
  echo "=== $k"
  STRATA_Q10_HOPPER_KERNELS=$k timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 20 \
    bin-run/strata-moe bench --backend cuda --arms fused,fused --numerics q10 --preset qwen35-a3b --routing uniform \
    --tokens 4096 --chunk 4096 --layers 1 --cells 1 2>&1 | grep -E '^  [a-z ]*(void|strata)|gpu__time_duration'
done > "$OUT/kernels.log" 2>&1
mark ncu
timeout 120 ncu --clock-control none -k regex:hopper_q10_tn_kernel --launch-skip 4 --launch-count 2 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --section ComputeWorkloadAnalysis bin-run/strata-moe bench --backend cuda --arms fused,fused --numerics q10 \
  --preset qwen35-a3b --routing uniform --tokens 4096 --chunk 4096 --layers 1 --cells 1 >> "$OUT/kernels.log" 2>&1
mark profile
for k in tn columns; do
  echo "=== $k T=512"; ab $k uniform --tokens 512 --chunk 512
  echo "=== $k T=16384"; ab $k uniform --tokens 16384 --chunk 16384
done > "$OUT/ab-other.log" 2>&1
echo "=== tn skewed T=4096" >> "$OUT/ab-other.log"; ab tn skewed --tokens 4096 --chunk 4096 >> "$OUT/ab-other.log" 2>&1
mark ab-other
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*iq3_s_small:HopperFormats/*q2_0_small:Edges/*Hopper*/t17_skewed:FusedQ10Arm.HopperTokensOnN*' --gtest_brief=1 > "$OUT/sanitize.log" 2>&1
echo "memcheck rc=$?" >> "$OUT/info.txt"; mark memcheck
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 bin-run/fused_q10_test \
  --gtest_filter='HopperFormats/*iq3_s_small:HopperFormats/*q2_0_small' --gtest_brief=1 >> "$OUT/sanitize.log" 2>&1
echo "racecheck rc=$?" >> "$OUT/info.txt"; mark racecheck
for t in bin-run/fused_q10_test bin-run/cuda_pipeline_test; do
  echo "=== $t"; timeout 150 "$t" --gtest_brief=1; echo "rc=$?"
done > "$OUT/tests.log" 2>&1
mark tests
