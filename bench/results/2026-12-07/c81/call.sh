#!/usr/bin/env bash
# Call 81: "walk" (call 80's res128 with the item walk's divisions taken out: units step by
# gridDim.x with a carry) against main's kernels ("final", 6eb00f7's binary): its GPU tests (the
# fused q10 test in four shards), interleaved cells, the bf16 baseline, ncu durations at T = 4096,
# the kernels' stack and local memory. The summary grows after each step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
F=bin-run/final N=bin-run/walk
S="$OUT/summary.txt"
mkdir -p "$W/walk"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 300 $N/fused_q10_test --gtest_brief=1 > "$W/walk/test-fused_q10_test-$i.log" 2>&1
    echo "rc=$?" >> "$W/walk/test-fused_q10_test-$i.log" ) &
done
for t in hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test cuda_arguments_test arm_matrix_test; do
  ( timeout 300 $N/$t --gtest_brief=1 > "$W/walk/test-$t.log" 2>&1; echo "rc=$?" >> "$W/walk/test-$t.log" ) &
done
wait
mark tests
for t in "$W"/walk/test-*.log; do
  echo "=== $(basename "$t" .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" "$t" | head -20
done > "$S"
hopper_resources walk $N >> "$S" 2>&1
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
{ cell "T=4096" final qwen35-a3b 4096
  cell "T=4096" walk qwen35-a3b 4096
  cell "T=16384" final qwen35-a3b 16384
  cell "T=16384" walk qwen35-a3b 16384
  cell "T=512" final qwen35-a3b 512
  cell "T=512" walk qwen35-a3b 512
  cell "qwen3-30b T=4096" final qwen3-30b 4096
  cell "qwen3-30b T=4096" walk qwen3-30b 4096
  cell "T=4096 again" walk qwen35-a3b 4096
  cell "T=4096 again" final qwen35-a3b 4096; } > "$W/bench.log" 2>&1
mark bench
cat "$W/bench.log" >> "$S"
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_bytes.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 2 \
    $N/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration|inst_executed|bytes" | sed 's/(HopperQ10Args).*//' > "$W/kernels.log"
mark kernels
{ echo "=== ncu walk T=4096"; cat "$W/kernels.log"; } >> "$S"
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c81.tgz" -C "$W" .
