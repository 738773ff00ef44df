#!/usr/bin/env bash
# Call 30: the split producer (one thread moves the raw stages by TMA, 96 the activation stages;
# STRATA_Q10_PRODUCER=split) against the combined one, the #15 cells at T = 16384 after the TMA
# groups, and a full ncu profile of the IQ3_S gate/up kernel at T = 4096. Binaries built off the
# device (sm_90a only): spl.tar.xz (bin-run/spl/: strata-moe and every GPU test). Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
G=bin-run/spl
gpu_tests="fused_q10_test arm_matrix_test block_cuda_test c_api_engine_test cuda_arguments_test cuda_pipeline_test
  cuda_production_test decode_device_test device_decoder_gpu_test f16_mma_exact_test hopper_q10_decode_test
  prefill_fused_iq_test prefill_fused_iq_wmma_test quantize_q10_test wgmma_probe_test"
{ for t in $gpu_tests; do
    ( timeout 300 $G/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  ( STRATA_Q10_PRODUCER=split timeout 300 $G/fused_q10_test --gtest_brief=1 > "$W/test-split-fused_q10_test.log" 2>&1
    echo "rc=$?" >> "$W/test-split-fused_q10_test.log" ) &
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== racecheck Hopper split producer, small aligned q6_K / mxfp4 / iq3_s and gpt-oss"
  STRATA_Q10_PRODUCER=split timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 \
    $G/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*q6_K*small_aligned*:HopperFormats/*mxfp4*small_aligned*:HopperFormats/*gpt_oss*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
tar czf "$OUT/logs.tgz" -C "$W" .
cell() {  # cell T PRESET [GATE DOWN [EXTRA...]]
  local t=$1 preset=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && { fmt="--gate-up $1 --down $2"; shift 2; }
  timeout 120 $G/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $preset \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt "$@" 2>&1 | grep -E "^A |^B "
}
{ for mode in combined split; do
    p=""; [[ $mode == split ]] && p=split
    export STRATA_Q10_PRODUCER=$p
    echo "=== $mode qwen35-a3b T=4096 iq3_s q2_0"; cell 4096 qwen35-a3b
    echo "=== $mode qwen35-a3b T=512 iq3_s q2_0"; cell 512 qwen35-a3b
    echo "=== $mode qwen35-a3b T=4096 q4_K q6_K"; cell 4096 qwen35-a3b q4_K q6_K
    echo "=== $mode gpt-oss-120b T=4096 mxfp4"; cell 4096 gpt-oss-120b mxfp4 mxfp4
  done
  export STRATA_Q10_PRODUCER=
  echo "=== combined qwen35-a3b T=16384 iq3_s q2_0"; cell 16384 qwen35-a3b
  echo "=== combined qwen35-a3b T=16384 q4_K q6_K"; cell 16384 qwen35-a3b q4_K q6_K
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
kern() {  # kern T GATE DOWN
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel --launch-skip 4 \
    --launch-count 4 $G/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $1 --chunk $1 --gate-up $2 \
    --down $3 2>&1 | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
}
{ for mode in combined split; do
    p=""; [[ $mode == split ]] && p=split
    echo "=== $mode T=4096 iq3_s q2_0"; STRATA_Q10_PRODUCER=$p kern 4096 iq3_s q2_0
    echo "=== $mode T=512 iq3_s q2_0"; STRATA_Q10_PRODUCER=$p kern 512 iq3_s q2_0
  done
} > "$OUT/ncu.log" 2>&1
mark ncu
timeout 200 ncu --kernel-name regex:hopper_q10_kernel --launch-skip 2 --launch-count 1 --set full --import-source no -f \
  -o "$OUT/t4096" $G/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 > "$W/ncu-full.log" 2>&1
echo "rc=$?" >> "$W/ncu-full.log"
ncu -i "$OUT/t4096.ncu-rep" --page details > "$OUT/t4096-details.txt" 2>&1
ncu -i "$OUT/t4096.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$W/t4096-sass.csv.gz"
rm -f "$OUT/t4096.ncu-rep"
mark ncu-full
tar czf "$OUT/logs.tgz" -C "$W" .
