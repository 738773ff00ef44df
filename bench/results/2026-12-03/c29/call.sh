#!/usr/bin/env bash
# Call 29: TMA boxes for weight rows that are no whole 16-byte units (the map's rows are groups of
# 16 / gcd(row bytes, 16) rows; one box per 16-byte phase of the rows). Binaries built off the
# device (sm_90a only): grp.tar.xz (bin-run/grp/: strata-moe and every GPU test of the change),
# base.tar.xz (bin-run/base/: strata-moe of call 28's tree, da6d286, for the A/B). Every log goes
# into logs.tgz beside the summaries.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
G=bin-run/grp
gpu_tests="fused_q10_test arm_matrix_test block_cuda_test c_api_engine_test cuda_arguments_test cuda_pipeline_test
  cuda_production_test decode_device_test device_decoder_gpu_test f16_mma_exact_test hopper_q10_decode_test
  prefill_fused_iq_test prefill_fused_iq_wmma_test quantize_q10_test wgmma_probe_test"
{ for t in $gpu_tests; do
    ( timeout 300 $G/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done; wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck Hopper, every format's small aligned cases (TMA by 16-byte phases, partial stage) and gpt-oss"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $G/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*_small_aligned*:HopperFormats/*gpt_oss*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
tar czf "$OUT/logs.tgz" -C "$W" .
cell() {  # cell BINDIR T PRESET [GATE DOWN [EXTRA...]]
  local dir=$1 t=$2 preset=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && { fmt="--gate-up $1 --down $2"; shift 2; }
  timeout 90 $dir/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $preset \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt "$@" 2>&1 | grep -E "^A |^B "
}
{ for round in 1; do for b in base grp; do
    echo "=== round $round $b gpt-oss-120b T=4096 mxfp4"; cell bin-run/$b 4096 gpt-oss-120b mxfp4 mxfp4
    [[ $round == 1 ]] && { echo "=== round $round $b qwen35-a3b T=4096 q4_K q6_K"; cell bin-run/$b 4096 qwen35-a3b q4_K q6_K; }
    [[ $round == 1 ]] && { echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0"; cell bin-run/$b 4096 qwen35-a3b; }
  done; done
  for b in base grp; do for t in 512; do
    echo "=== $b qwen35-a3b T=$t iq1_s iq1_s"; cell bin-run/$b $t qwen35-a3b iq1_s iq1_s
  done; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
kern() {  # kern BINDIR PRESET D F GATE DOWN
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel --launch-skip 4 \
    --launch-count 4 $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $2 \
    --d $3 --ffn $4 --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 --gate-up $5 \
    --down $6 2>&1 | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
}
{ for b in base grp; do
    echo "=== $b gpt-oss-120b mxfp4"; kern bin-run/$b gpt-oss-120b 2880 2880 mxfp4 mxfp4
  done
  echo "=== grp qwen35-a3b d=2048 mxfp4 (TMA)"; kern $G qwen35-a3b 2048 512 mxfp4 mxfp4
  echo "=== grp qwen35-a3b d=2048 mxfp4, STRATA_Q10_RAW_COPY=rows"
  STRATA_Q10_RAW_COPY=rows kern $G qwen35-a3b 2048 512 mxfp4 mxfp4
} > "$OUT/ncu.log" 2>&1
mark ncu
tar czf "$OUT/logs.tgz" -C "$W" .
