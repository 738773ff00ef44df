#!/usr/bin/env bash
# Call 63: the sm_80 q10 wide tile (sm80-wide tree, Release, sm_90a build) by STRATA_PF_FUSED_TILE=wide
# against the default tile choice in the same binary: GPU tests, sanitizers, fused-sm80 cells
# beside q8 production, ncu kernel durations, the bf16 baseline.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
D=bin-run/dev
W=$(mktemp -d)
{ timeout 280 $D/fused_q10_test --gtest_brief=1 > "$W/t.log" 2>&1; echo "rc=$?" >> "$W/t.log"
  grep -E "^\[  PASSED|^\[  FAILED|rc=|Failure|Expected|Which is|seed" "$W/t.log" | head -40
  STRATA_PF_FUSED_TILE=wide timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 \
    $D/fused_q10_test --gtest_brief=1 --gtest_filter='Edges/*Bitwise*Rule*:-*Hopper*:*Wmma*' > "$W/mem.log" 2>&1
  echo "memcheck rc=$?"; tail -3 "$W/mem.log"
  STRATA_PF_FUSED_TILE=wide timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 3 \
    $D/fused_q10_test --gtest_brief=1 --gtest_filter='Edges/FusedQ10Layer.BitwiseEqualToTheQ10RuleAndDeterministic/single_expert_192_rows' > "$W/race.log" 2>&1
  echo "racecheck rc=$?"; tail -3 "$W/race.log"
} > "$OUT/tests.log" 2>&1
mark tests
cell() {  # cell PRESET T [GATE DOWN]
  local p=$1 t=$2; shift 2
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  timeout 150 $D/strata-moe bench --backend cuda --numerics q8,q10 --arms production,fused-sm80 --preset $p \
    --routing uniform --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror|WRONG"
}
both() { local label=$1; shift; echo "=== $label default"; cell "$@"; echo "=== $label wide"; STRATA_PF_FUSED_TILE=wide cell "$@"; }
{ both "qwen35-a3b T=4096 round 1" qwen35-a3b 4096
  both "qwen35-a3b T=4096 round 2" qwen35-a3b 4096
  both "qwen35-a3b T=16384" qwen35-a3b 16384
  both "qwen35-a3b T=4096 q4_K q6_K" qwen35-a3b 4096 q4_K q6_K
  both "qwen3-30b T=4096" qwen3-30b 4096
  both "qwen35-a3b T=1024" qwen35-a3b 1024
  both "qwen35-a3b T=512" qwen35-a3b 512
} > "$OUT/bench.log" 2>&1
mark bench
k() { timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum -k regex:q10_product --launch-count 2 \
    $D/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "q10_product|duration|inst_executed"; }
{ echo "=== default"; k; echo "=== wide"; STRATA_PF_FUSED_TILE=wide k; } > "$OUT/kernels.log" 2>&1
mark kernels
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
tar czf "$OUT/logs.tgz" -C "$W" .
