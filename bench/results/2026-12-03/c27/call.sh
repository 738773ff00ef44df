#!/usr/bin/env bash
# Call 27: the landed tree (8f07586) on every GPU test binary; two changes of the decoder-warpgroup
# tiles in one binary (strata-moe-new, fused_q10_test-new: 8f07586 + both, switched by the
# environment): an idle consumer (all 64 of its pairs padding: an expert's last few pairs) skips its
# products and epilogue (STRATA_Q10_IDLE=keep: it does not), and consumer 1 starts its first work
# item 0-3 chunks behind consumer 0 (STRATA_Q10_CONSUMER_LAG); where the 64-pair tile's gate/up
# spends its time at T = 512 (ncu --set full, SASS source page); the #15 cells not measured on the
# current kernels (T = 512 and 16384, gpt-oss-120b). Binaries built off the device (sm_90a only): head.tar.xz (strata-moe and the GPU
# tests of 8f07586), new.tar.xz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
{ for t in fused_q10_test arm_matrix_test block_cuda_test c_api_engine_test cuda_arguments_test cuda_pipeline_test \
      cuda_production_test decode_device_test device_decoder_gpu_test f16_mma_exact_test hopper_q10_decode_test \
      prefill_fused_iq_test prefill_fused_iq_wmma_test quantize_q10_test wgmma_probe_test; do
    ( timeout 240 bin-run/$t --gtest_brief=1 > "$OUT/test-$t.log" 2>&1; echo "rc=$?" >> "$OUT/test-$t.log" ) &
  done
  ( STRATA_Q10_CONSUMER_LAG=2 timeout 240 bin-run/fused_q10_test-new --gtest_brief=1 > "$OUT/test-new-lag2.log" 2>&1
    echo "rc=$?" >> "$OUT/test-new-lag2.log" ) &
  wait
  for t in "$OUT"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "PASSED|FAILED|SKIPPED \[|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
{ echo "=== memcheck Hopper, Q5_0, TQ1_0 down, Q4_K down (the consumers decode), small"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 bin-run/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*q5_0_small*:HopperFormats/*down_tq1_0_small*:HopperFormats/*down_q4_K_small*' 2>&1 | tail -4
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cell() {  # cell BIN T [GATE DOWN [PRESET]]
  local extra=""; [[ $# -ge 4 ]] && extra="--gate-up $3 --down $4"
  timeout 60 bin-run/strata-moe$1 bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset ${5:-qwen35-a3b} --routing uniform --layers 2 --cells 3 --quiet --tokens $2 --chunk $2 $extra 2>&1 | grep -E "^A |^B "
}
{ for round in 1 2; do
    for v in "keep 0" "skip 0" "skip 1" "skip 2" "skip 3"; do
      set -- $v
      echo "=== round $round idle $1 lag $2 iq3_s q2_0"; STRATA_Q10_IDLE=$1 STRATA_Q10_CONSUMER_LAG=$2 cell -new 4096
    done
    for v in "keep 0" "skip 0" "skip 2"; do
      set -- $v
      echo "=== round $round idle $1 lag $2 q4_K q6_K"; STRATA_Q10_IDLE=$1 STRATA_Q10_CONSUMER_LAG=$2 cell -new 4096 q4_K q6_K
    done
  done
  echo "=== head iq3_s q2_0"; cell "" 4096
  for v in "keep 0" "skip 0" "skip 2"; do
    set -- $v
    echo "=== idle $1 lag $2 iq3_s q2_0 T=16384"; STRATA_Q10_IDLE=$1 STRATA_Q10_CONSUMER_LAG=$2 cell -new 16384
  done
} > "$OUT/lag.log" 2>&1
mark lag
for v in "keep 0" "skip 0" "skip 2"; do
  set -- $v
  echo "=== idle $1 lag $2" >> "$OUT/lag-ncu.log"
  STRATA_Q10_IDLE=$1 STRATA_Q10_CONSUMER_LAG=$2 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k regex:hopper_q10_kernel --launch-skip 4 --launch-count 4 bin-run/strata-moe-new bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 \
    --chunk 4096 2>&1 | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-140 >> "$OUT/lag-ncu.log"
done
mark lag-ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
timeout 150 ncu --kernel-name regex:hopper_q10_kernel --launch-skip 2 --launch-count 1 --set full --import-source no -f \
  -o "$OUT/t512" bin-run/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens 512 --chunk 512 > "$OUT/ncu.log" 2>&1
echo "rc=$?" >> "$OUT/ncu.log"
ncu -i "$OUT/t512.ncu-rep" --page details > "$OUT/t512-details.txt" 2>&1
ncu -i "$OUT/t512.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/t512-sass.csv.gz"
rm -f "$OUT/t512.ncu-rep"
mark ncu-full
{ for t in 512 16384; do
    echo "=== T=$t iq3_s q2_0"; cell "" $t
    for m in "q4_K q6_K" "iq4_xs iq4_xs" "q8_0 q8_0" "iq2_xxs iq4_nl" "mxfp4 mxfp4"; do
      echo "=== T=$t $m"; cell "" $t $m
    done
  done
  for t in 512 4096; do echo "=== gpt-oss-120b T=$t mxfp4"; cell "" $t mxfp4 mxfp4 gpt-oss-120b; done
} > "$OUT/cells.log" 2>&1
mark cells
echo "=== gpt-oss-120b T=4096" > "$OUT/kernels.log"
timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 12 bin-run/strata-moe bench \
  --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset gpt-oss-120b --routing uniform --layers 1 --cells 1 \
  --quiet --tokens 4096 --chunk 4096 --gate-up mxfp4 --down mxfp4 2>&1 | grep -E "^\s+[a-zA-Z_].*\(|gpu__time" | cut -c1-140 >> "$OUT/kernels.log"
mark kernels
# The short stage plan (K no multiple of the long stage) against the long one, MXFP4 both roles:
# qwen35-a3b's d = 2048, f = 512 (long) and d = 2112, f = 576 (K % 256 = 64 and K % 128 = 64: short).
for g in "2048 512" "2112 576"; do
  set -- $g
  echo "=== qwen35-a3b d=$1 f=$2 mxfp4" >> "$OUT/kernels.log"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel --launch-skip 4 --launch-count 4 \
    bin-run/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b --d $1 --ffn $2 \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 --gate-up mxfp4 --down mxfp4 2>&1 \
    | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-140 >> "$OUT/kernels.log"
done
mark short-long
