#!/usr/bin/env bash
# Call 69: main's kernels ("main"), the consumers' wgmma descriptors moved by one add ("desc":
# branch desc-advance, 2026-12-06/c68/desc-advance.patch) and desc with the producer's activation
# codes by 16-byte cp.async ("act": branch act-cpasync), all Release, sm_90a, built off the device.
# GPU tests of desc and act, interleaved bench cells, the bf16 baseline, sanitizers and resources of
# act, ncu kernel durations and instruction counts (in that order: what matters most first).
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/main D=bin-run/desc A=bin-run/act
mkdir -p "$W/desc" "$W/act"
gpu_tests $D "$W/desc" > "$OUT/tests-desc.log" 2>&1 &
gpu_tests $A "$W/act" > "$OUT/tests-act.log" 2>&1
wait
mark tests
tar czf "$OUT/logs.tgz" -C "$W" .  # now, so the tests' logs come back even if a later step runs out of time
three() { local label=$1; shift
  echo "=== $label main"; hopper_cell $B "$@"
  echo "=== $label desc"; hopper_cell $D "$@"
  echo "=== $label act"; hopper_cell $A "$@"; }
{ three "T=4096" qwen35-a3b 4096
  three "T=512" qwen35-a3b 512
  three "T=16384" qwen35-a3b 16384
  three "Q4_K+Q6_K T=4096" qwen35-a3b 4096 --gate-up q4_K --down q6_K
} > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small:HopperFormats/*gate_up_q4_K_small:HopperFormats/*down_q6_K_small' 2>&1 | tail -2
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "racecheck rc=${PIPESTATUS[0]}"
  timeout 200 compute-sanitizer --tool synccheck --error-exitcode 1 --print-limit 3 $A/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*gate_up_iq3_s_small:HopperFormats/*down_q2_0_small' 2>&1 | tail -2
  echo "synccheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
{ hopper_resources desc $D; hopper_resources act $A; } > "$OUT/resources.log" 2>&1
mark resources
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens ${2:-4096} --chunk ${2:-4096} 2>&1 | grep -E "hopper_q10|duration|inst_executed"; }
{ for x in main desc act; do echo "=== $x T=4096"; k bin-run/$x; done
  for x in main act; do echo "=== $x T=512"; k bin-run/$x 512; done; } > "$OUT/kernels.log" 2>&1
mark kernels
