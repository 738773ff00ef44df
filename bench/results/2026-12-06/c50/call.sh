#!/usr/bin/env bash
# Call 50: four kernel variants against main (base = f878b21), all five binaries built off the
# device (Release, sm_90a) with the q10 format list cut to IQ3_S, Q2_0, Q4_K, Q6_K, IQ4_XS, MXFP4
# and Q8_0: dev1 = three B buffers on every tile with a decoder warpgroup (the 64-pair tile had
# two); dev2 = dev1 with four on the 128-pair tile; dev3 = the decode tasks' lane mapping (the two
# half-warps decode the two pieces of the same 16 columns); dev4 = the consumers' wgmma descriptors
# as one low word per chunk plus each product's offset. Resources, bench cells interleaved by
# binary, ncu durations, the bf16 baseline. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B="base dev1 dev2 dev3 dev4"
for b in $B; do
  cuobjdump --dump-resource-usage bin-run/$b/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources-$b.txt"
  echo "$b: $(grep -c "REG:" "$W/resources-$b.txt") hopper_q10 resource lines," \
    "$(grep "REG:" "$W/resources-$b.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
done > "$OUT/resources.log" 2>&1
mark resources
cell() {  # cell BINARY PRESET T ROUTING [GATE DOWN]
  local b=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do for b in $B; do
    echo "=== round $round $b qwen35-a3b T=512 iq3_s q2_0 uniform"; cell $b qwen35-a3b 512 uniform
    echo "=== round $round $b qwen35-a3b T=4096 iq3_s q2_0 uniform"; cell $b qwen35-a3b 4096 uniform
  done; done
  for b in $B; do
    echo "=== $b qwen35-a3b T=16384 iq3_s q2_0 uniform"; cell $b qwen35-a3b 16384 uniform
    echo "=== $b qwen3-30b T=4096 uniform"; cell $b qwen3-30b 4096 uniform
    echo "=== $b flash-next T=4096 uniform"; cell $b flash-next 4096 uniform
    for m in "q4_K q6_K" "iq4_xs iq4_xs"; do
      echo "=== $b qwen35-a3b T=512 $m uniform"; cell $b qwen35-a3b 512 uniform $m
    done
    echo "=== $b qwen35-a3b T=4096 q4_K q6_K uniform"; cell $b qwen35-a3b 4096 uniform q4_K q6_K
  done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 512 4096; do for b in $B; do
    echo "=== $b T=$t iq3_s q2_0"
    timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
      -k regex:hopper_q10_kernel --launch-count 4 bin-run/$b/strata-moe bench --backend cuda --numerics q10 \
      --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t \
      --chunk $t 2>&1 | grep -E "hopper_q10_kernel|gpu__time|inst_executed|wavefronts" | cut -c1-150
  done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
tar czf "$OUT/logs.tgz" -C "$W" .
