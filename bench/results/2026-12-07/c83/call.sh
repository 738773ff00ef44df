#!/usr/bin/env bash
# Call 83: "acts4" (down on the 128-pair tile with 512-value activation rings wherever the format's
# raw stages leave room: Q4_0, IQ4_NL, MXFP4, NVFP4 with three raw stages and two B buffers; Q8_0,
# Q4_1, Q5_1 with two of each; Q3_K, IQ2_XS, IQ4_XS with two 256-value raw stages and two B buffers)
# against "walk2" (main's kernels, 2f38ca4's build). Resources, the GPU tests and memcheck of the
# new K = 512 down cases first, then interleaved cell pairs of the formats whose down kernel changed
# and of two controls, every cell of the README's numbers on acts4, the bf16 baseline, ncu durations
# of MXFP4's kernels. The summary grows step by step.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
W=$(mktemp -d)
B=bin-run/walk2 N=bin-run/acts4
S="$OUT/summary.txt"
mkdir -p "$W/acts4"
hopper_resources acts4 $N > "$S" 2>&1
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $N/fused_q10_test --gtest_brief=1 > "$W/acts4/test-fused_q10_test-$i.log" 2>&1
    echo "rc=$?" >> "$W/acts4/test-fused_q10_test-$i.log" ) &
done
for t in hopper_q10_decode_test c_api_engine_test cuda_pipeline_test quantize_q10_test cuda_arguments_test arm_matrix_test; do
  ( timeout 200 $N/$t --gtest_brief=1 > "$W/acts4/test-$t.log" 2>&1; echo "rc=$?" >> "$W/acts4/test-$t.log" ) &
done
( timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 3 $N/fused_q10_test --gtest_brief=1 \
    --gtest_filter='HopperFormats/*down_mxfp4_shared_codes_512:HopperFormats/*down_q8_0_shared_codes_512:HopperFormats/*down_iq4_xs_shared_codes_512' > "$W/memcheck.log" 2>&1
  echo "memcheck rc=$?" >> "$W/memcheck.log" ) &
wait
mark tests
for t in "$W"/acts4/test-*.log; do
  echo "=== $(basename "$t" .log)"; grep -E "^\[  PASSED|^\[  FAILED|^\[  SKIPPED \]|rc=|Failure|Which is" "$t" | head -20
done >> "$S"
tail -3 "$W/memcheck.log" >> "$S"
cell() { local label=$1 bin=$2; shift 2; echo "=== $label $bin"; hopper_cell bin-run/$bin "$@"; }
pair() { local label=$1; shift; cell "$label" walk2 "$@"; cell "$label" acts4 "$@"; }
{ pair "IQ4_XS+IQ4_XS T=4096" qwen35-a3b 4096 --gate-up iq4_xs --down iq4_xs
  pair "IQ2_XXS+IQ4_NL T=4096" qwen35-a3b 4096 --gate-up iq2_xxs --down iq4_nl
  pair "MXFP4+MXFP4 T=4096" qwen35-a3b 4096 --gate-up mxfp4 --down mxfp4
  pair "Q8_0+Q8_0 T=4096" qwen35-a3b 4096 --gate-up q8_0 --down q8_0
  pair "IQ3_S+Q2_0 T=4096 (control)" qwen35-a3b 4096
  pair "Q4_K+Q6_K T=4096 (control)" qwen35-a3b 4096 --gate-up q4_K --down q6_K
  pair "MXFP4+MXFP4 T=16384" qwen35-a3b 16384 --gate-up mxfp4 --down mxfp4; } >> "$S" 2>&1
mark pairs
# Every README cell on acts4 (the tree to land if it passes), as call 53 ran them.
cellf() {  # cellf PRESET T ROUTING [GATE DOWN]
  local p=$1 t=$2 r=$3; shift 3
  local fmt=""; [[ $# -ge 2 ]] && fmt="--gate-up $1 --down $2"
  echo "=== all: $p T=$t $r ${fmt:-iq3_s q2_0}"
  timeout 150 $N/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper \
    --preset $p --routing $r --layers 2 --cells 3 --quiet --tokens $t --chunk $t $fmt 2>&1 | grep -E "^A |^B |rror"
}
{ for t in 512 16384; do
    for m in "iq3_s q2_0" "q4_K q6_K" "iq4_xs iq4_xs" "iq2_xxs iq4_nl" "mxfp4 mxfp4" "q8_0 q8_0"; do cellf qwen35-a3b $t uniform $m; done
  done
  cellf qwen35-a3b 512 skewed; cellf qwen35-a3b 4096 skewed
  cellf qwen3-30b 512 uniform; cellf qwen3-30b 4096 uniform; cellf flash-next 4096 uniform
  cellf gpt-oss-120b 512 uniform mxfp4 mxfp4; cellf gpt-oss-120b 4096 uniform mxfp4 mxfp4
  for arm in fused-hopper fused-sm80; do
    echo "=== q8 production against q10 $arm, qwen35-a3b T=4096"
    timeout 150 $N/strata-moe bench --backend cuda --numerics q8,q10 --arms production,$arm --preset qwen35-a3b \
      --routing uniform --layers 2 --cells 3 --quiet --tokens 4096 --chunk 4096 2>&1 | grep -E "^A |^B |rror"
  done; } >> "$S" 2>&1
mark bench
timeout 60 python3 .device-probes/torch/grouped_bf16.py > "$W/bf16.log" 2>&1
mark bf16
tail -10 "$W/bf16.log" >> "$S"
k() { timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,lts__t_bytes.sum -k regex:hopper_q10 --launch-skip 2 --launch-count 4 \
    $1/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 "${@:2}" 2>&1 | grep -E "hopper_q10|duration|bytes" | sed 's/(HopperQ10Args).*//'; }
for f in mxfp4; do
  for b in $B $N; do echo "=== ncu $f $b"; k $b --gate-up $f --down $f; done
done >> "$S" 2>&1
mark kernels
cp "$OUT/info.txt" "$W/"
tar czf "$OUT/c83.tgz" -C "$W" .
