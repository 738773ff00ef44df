#!/usr/bin/env bash
# Call 68 (prepared in 2026-12-06/c68, run now): the Hopper q10 consumers' wgmma descriptors moved
# by one add per step ("desc": main + 2026-12-06/c68/desc-advance.patch, Release, sm_90a) against
# main's kernels ("main": main's own build, the same flags): GPU tests and sanitizers of desc,
# resources, interleaved bench cells, ncu kernel durations and instruction counts, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/desc
B=bin-run/main
gpu_tests $D "$W" > "$OUT/tests.log" 2>&1
mark tests
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
cuobjdump --dump-resource-usage $D/strata-moe 2>&1 | grep -A1 -E "hopper_q10_kernel" > "$W/resources.txt"
{ echo "hopper q10 kernels: $(grep -c "REG:" "$W/resources.txt") resource lines,"\
    "$(grep "REG:" "$W/resources.txt" | grep -vc "STACK:0 .*LOCAL:0") with a stack or local memory"; } > "$OUT/resources.log" 2>&1
mark resources
hop() {  # hop BIN PRESET T [EXTRA...]
  local bin=$1 preset=$2 t=$3; shift 3
  timeout 150 $bin/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset $preset \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t "$@" 2>&1 | grep -E "^A |^B |rror|WRONG"
}
two() { local label=$1; shift
  echo "=== $label main"; hop $B "$@"
  echo "=== $label desc"; hop $D "$@"; }
{ two "T=4096" qwen35-a3b 4096
  two "T=512" qwen35-a3b 512
  two "T=16384" qwen35-a3b 16384
  two "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  two "T=4096 again" qwen35-a3b 4096
} > "$OUT/bench.log" 2>&1
mark bench
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens ${2:-4096} --chunk ${2:-4096} 2>&1 | grep -E "hopper_q10|duration|inst_executed"; }
{ echo "=== main"; k $B; echo "=== desc"; k $D; } > "$OUT/kernels.log" 2>&1
mark kernels
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
