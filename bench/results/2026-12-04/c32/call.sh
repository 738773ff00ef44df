#!/usr/bin/env bash
# Call 32: the GPU tests of the q8 arms after their ProductArgs moved into one helper
# (src/cuda/blocks/layer_product_args.hpp). Binaries built off the device (sm_90a only):
# arg.tar.xz (bin-run/arg/). Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
G=bin-run/arg
gpu_tests="fused_q10_test arm_matrix_test block_cuda_test c_api_engine_test cuda_arguments_test cuda_pipeline_test
  cuda_production_test prefill_fused_iq_test prefill_fused_iq_wmma_test"
{ for t in $gpu_tests; do
    ( timeout 300 $G/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
{ for arms in production,fused-hopper fused-hopper,fused; do
    echo "=== q8 $arms qwen35-a3b T=4096 iq3_s q2_0"
    timeout 120 $G/strata-moe bench --backend cuda --numerics q8 --arms $arms --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B "
  done
} > "$OUT/bench.log" 2>&1
mark bench
tar czf "$OUT/logs.tgz" -C "$W" .
