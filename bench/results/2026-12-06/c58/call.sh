#!/usr/bin/env bash
# Call 58: the staged sm_80 gate/up tile against its direct reads (STRATA_Q10_SM80_RAW=direct) for
# the formats not measured before, call 57's dev binary, T = 4096, gate/up format + Q2_0 down.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
sm80() {  # sm80 GATE
  timeout 100 bin-run/dev/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset qwen35-a3b \
    --routing uniform --layers 2 --cells 2 --quiet --tokens 4096 --chunk 4096 --gate-up $1 --down q2_0 2>&1 | grep -E "^A |^B |rror"
}
{ for g in q4_0 iq4_nl iq4_xs mxfp4 q1_0 q2_0 tq2_0 q3_K iq1_s iq1_m iq2_xs iq2_s tq1_0; do
    echo "=== sm80 staged T=4096 $g q2_0"; sm80 $g
    echo "=== sm80 direct T=4096 $g q2_0"; export STRATA_Q10_SM80_RAW=direct; sm80 $g; unset STRATA_Q10_SM80_RAW
  done
} > "$OUT/bench.log" 2>&1
mark bench
