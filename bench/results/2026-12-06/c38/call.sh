#!/usr/bin/env bash
# Call 38: the q10 Hopper kernels in clusters of CTAs that share each pair tile's activation codes
# (one multicast bulk copy per pair and stage for the cluster; STRATA_Q10_CLUSTER = 1, 2, 4),
# binaries built off the device (Release, sm_90a; bin-run/dev with the GPU tests). Tests (their
# clustered runs included), bench cells and ncu kernel durations per cluster size, the bf16
# baseline, memcheck and racecheck of small clustered cases. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test c_api_engine_test cuda_pipeline_test; do
    ( timeout 420 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
cell() {  # cell CLUSTER PRESET T ROUTING [GATE DOWN]
  local c=$1 p=$2 t=$3 r=$4; shift 4
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  STRATA_Q10_CLUSTER=$c timeout 150 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for t in 4096 512 16384; do for c in 1 2 4; do
    echo "=== cluster $c qwen35-a3b T=$t iq3_s q2_0 uniform"; cell $c qwen35-a3b $t uniform; done; done
  for c in 1 2 4; do echo "=== cluster $c qwen35-a3b T=4096 again"; cell $c qwen35-a3b 4096 uniform; done
  for p in qwen3-30b flash-next; do for c in 1 2 4; do
    echo "=== cluster $c $p T=4096 iq3_s q2_0 uniform"; cell $c $p 4096 uniform; done; done
  for c in 1 2; do echo "=== cluster $c qwen35-a3b T=4096 skewed"; cell $c qwen35-a3b 4096 skewed; done
  for m in "q4_K q6_K" "iq4_xs iq4_xs" "mxfp4 mxfp4"; do for c in 1 2; do
    echo "=== cluster $c qwen35-a3b T=4096 $m uniform"; cell $c qwen35-a3b 4096 uniform $m; done; done
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ for t in 4096 512; do for c in 1 2 4; do
    echo "=== T=$t cluster $c"
    STRATA_Q10_CLUSTER=$c timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel \
      --launch-count 4 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
      --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t 2>&1 \
      | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
  done; done; } > "$OUT/kernels.log" 2>&1
mark kernels
{ for c in 2 4; do for tool in memcheck racecheck; do
    echo "=== $tool cluster $c: iq3_s gate/up, q2_0 down, q2_K gate/up small cases"
    STRATA_Q10_CLUSTER=$c timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 3 $D/fused_q10_test \
      --gtest_brief=1 --gtest_filter='HopperFormats/*gate_up_iq3_s_small_aligned:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q2_K_small' 2>&1 | tail -3
    echo "rc=${PIPESTATUS[0]}"; done; done; } > "$OUT/sanitize.log" 2>&1
mark sanitize
tar czf "$OUT/logs.tgz" -C "$W" .
