#!/usr/bin/env bash
# Call 67: a profile by pipe and port of main's Hopper q10 kernels (call 66's "split" binary with
# STRATA_Q10_HOPPER_SPLIT=off, whose kernels are those of 04425cf): IQ3_S gate/up and Q2_0 down,
# qwen35-a3b, T = 4096, uniform routing; the bench cell and the bf16 baseline in the same call.
set -u
cd "$(dirname "$0")/../../../.."
. scripts/device-prebuilt
S=bin-run/split
export STRATA_Q10_HOPPER_SPLIT=off
run_bench() { $S/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096; }
prof() {  # prof NAME NCU-ARGS...: the gate/up launch (the first) and the down launch (the second)
  local name=$1; shift
  timeout 240 ncu --clock-control none -k regex:hopper_q10 --launch-skip 2 --launch-count 2 "$@" \
    $S/strata-moe bench --backend cuda --numerics q10 --arms fused-hopper,fused-hopper --preset qwen35-a3b \
    --routing uniform --layers 1 --cells 1 --quiet --tokens 4096 --chunk 4096 > "$OUT/$name.txt" 2>&1
  echo "rc=$?" >> "$OUT/$name.txt"
}
W=$(mktemp -d)
for k in 0 1; do  # the full set of each launch, its raw metrics and its per-instruction samples
  timeout 200 ncu --clock-control none --kernel-name regex:hopper_q10_kernel --launch-skip $((2 + k)) --launch-count 1 \
    --set full --import-source no -f -o "$W/t4096-$k" $S/strata-moe bench --backend cuda --numerics q10 \
    --arms fused-hopper,fused-hopper --preset qwen35-a3b --routing uniform --layers 1 --cells 1 --quiet \
    --tokens 4096 --chunk 4096 > "$OUT/full-$k.log" 2>&1
  echo "rc=$?" >> "$OUT/full-$k.log"
  ncu -i "$W/t4096-$k.ncu-rep" --page details --print-details all > "$OUT/t4096-$k-details.txt" 2>&1
  ncu -i "$W/t4096-$k.ncu-rep" --page raw --csv 2>&1 | gzip -9 > "$OUT/t4096-$k-raw.csv.gz"
  ncu -i "$W/t4096-$k.ncu-rep" --page source --print-source sass --csv 2>&1 | gzip -9 > "$OUT/t4096-$k-sass.csv.gz"
  mark "full $k"
done
ncu --query-metrics --chip gh100 > "$OUT/query-metrics.txt" 2>&1
mark query
pick() { grep -oE "^$1[a-z0-9_]*" "$OUT/query-metrics.txt" | sort -u; }
pipes_inst=$(pick 'sm__inst_executed_pipe_' | sed 's/$/.avg.pct_of_peak_sustained_active/' | paste -sd,)
pipes_cyc=$(pick 'sm__pipe_[a-z0-9_]*cycles_active' | sed 's/$/.avg.pct_of_peak_sustained_active/' | paste -sd,)
echo "$pipes_inst" > "$OUT/metric-lists.txt"; echo "$pipes_cyc" >> "$OUT/metric-lists.txt"
prof pipes-inst --metrics "$pipes_inst"
mark pipes_inst
prof pipes-cycles --metrics "$pipes_cyc"
mark pipes_cycles
prof breakdown --metrics breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
mark breakdown
prof issue --metrics smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__issue_active.max.pct_of_peak_sustained_active,smsp__issue_active.min.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warps_eligible.avg.per_cycle_active,gpu__time_duration.sum,sm__cycles_elapsed.avg,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldsm.sum
mark issue
{ for i in 1 2; do run_bench 2>&1 | grep -E "^A |^B |rror|WRONG"; done; } > "$OUT/bench.log" 2>&1
mark bench
timeout 120 python3 .device-probes/torch/grouped_bf16.py > "$OUT/bf16.log" 2>&1
mark bf16
