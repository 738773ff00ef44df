#!/usr/bin/env bash
# Call 54: the sm_80 q10 kernels' many-pair tile with its raw blocks staged in shared memory
# (sm80-raw, built off the device: Release, sm_90a) against base (1cbfa06's strata-moe): GPU tests,
# sanitizers, q8 production against fused-sm80 in one process per binary, ncu kernel times, and the
# bf16 baseline. Logs in logs.tgz.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
D=bin-run/dev
{ for t in fused_q10_test c_api_engine_test cuda_pipeline_test; do
    ( timeout 300 $D/$t --gtest_brief=1 > "$W/test-$t.log" 2>&1; echo "rc=$?" >> "$W/test-$t.log" ) &
  done
  wait
  for t in "$W"/test-*.log; do echo "=== $(basename $t .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=" $t | head -30; done
} > "$OUT/tests.log" 2>&1
mark tests
{ timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='Formats/*gate_up_iq3_s_odd_skewed:Formats/*down_q2_0_odd_skewed:Formats/*gate_up_q4_0_at_mapping_end:Formats/*down_iq4_xs_at_mapping_end:FusedQ10Arm.Sm80RawStages*' 2>&1 | tail -3
  echo "memcheck rc=${PIPESTATUS[0]}"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 $D/fused_q10_test --gtest_brief=1 \
    --gtest_filter='Formats/*gate_up_iq3_s_odd_skewed:Formats/*down_q2_0_odd_skewed' 2>&1 | tail -3
  echo "racecheck rc=${PIPESTATUS[0]}"; } > "$OUT/sanitize.log" 2>&1
mark sanitize
ab() {  # ab BIN T [GATE DOWN]
  local s=$1 t=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $s bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for round in 1 2; do
    for b in base dev; do echo "=== $b T=4096 round $round"; ab bin-run/$b/strata-moe 4096; done
  done
  for b in base dev; do echo "=== $b T=16384"; ab bin-run/$b/strata-moe 16384; done
  for b in base dev; do echo "=== $b T=512"; ab bin-run/$b/strata-moe 512; done
  for b in base dev; do echo "=== $b T=4096 iq4_xs iq4_xs"; ab bin-run/$b/strata-moe 4096 iq4_xs iq4_xs; done
} > "$OUT/bench.log" 2>&1
mark bench
{ for b in base dev; do
    echo "=== $b"
    timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:q10_product --launch-skip 8 --launch-count 4 \
      bin-run/$b/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "q10_product|gpu__time" | sed 's/(strata::[^)]*)//g' | cut -c1-200
  done; } > "$OUT/ncu.log" 2>&1
mark ncu
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
