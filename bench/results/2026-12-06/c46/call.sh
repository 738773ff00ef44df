#!/usr/bin/env bash
# Call 46: the consumers' warpgroup and warp indices broadcast from lane 0 (uniform registers for the
# 64-pair tile's B set and wgmma descriptors); dev = 05378e2 with the GPU tests, base = 37cdb2d
# (main), binaries built off the device (Release, sm_90a). Tests and resources of dev, the SASS of
# the IQ3_S 64-pair gate/up kernel's products in both, bench cells of both binaries interleaved, ncu
# durations and instruction counts, the bf16 baseline. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
K=_ZN6strata4cuda9fused_q1017hopper_q10_kernelINS_4Iq3SENS1_13HopperQ10TileIS3_Li2ELi256ELi2ELi64ELi256ELi2ELi2EEEEEvNS1_13HopperQ10ArgsE
for b in base dev; do
  cuobjdump -sass -fun "$K" bin-run/$b/strata-moe > "$W/sass-iq3s-gate-up-64-$b.txt" 2>&1
  { echo "=== $b: lines, HGMMA, R2UR, uniform ops in the kernel"
    grep -c "" "$W/sass-iq3s-gate-up-64-$b.txt"; grep -c "HGMMA" "$W/sass-iq3s-gate-up-64-$b.txt"
    grep -c "R2UR" "$W/sass-iq3s-gate-up-64-$b.txt"; grep -cE " U[A-Z]+" "$W/sass-iq3s-gate-up-64-$b.txt"
    grep -B8 -m4 "HGMMA" "$W/sass-iq3s-gate-up-64-$b.txt" | cut -c1-110; } >> "$OUT/sass.log" 2>&1
done
mark sass
cell() {  # cell BINARY PRESET T ROUTING [GATE DOWN]
  local b=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do for b in base dev; do
    echo "=== round $round $b qwen35-a3b T=512 iq3_s q2_0 uniform"; cell $b qwen35-a3b 512 uniform
    echo "=== round $round $b qwen35-a3b T=512 q4_K q6_K uniform"; cell $b qwen35-a3b 512 uniform q4_K q6_K
    echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0 uniform"; cell $b qwen35-a3b 4096 uniform
  done; done
  for b in base dev; do
    echo "=== $b qwen35-a3b T=512 iq4_xs iq4_xs uniform"; cell $b qwen35-a3b 512 uniform iq4_xs iq4_xs
    echo "=== $b qwen35-a3b T=512 iq3_s q2_0 skewed"; cell $b qwen35-a3b 512 skewed
    echo "=== $b qwen3-30b T=512 iq3_s q2_0 uniform"; cell $b qwen3-30b 512 uniform
    echo "=== $b qwen35-a3b T=16384 iq3_s q2_0 uniform"; cell $b qwen35-a3b 16384 uniform; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 512 4096; do for b in base dev; do for m in "iq3_s q2_0" "q4_K q6_K"; do
    [[ $t == 4096 && $m == "q4_K q6_K" ]] && continue
    echo "=== $b T=$t $m"
    set -- $m
    timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10_kernel \
      --launch-count 4 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t --gate-up $1 --down $2 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time|inst_executed" | cut -c1-150
  done; done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
tar czf "$OUT/logs.tgz" -C "$W" .
