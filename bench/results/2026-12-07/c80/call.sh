#!/usr/bin/env bash
# Call 80: the items of a unit share their pair tile's activation stages ("res", main c26dba7 +
# HopperQ10Walk, the 64-pair down tile's ring of four 128-value activation stages) against main's
# kernels ("final", 6eb00f7's binary, call 79). GPU tests of res, its argument and arm-matrix
# tests, interleaved cells (res at units of 1, 2, 4 and 8 column blocks through
# STRATA_Q10_ACT_GROUP), the bf16 baseline, memcheck/racecheck of the new cases, ncu durations.
# "res128" = res + the 128-pair down tile's ring of four activation stages beside three raw ones
# (where its blocks fit: Q2_0), for the cells whose down runs that tile (T = 8192, 16384).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
F=bin-run/final R=bin-run/res R8=bin-run/res128
mkdir -p "$W/res" "$W/res128"
gpu_tests $R "$W/res" > "$W/tests.log" 2>&1 &
gpu_tests $R8 "$W/res128" > "$W/tests-res128.log" 2>&1 &
{ timeout 60 $R/cuda_arguments_test --gtest_brief=1 > "$W/res/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/res/test-cuda_arguments_test.log"
  timeout 240 $R/arm_matrix_test --gtest_brief=1 > "$W/res/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/res/test-arm_matrix_test.log"; } &
wait
mark tests
tar czf "$OUT/c80.tgz" -C "$W" .
cell() { local label=$1 bin=$2 group=$3; shift 3
  echo "=== $label $bin group=$group"
  ( [[ $group != - ]] && export STRATA_Q10_ACT_GROUP=$group; hopper_cell bin-run/$bin "$@" ); }
{ cell "T=4096" final - qwen35-a3b 4096
  cell "T=4096" res - qwen35-a3b 4096
  cell "T=4096" res 1 qwen35-a3b 4096
  cell "T=4096" res 2 qwen35-a3b 4096
  cell "T=4096" res 8 qwen35-a3b 4096
  cell "T=512" final - qwen35-a3b 512
  cell "T=512" res - qwen35-a3b 512
  cell "T=512" res 1 qwen35-a3b 512
  cell "T=16384" final - qwen35-a3b 16384
  cell "T=16384" res - qwen35-a3b 16384
  cell "T=16384" res128 - qwen35-a3b 16384
  cell "T=8192" final - qwen35-a3b 8192
  cell "T=8192" res128 - qwen35-a3b 8192
  cell "qwen3-30b T=4096" final - qwen3-30b 4096
  cell "qwen3-30b T=4096" res - qwen3-30b 4096
  cell "Q4_K+Q6_K T=4096" final - qwen35-a3b 4096 --gate-up q4_K --down q6_K
  cell "Q4_K+Q6_K T=4096" res - qwen35-a3b 4096 --gate-up q4_K --down q6_K
  cell "T=4096 again" res - qwen35-a3b 4096
  cell "T=4096 again" final - qwen35-a3b 4096
  cell "T=16384 again" res128 - qwen35-a3b 16384
  cell "T=16384 again" final - qwen35-a3b 16384; } > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $R/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_q2_0_shared_codes:HopperFormats/*gate_up_iq3_s_shared_codes:HopperFormats/*down_q4_K_shared_codes' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $R/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_q2_0_shared_codes' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens $2 --chunk $2 2>&1 | grep -E "hopper_q10|duration|inst_executed|bytes" | sed 's/(HopperQ10Args).*//'; }
{ for t in 4096 512; do echo "=== T=$t final"; k $F $t; echo "=== T=$t res"; k $R $t; done
  echo "=== T=16384 final"; k $F 16384; echo "=== T=16384 res128"; k $R8 16384; } > "$W/kernels.log" 2>&1
mark kernels
{ hopper_resources res $R; hopper_resources res128 $R8; } > "$W/resources.log" 2>&1
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/res/test-cuda_arguments_test.log"
  echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/res/test-arm_matrix_test.log" | head -20
  echo "##### res128"; cat "$W/tests-res128.log"
  cat "$W/bench.log" "$W/sanitize.log"; tail -10 "$W/bf16.log"; cat "$W/kernels.log" "$W/resources.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c80.tgz" -C "$W" .
