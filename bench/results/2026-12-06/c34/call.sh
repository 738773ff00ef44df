#!/usr/bin/env bash
# Call 34: the landed kernels (7f7d812, every format: bin-run/dev with the GPU tests) and the
# stage variants of the IQ3_S gate/up and Q2_0 down kernels on both tiles (bin-run/v/strata-moe:
# 7f7d812 + variants.patch, formats IQ3_S and Q2_0 only; STRATA_Q10_VARIANT = nodec: no weight
# decode, nofold: no fold, skel: neither, nomma: no products and no fold, bare: no decode, no
# products, no fold; the rings, barriers and epilogues stay), timed by ncu only. Binaries built
# off the device (Release, sm_90a). Each step writes its own file under $OUT; logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t; done
} > "$OUT/tests.log" 2>&1
mark tests
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
cell() {  # cell PRESET T ROUTING [GATE DOWN]
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for t in 512 4096 16384; do echo "=== qwen35-a3b T=$t iq3_s q2_0 uniform"; cell qwen35-a3b $t uniform; done
  echo "=== qwen35-a3b T=4096 iq3_s q2_0 skewed"; cell qwen35-a3b 4096 skewed
  for p in qwen3-30b flash-next; do echo "=== $p T=4096 iq3_s q2_0 uniform"; cell $p 4096 uniform; done
  for t in 512 4096; do
    for m in "q4_K q6_K" "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do
      echo "=== qwen35-a3b T=$t $m uniform"; cell qwen35-a3b $t uniform $m; done
    echo "=== qwen35-a3b T=$t iq3_s q2_0 uniform (again)"; cell qwen35-a3b $t uniform
  done
  echo "=== gpt-oss-120b T=4096 mxfp4 mxfp4 uniform"; cell gpt-oss-120b 4096 uniform mxfp4 mxfp4
  for b in fused-hopper fused-sm80; do
    echo "=== q8 production against q10 $b, qwen35-a3b T=4096 uniform"
    timeout 150 $D/strata-moe bench --backend cuda --numerics q8,q10 --arms production,$b --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror"
  done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 512 4096; do for v in none nodec nofold skel nomma bare; do
    echo "=== T=$t $v"
    STRATA_Q10_VARIANT=$v timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel \
      --launch-count 4 bin-run/v/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
  done; done; } > "$OUT/variants.log" 2>&1
mark variants
{ echo "=== memcheck Hopper small cases: q2_K gate/up (64-pair tile, consumers decode), iq3_s gate/up, q2_0 down"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_q2_K_small:HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -3
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
timeout 150 ncu --kernel-name regex:hopper_q10_kernel --launch-skip 2 --launch-count 1 --set full --import-source no -f \
  -o "$W/t512" $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
  --routing uniform --layers 1 --cells 1 --quiet --tokens 512 --chunk 512 > "$W/ncu-full.log" 2>&1
echo "rc=$?" >> "$W/ncu-full.log"
ncu -i "$W/t512.ncu-rep" --page details > "$OUT/t512-details.txt" 2>&1
ncu -i "$W/t512.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/t512-sass.csv.gz"
mark ncu-full
tar czf "$OUT/logs.tgz" -C "$W" --exclude='*.ncu-rep' .
