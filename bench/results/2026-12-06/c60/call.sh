#!/usr/bin/env bash
# Call 60: the sm_80 tile threshold against the staged many-pair tile: fused-sm80 (call 59's binary)
# by default and with each tile forced, at means of 16, 32 and 128 pairs per expert.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
D=bin-run/dev
cell() {  # cell PRESET T
  timeout 100 $D/strata-moe bench --backend cuda --numerics q10 --arms fused-sm80,fused-sm80 --preset $1 \
    --routing uniform --layers 2 --cells 2 --quiet --tokens $2 --chunk $2 2>&1 | grep -E "^A |^B |rror"
}
{ for pt in "qwen35-a3b 512" "qwen3-30b 512" "qwen35-a3b 1024" "qwen35-a3b 4096"; do
    echo "=== $pt default"; cell $pt
    for tile in small large; do
      echo "=== $pt $tile"; export STRATA_PF_FUSED_TILE=$tile; cell $pt; unset STRATA_PF_FUSED_TILE
    done
  done
} > "$OUT/bench.log" 2>&1
mark bench
