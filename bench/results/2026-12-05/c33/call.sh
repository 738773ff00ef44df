#!/usr/bin/env bash
# Call 33: the decoder warpgroup on the 64-pair tile (f: with three B buffers), the wait's suspend-time hint and the IQ3_S
# one-word grid. Binaries built off the device (sm_90a only): c33.tar.xz = bin-run/head (43f5425),
# bin-run/c, bin-run/d, bin-run/f (strata-moe built with six formats: IQ3_S, Q2_0, Q4_K, Q6_K, IQ4_XS, MXFP4),
# bin-run/dev (tree D with every format: strata-moe and the GPU tests). Logs in logs.tgz.
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
cell() {  # cell BIN T [GATE DOWN]
  local g=$1 t=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 120 bin-run/$g/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset qwen35-a3b --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B "
}
if [[ ${CALL_SHORT:-0} == 1 ]]; then  # the device time left allows the main cells only
{ for t in 512 4096; do for g in head d; do echo "=== T=$t iq3_s q2_0 $g"; cell $g $t iq3_s q2_0; done; done
  for g in head d; do echo "=== T=512 q4_K q6_K $g"; cell $g 512 q4_K q6_K; done
} > "$OUT/bench.log" 2>&1
else
{ for t in 512 4096; do
    gs="head c d"; [[ $t == 512 ]] && gs="head c d f"
    for g in $gs; do echo "=== T=$t iq3_s q2_0 $g"; cell $g $t iq3_s q2_0; done
    ms=("q4_K q6_K"); [[ $t == 512 ]] && ms+=("iq4_xs iq4_xs" "mxfp4 mxfp4")
    for m in "${ms[@]}"; do
      for g in head d; do echo "=== T=$t $m $g"; cell $g $t $m; done
    done
  done
  for g in head d; do echo "=== T=16384 iq3_s q2_0 $g"; cell $g 16384 iq3_s q2_0; done
  echo "=== T=512 iq3_s q2_0 head, STRATA_PF_FUSED_TILE=large"; STRATA_PF_FUSED_TILE=large cell head 512 iq3_s q2_0
  for g in head d; do echo "=== T=512 iq3_s q2_0 $g (again)"; cell $g 512 iq3_s q2_0; done
} > "$OUT/bench.log" 2>&1
fi
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper_q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"
  grep "REG:" "$W/resources.txt" | grep -v "STACK:0 .*LOCAL:0" | head; } > "$OUT/resources.log" 2>&1
mark resources
{ echo "=== memcheck Hopper small cases: iq3_s, q4_K, mxfp4 gate/up; q2_0, q6_K, iq4_xs down"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small:HopperFormats/*gate_up_mxfp4_small:HopperFormats/*down_iq4_xs_small' 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"
  echo "=== racecheck Hopper small iq3_s gate/up, q2_0 down"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -3
  echo "rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
kern() {  # kern BIN T
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10_kernel --launch-skip 4 \
    --launch-count 4 bin-run/$1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet --tokens $2 --chunk $2 2>&1 \
    | grep -E "hopper_q10_kernel|gpu__time" | cut -c1-150
}
{ for g in head d; do for t in 512 4096; do echo "=== $g T=$t"; kern $g $t; done; done; } > "$OUT/ncu.log" 2>&1
mark ncu
tar czf "$OUT/logs.tgz" -C "$W" .
