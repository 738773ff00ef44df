#!/usr/bin/env bash
# Hostile input through the real binary: damaged GGUF files, FIFOs and directories as inputs,
# outputs over inputs, outputs that cannot be written, sizes past the limits, non-finite weights
# and routers, CLI misuse. Each must end in one `strata-moe: error:` line and the right exit
# status, with no crash, no hang, no input touched and no output (or temporary file) left behind.
# Usage: hardening.sh <strata-moe> <tests/data dir> <make_test_gguf>
set -uo pipefail
bin=$1
data=$2
make_gguf=$3
model=$data/vectors/moe/model.gguf
x0=$data/vectors/moe/layer0.x.npy
tmp=$(mktemp -d)
cleanup() {
  [[ -n ${mounted:-} ]] && umount "$mounted" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"

# expect_line STATUS NEEDLE CMD...: expect_status, a bounded run time (a hang fails), and stderr
# exactly one line starting with the prefix.
expect_line() {
  local want=$1 needle=$2
  shift 2
  expect_status "$want" "$needle" timeout 60 "$@"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "'$*': stderr is not one line: $(cat "$tmp/err")"
  grep -q '^strata-moe: error: ' "$tmp/err" || fail "'$*': no 'strata-moe: error:' prefix: $(cat "$tmp/err")"
}

# files_in DIR: the names in DIR, hidden ones included (temporary outputs are hidden).
files_in() { ls -A "$1" | sort | tr '\n' ' '; }

write_npy() {  # write_npy <file> <descr> <shape tuple> <python-literal list of values>
  python3 - "$@" <<'PY'
import struct, sys
path, descr, shape, values = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4])
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
fmt = {"<f4": "f", "<i4": "i"}[descr]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
PY
}

for case in good overlap blk00 arch-int nan-scale inf-scale nan-router escape-name nul-name; do
  "$make_gguf" "$case" "$tmp/$case.gguf" || fail "make_test_gguf $case"
done
write_npy "$tmp/x.npy" "<f4" "(3, 256)" "[0.01 * ((i * 37) % 101 - 50) for i in range(768)]"
cp "$model" "$tmp/model.gguf"

# ---- the generated good model runs ---------------------------------------------------------
mkdir "$tmp/ok"
"$bin" run --gguf "$tmp/good.gguf" --layer 1 --x "$tmp/x.npy" --out "$tmp/ok/y.npy" \
  --ids-out "$tmp/ok/ids.npy" --weights-out "$tmp/ok/w.npy" 2>"$tmp/err" ||
  fail "run on the generated model: $(cat "$tmp/err")"
[[ $(files_in "$tmp/ok") == "ids.npy w.npy y.npy " ]] || fail "run outputs: $(files_in "$tmp/ok")"

# ---- GGUF consistency ------------------------------------------------------------------------
expect_line 1 "overlaps tensor 'blk.0.ffn_gate_inp.weight'" "$bin" info "$tmp/overlap.gguf"
expect_line 1 "blk.0.ffn_gate_exps.weight" "$bin" info "$tmp/overlap.gguf"
expect_line 1 "'blk.00.ffn_gate_exps.weight': layer number '00' is not written canonically" \
  "$bin" info "$tmp/blk00.gguf"
expect_line 1 "key 'general.architecture': value type u32, expected string" "$bin" info "$tmp/arch-int.gguf"
expect_line 1 "arch-int.gguf" "$bin" dequant --gguf "$tmp/arch-int.gguf" --tensor x --out "$tmp/x.out"

# ---- names with control characters are escaped -----------------------------------------------
expect_line 1 'blk.0.\x1b[31mevil\x07' "$bin" info "$tmp/escape-name.gguf"
LC_ALL=C grep -q $'\x1b' "$tmp/err" && fail "an escape byte reached stderr: $(cat -v "$tmp/err")"

# ---- a NUL byte in a name does not cut the message short ---------------------------------------
expect_line 1 "tensor 'blk.0.ffn_␀evil.weight': not part of the qwen3moe MoE block" \
  "$bin" run --gguf "$tmp/nul-name.gguf" --layer 0 --x "$tmp/x.npy" --out "$tmp/y.npy"

# ---- split keys: checked against their range and the file's name before any shard is sought -----
"$make_gguf" split-huge "$tmp/huge-00001-of-00002.gguf" || fail "make_test_gguf split-huge"
"$make_gguf" split-3 "$tmp/three-00001-of-00002.gguf" || fail "make_test_gguf split-3"
expect_line 1 "keys 'split.no' = 0 and 'split.count' = 2147483647 do not name a shard of a split of 1 to 99999 files" \
  "$bin" info "$tmp/huge-00001-of-00002.gguf"
expect_line 1 "keys 'split.no' = 0 and 'split.count' = 3 disagree with the file name (shard 00001 of 00002)" \
  "$bin" run --gguf "$tmp/three-00001-of-00002.gguf" --layer 0 --x "$tmp/x.npy" --out "$tmp/y.npy"

# ---- finite inputs whose result overflows float32 are refused, not returned as Inf/NaN ---------
write_npy "$tmp/x-huge.npy" "<f4" "(3, 256)" "[3e38 * (1 if i % 3 else -1) for i in range(768)]"
write_npy "$tmp/ids-huge.npy" "<i4" "(3, 2)" "[0, 1, 2, 3, 1, 2]"
write_npy "$tmp/w-huge.npy" "<f4" "(3, 2)" "[0.5] * 6"
printf 'previous' >"$tmp/y-kept.npy"
expect_line 2 "router: token 0: the routing weights overflow float32" \
  "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x-huge.npy" --out "$tmp/y-kept.npy"
expect_line 2 "the result overflows float32" \
  "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x-huge.npy" --ids "$tmp/ids-huge.npy" \
  --weights "$tmp/w-huge.npy" --out "$tmp/y-kept.npy"
[[ $(cat "$tmp/y-kept.npy") == previous ]] || fail "an overflowing run replaced the previous output"

# ---- non-finite weights and routers ----------------------------------------------------------
expect_line 1 "tensor 'blk.0.ffn_down_exps.weight': expert 1, row 3, block 1: scale nan is not finite" \
  "$bin" run --gguf "$tmp/nan-scale.gguf" --layer 0 --x "$tmp/x.npy" --out "$tmp/y.npy"
expect_line 1 "nan-scale.gguf" "$bin" run --gguf "$tmp/nan-scale.gguf" --layer 0 --x "$tmp/x.npy" --out "$tmp/y.npy"
expect_line 1 "tensor 'blk.1.ffn_gate_exps.weight': expert 2, row 0, block 0: scale inf" \
  "$bin" run --gguf "$tmp/inf-scale.gguf" --layer 1 --x "$tmp/x.npy" --out "$tmp/y.npy"
# The other layer of the same files is clean and runs.
"$bin" run --gguf "$tmp/nan-scale.gguf" --layer 1 --x "$tmp/x.npy" --out "$tmp/y1.npy" 2>"$tmp/err" ||
  fail "the clean layer of nan-scale.gguf: $(cat "$tmp/err")"
expect_line 1 "nan-router.gguf: router tensor 'blk.0.ffn_gate_inp.weight': element [2, 7] = nan is not finite" \
  "$bin" run --gguf "$tmp/nan-router.gguf" --layer 0 --x "$tmp/x.npy" --out "$tmp/y.npy"
[[ -e $tmp/y.npy ]] && fail "a refused run wrote its output"

# ---- inputs that are not regular files: refused by kind, never opened (a FIFO would hang) ------
mkfifo "$tmp/pipe"
expect_line 1 "'$tmp/pipe': is a named pipe (FIFO), not a regular file" "$bin" info "$tmp/pipe"
expect_line 1 "--gguf '$tmp/pipe': is a named pipe (FIFO)" "$bin" dequant --gguf "$tmp/pipe" --tensor t --out "$tmp/o"
expect_line 1 "--x '$tmp/pipe': is a named pipe (FIFO)" "$bin" run --gguf "$model" --layer 0 --x "$tmp/pipe" --out "$tmp/o"
expect_line 1 "--blocks '$tmp/pipe': is a named pipe (FIFO)" "$bin" dequant --type q2_0 --blocks "$tmp/pipe" --out "$tmp/o"
expect_line 1 "is a directory, not a regular file" "$bin" info "$tmp"
expect_line 1 "--x '$tmp': is a directory" "$bin" run --gguf "$model" --layer 0 --x "$tmp" --out "$tmp/o"
expect_line 1 "is a character device" "$bin" info /dev/null
[[ -e $tmp/o ]] && fail "a refused command created its output"

# ---- an output over an input is refused before anything is written ---------------------------
ln "$tmp/model.gguf" "$tmp/hard.gguf"
ln -s model.gguf "$tmp/soft.gguf"
for out in model.gguf hard.gguf soft.gguf; do
  expect_line 2 "is the same file as the input --gguf" \
    "$bin" dequant --gguf "$tmp/model.gguf" --tensor blk.0.ffn_gate_inp.weight --out "$tmp/$out"
done
cmp -s "$tmp/model.gguf" "$model" || fail "dequant --out over --gguf changed the model"
cp "$x0" "$tmp/x0.npy"
expect_line 2 "--out '$tmp/x0.npy': is the same file as the input --x" \
  "$bin" run --gguf "$model" --layer 0 --x "$tmp/x0.npy" --out "$tmp/x0.npy"
expect_line 2 "--ids-out '$tmp/model.gguf': is the same file as the input --gguf" \
  "$bin" run --gguf "$tmp/model.gguf" --layer 0 --x "$x0" --out "$tmp/y.npy" --ids-out "$tmp/model.gguf"
expect_line 2 "--weights-out '$tmp/y.npy': is also the output --out" \
  "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/y.npy" --weights-out "$tmp/y.npy"
cmp -s "$tmp/x0.npy" "$x0" || fail "run --out over --x changed x"
cmp -s "$tmp/model.gguf" "$model" || fail "run --ids-out over --gguf changed the model"
printf 'raw' >"$tmp/blocks.raw"
expect_line 2 "is the same file as the input --blocks" \
  "$bin" dequant --type q2_0 --blocks "$tmp/blocks.raw" --out "$tmp/blocks.raw"

# ---- outputs: committed together at the end, or not at all -----------------------------------
mkdir "$tmp/outs"
printf 'previous' >"$tmp/outs/y.npy"
write_npy "$tmp/ids_bad.npy" "<i4" "(3, 2)" "[0, 9, 1, 2, 2, 3]"
write_npy "$tmp/w_ok.npy" "<f4" "(3, 2)" "[0.5] * 6"
expect_line 2 "--ids" "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x.npy" --ids "$tmp/ids_bad.npy" \
  --weights "$tmp/w_ok.npy" --out "$tmp/outs/y.npy" --ids-out "$tmp/outs/ids.npy"
[[ $(files_in "$tmp/outs") == "y.npy " ]] || fail "a failed run left files behind: $(files_in "$tmp/outs")"
[[ $(cat "$tmp/outs/y.npy") == previous ]] || fail "a failed run replaced the previous output"
expect_line 1 "--out '$tmp/blocks.raw/y.npy': cannot create: Not a directory" \
  "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/blocks.raw/y.npy"
expect_line 1 "--out '$tmp/no-such-dir/y.npy': cannot create: No such file or directory" \
  "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/no-such-dir/y.npy"
expect_line 1 "--out '$tmp/outs': is a directory; an output must be a new or a regular file" \
  "$bin" dequant --gguf "$model" --tensor blk.0.ffn_gate_inp.weight --out "$tmp/outs"
expect_line 1 "--ids-out '$tmp/pipe': is a named pipe (FIFO)" \
  "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/outs/y2.npy" --ids-out "$tmp/pipe"
[[ -e $tmp/outs/y2.npy ]] && fail "a refused --ids-out left --out written"
# A folder nobody can create files in, even root: /proc.
expect_line 1 "--out '/proc/strata-moe-test.npy': cannot create a file in '/proc'" \
  "$bin" dequant --gguf "$model" --tensor blk.0.ffn_gate_inp.weight --out /proc/strata-moe-test.npy
# A full disk: a 64 KiB tmpfs where mounting is allowed (root in a privileged container).
mkdir "$tmp/small"
if mount -t tmpfs -o size=64k tmpfs "$tmp/small" 2>/dev/null; then
  mounted=$tmp/small
  printf 'previous' >"$tmp/small/down.npy"
  expect_line 1 "--out '$tmp/small/down.npy': write failed: No space left on device" \
    "$bin" dequant --gguf "$model" --tensor blk.1.ffn_down_exps.weight --out "$tmp/small/down.npy"
  [[ $(files_in "$tmp/small") == "down.npy " ]] || fail "a full disk left files behind: $(files_in "$tmp/small")"
  [[ $(cat "$tmp/small/down.npy") == previous ]] || fail "a full disk destroyed the previous output"
  umount "$tmp/small" && mounted=
else
  echo "SKIP: full-disk case (cannot mount a tmpfs here)"
fi

# ---- sizes -------------------------------------------------------------------------------------
expect_line 2 "--threads: 100000000 is outside [0, 1024]" \
  "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/y.npy" --threads 100000000
expect_line 2 "--threads: 4096 is outside [0, 1024]" "$bin" demo --threads 4096 --tokens 1
expect_line 2 "--tokens: 99999999999999999999 is outside [1, 268435456]" "$bin" demo --tokens 99999999999999999999
expect_line 2 "--tokens x k (routed pairs): 268435456 x 8" "$bin" demo --tokens 268435456
expect_line 2 "more than the limit" "$bin" bench --d 1048576 --ffn 1048576 --experts 1048576 --k 8
expect_line 2 "--d: 0 is outside [1, 1048576]" "$bin" bench --d 0
expect_line 2 "--k: 65 is outside [1, 64]" "$bin" bench --d 256 --ffn 256 --experts 128 --k 65
expect_line 2 "routed pairs" "$bin" bench --tokens 268435456 --k 64 --d 256 --ffn 256 --experts 64
[[ $(wc -c <"$tmp/err") -lt 300 ]] || fail "bench bound message is long: $(cat "$tmp/err")"
# A gigabyte of raw blocks that is not a whole number of blocks: refused from its size alone.
truncate -s $((1024 * 1024 * 1024 + 1)) "$tmp/big.raw"
expect_line 2 "1073741825 bytes is not a whole" "$bin" dequant --type q2_0 --blocks "$tmp/big.raw" --out "$tmp/big.f32"
rm -f "$tmp/big.raw"

# An x whose header asks for more than T x d <= 2^34 values: refused from the header, before its
# 64 GiB (a sparse file) are read.
python3 - "$tmp/x-big.npy" <<'PY'
import sys
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (67108865, 256), }"
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
PY
truncate -s $((128 + 67108865 * 256 * 4)) "$tmp/x-big.npy"
expect_line 2 "--x: T x columns: 67108865 x 256 is more than the limit 17179869184" \
  "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x-big.npy" --out "$tmp/y.npy"
rm -f "$tmp/x-big.npy"

# ---- threads: a huge OMP_NUM_THREADS is capped at the limit, not obeyed into a crash -----------
OMP_NUM_THREADS=100000 "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x.npy" \
  --out "$tmp/omp.npy" 2>"$tmp/err" || fail "OMP_NUM_THREADS=100000: $(cat "$tmp/err")"

# ---- a run killed by a signal leaves no temporary output behind ---------------------------------
mkdir "$tmp/killed"
python3 - "$tmp/x-long.npy" <<'PY'
import struct, sys
rows = 1 << 18
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 256), }" % rows
header += " " * (63 - (10 + len(header)) % 64) + "\n"
row = struct.pack("<256f", *[0.01 * ((i * 37) % 101 - 50) for i in range(256)])
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    f.write(row * rows)
PY
for signal in TERM; do
  timeout -k 20 -s "$signal" 1 "$bin" run --gguf "$tmp/good.gguf" --layer 0 --x "$tmp/x-long.npy" \
    --out "$tmp/killed/y.npy" --ids-out "$tmp/killed/ids.npy" --threads 1 2>"$tmp/err"
  status=$?
  [[ $status == 124 ]] || fail "SIG$signal: the run was not cut short (status $status): $(cat "$tmp/err")"
  [[ -z $(files_in "$tmp/killed") ]] || fail "SIG$signal left files behind: $(files_in "$tmp/killed")"
done
rm -f "$tmp/x-long.npy"

# ---- CLI misuse: one line each -----------------------------------------------------------------
expect_line 2 "unknown subcommand 'bogus' (known: info, dequant, run, demo, bench, support)" "$bin" bogus
expect_line 2 "A subcommand is required" "$bin"
expect_line 2 "--tokens: 'ten' is not an integer" "$bin" demo --tokens ten
expect_line 2 "--backend" "$bin" run --gguf "$model" --layer 0 --x "$x0" --out "$tmp/y.npy" --backend tpu
expect_line 2 "--nope" "$bin" demo --nope
expect_line 2 "--seed: '-1' is not a seed" "$bin" demo --seed -1 --tokens 1
expect_line 2 "--seed: '99999999999999999999999' is not a seed" "$bin" bench --seed 99999999999999999999999
expect_line 2 "--down: 'f32' is not a block format of expert weights" "$bin" bench --down f32
"$bin" --help >"$tmp/out" 2>&1 || fail "--help exited non-zero"

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all hardening checks passed"
