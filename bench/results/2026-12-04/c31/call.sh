#!/usr/bin/env bash
# Call 31: the #15 cells (qwen35-a3b geometry, T = 512, 4096, 16384; gpt-oss-120b) on the landed
# kernels (995fc2c), with IQ3_S + Q2_0 measured first and last, and the bf16 baseline in the same
# call. Binary built off the device (sm_90a only): head.tar.xz (bin-run/head/strata-moe).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
G=bin-run/head
cell() {  # cell T PRESET [GATE DOWN]
  local t=$1 preset=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $G/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $preset \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B "
}
{ for t in 4096 512 16384; do
    echo "=== T=$t iq3_s q2_0"; cell $t qwen35-a3b
    for m in "q4_K q6_K" "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do
      echo "=== T=$t $m"; cell $t qwen35-a3b $m
    done
    echo "=== T=$t iq3_s q2_0 (again)"; cell $t qwen35-a3b
  done
  for t in 512 4096 16384; do echo "=== gpt-oss-120b T=$t mxfp4"; cell $t gpt-oss-120b mxfp4 mxfp4; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
