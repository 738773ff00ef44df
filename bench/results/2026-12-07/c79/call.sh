#!/usr/bin/env bash
# Call 79: calls 77 and 78 in one device call. Binaries: "nan" (main before the quantise kernel,
# down's own tile and the capture fix: c72's), "final" (main 6eb00f7) and "defer" (branch
# deferred-epilogue, 8a2fca4 = 6eb00f7 + the deferred gate/up epilogue). GPU tests of final and
# defer, the argument and arm-matrix tests of final, interleaved cells, the bf16 baseline,
# memcheck/racecheck of defer's IQ3_S gate/up, ncu durations of the product kernels.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
N=bin-run/nan F=bin-run/final D=bin-run/defer
mkdir -p "$W/final" "$W/defer"
gpu_tests $F "$W/final" > "$W/tests-final.log" 2>&1 &
gpu_tests $D "$W/defer" > "$W/tests-defer.log" 2>&1 &
{ timeout 60 $F/cuda_arguments_test --gtest_brief=1 > "$W/final/test-cuda_arguments_test.log" 2>&1; echo "rc=$?" >> "$W/final/test-cuda_arguments_test.log"
  timeout 240 $F/arm_matrix_test --gtest_brief=1 > "$W/final/test-arm_matrix_test.log" 2>&1; echo "rc=$?" >> "$W/final/test-arm_matrix_test.log"; } &
wait
mark tests
tar czf "$OUT/c79.tgz" -C "$W" .
cells() { local label=$1 bins=$2; shift 2
  for b in $bins; do echo "=== $label $b"; hopper_cell bin-run/$b "$@"; done; }
{ cells "T=4096" "nan final defer" qwen35-a3b 4096
  cells "T=512" "nan final defer" qwen35-a3b 512
  cells "T=16384" "nan final defer" qwen35-a3b 16384
  cells "Q4_K+Q6_K T=4096" "final defer" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  cells "qwen3-30b T=4096" "final defer" qwen3-30b 4096
  cells "T=4096 again" "defer final nan" qwen35-a3b 4096; } > "$W/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*gate_up_q4_K_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$W/sanitize.log" 2>&1
mark sanitize
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "hopper_q10|duration|inst_executed" | sed 's/(HopperQ10Args).*//'; }
{ echo "=== final"; k $F; echo "=== defer"; k $D; } > "$W/kernels.log" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
{ cat "$W/tests-final.log"; echo "=== cuda_arguments"; grep -E "^\[  PASSED|^\[  FAILED|rc=" "$W/final/test-cuda_arguments_test.log"
  echo "=== arm_matrix"; grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Which is" "$W/final/test-arm_matrix_test.log" | head -20
  echo "##### defer"; cat "$W/tests-defer.log"
  cat "$W/bench.log" "$W/sanitize.log"; tail -10 "$W/bf16.log"; cat "$W/kernels.log"; } > "$OUT/summary.txt"
tar czf "$OUT/c79.tgz" -C "$W" .
