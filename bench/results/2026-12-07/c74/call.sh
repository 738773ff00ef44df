#!/usr/bin/env bash
# Call 74 (run twice: the first run's parse lost every figure, -A1 against ncu's five lines): the q10 Hopper down kernel on both tiles, per down format (main's binary, c72nan): ncu
# durations of the down launches with STRATA_PF_FUSED_TILE=small and =large.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/nan
dn() { local tile=$1 preset=$2 t=$3 fmt=$4
  STRATA_PF_FUSED_TILE=$tile timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:hopper_q10 \
    --launch-skip 2 --launch-count 4 $B/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $preset --routing uniform --layers 1 --cells 1 --quiet --tokens $t --chunk $t --gate-up iq3_s --down $fmt \
    > "$W/raw-$preset-$t-$fmt-$tile.log" 2>&1
  grep -A6 -E "hopper_q10_kernel<[A-Za-z0-9_]+, HopperQ10Tile<[A-Za-z0-9_]+, 1," "$W/raw-$preset-$t-$fmt-$tile.log" | grep duration |
    awk -v l="$preset T=$t $fmt $tile" '{printf "%s %s %s\n", l, $2, $3}'; }
{ for fmt in q2_0 q6_K iq4_nl iq4_xs q8_0 mxfp4 q4_K; do
    for tile in large small; do dn $tile qwen35-a3b 4096 $fmt; done; done
  for fmt in q2_0 q6_K; do for tile in large small; do dn $tile qwen35-a3b 8192 $fmt; dn $tile qwen3-30b 4096 $fmt; done; done
} > "$W/down.log" 2>&1
mark down
cp "$OUT/info.txt" "$W/"
cp "$W/down.log" "$OUT/summary.txt"
tar czf "$OUT/c74.tgz" -C "$W" .
