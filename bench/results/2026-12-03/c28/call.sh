#!/usr/bin/env bash
# Call 28: the q10 Hopper kernels with a partial last stage (a row of K values that is no multiple
# of the stage ends in a stage of the chunks left; the 64-value short plan removed). Binaries built
# off the device (sm_90a only): new.tar.xz (bin-new/: strata-moe and every GPU test of the change),
# head.tar.xz (bin-run/: strata-moe of 8f07586, for the A/B). Every log goes into logs.tgz beside
# the summaries (a call brings back at most 8 files: call 27's per-test logs did not come back).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
mkdir -p bin-new && mv bin-run/new/* bin-new/
W=$(mktemp -d)
gpu_tests="fused_q10_test arm_matrix_test block_cuda_test c_api_engine_test cuda_arguments_test cuda_pipeline_test
  cuda_production_test decode_device_test device_decoder_gpu_test f16_mma_exact_test hopper_q10_decode_test
  prefill_fused_iq_test prefill_fused_iq_wmma_test quantize_q10_test wgmma_probe_test"
{ for t in $gpu_tests; do
    ( timeout 300 bin-new/$t --gtest_brief=1 > "$W/test-new-$t.log" 2>&1; echo "rc=$?" >> "$W/test-new-$t.log" ) &
  done; wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|tests? ran|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck Hopper, every format's small (partial last stage) cases and gpt-oss"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 bin-new/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*_small*:HopperFormats/*gpt_oss*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck Hopper, MXFP4 and Q4_1 small"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 bin-new/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_mxfp4_small*:HopperFormats/*down_mxfp4_small*:HopperFormats/*gate_up_q4_1_small*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BINDIR T PRESET [GATE DOWN [EXTRA...]]
  local dir=$1 t=$2 preset=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && { fmt="--gate-up $1 --down $2"; shift 2; }
  timeout 90 $dir/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $preset \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt "$@" 2>&1 | grep -E "^A |^B "
}
{ for round in 1 2; do for b in bin-run bin-new; do
    echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0"; cell $b 4096 qwen35-a3b
    echo "=== round $round $b gpt-oss-120b T=4096 mxfp4"; cell $b 4096 gpt-oss-120b mxfp4 mxfp4
  done; done
  for b in bin-run bin-new; do
    echo "=== $b gpt-oss-120b T=512 mxfp4"; cell $b 512 gpt-oss-120b mxfp4 mxfp4
    echo "=== $b gpt-oss-120b T=16384 mxfp4"; cell $b 16384 gpt-oss-120b mxfp4 mxfp4
    echo "=== $b qwen35-a3b d=2112 f=576 T=4096 mxfp4"; cell $b 4096 qwen35-a3b mxfp4 mxfp4 --d 2112 --ffn 576
  done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for b in bin-run bin-new; do
    for g in "gpt-oss-120b 2880 2880" "qwen35-a3b 2112 576" "qwen35-a3b 2048 512"; do
      set -- $g
      echo "=== $b $1 d=$2 f=$3 mxfp4"
      timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel --launch-skip 4 \
        --launch-count 4 $b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $1 \
        --d $2 --ffn $3 --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 --gate-up mxfp4 \
        --down mxfp4 2>&1 | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
    done
  done
} > "$OUT/ncu.log" 2>&1
mark ncu
timeout 150 ncu --kernel-name regex:hopper_q10_kernel --launch-skip 2 --launch-count 1 --set full --import-source no -f \
  -o "$W/t512" bin-new/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens 512 --chunk 512 > "$W/ncu-t512.log" 2>&1
ncu -i "$W/t512.ncu-rep" --page details > "$W/t512-details.txt" 2>&1
ncu -i "$W/t512.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$W/t512-sass.csv.gz"
rm -f "$W/t512.ncu-rep"
mark ncu-full
tar czf "$OUT/logs.tgz" -C "$W" .
