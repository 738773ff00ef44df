#!/usr/bin/env bash
# strata-moe run: happy paths on the bundled vectors, and bad input -> exit status + a message
# naming the argument.  Usage: run.sh <strata-moe> <tests/data>
set -u
BIN="$1"
DATA="$2/vectors/moe"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
tmp="$TMP"
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"

# expect_error <exit status> <text the message must contain> <args...>
expect_error() {
  local want_rc="$1" want_text="$2"
  shift 2
  expect_status "$want_rc" "$want_text" "$BIN" "$@"
}

# Small .npy files for the bad-input cases (numpy-free: header + raw little-endian data).
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

GGUF="$DATA/model.gguf"
X0="$DATA/layer0.x.npy"
IDS0="$DATA/layer0.ids.npy"
W0="$DATA/layer0.weights.npy"

# ---- happy paths ------------------------------------------------------------------------------
"$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_prod.npy" --arm production \
  --numerics q8 2>"$TMP/err" || fail "run with ids: $(cat "$TMP/err")"
"$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_fused.npy" --arm fused \
  --numerics q8 --threads 1 2>"$TMP/err" || fail "run fused: $(cat "$TMP/err")"
cmp -s "$TMP/y_prod.npy" "$TMP/y_fused.npy" || fail "production and fused outputs differ"
# The last line names the arm and the profile that ran: with nothing named, q10 (the CPU backend
# has a q10 arm for every format) on production.
"$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_default.npy" \
  2>"$TMP/err" || fail "run with the defaults: $(cat "$TMP/err")"
tail -n 1 "$TMP/err" | grep -q "production arm, q10 numerics on cpu ->" ||
  fail "the default run's last line does not name production and q10: $(cat "$TMP/err")"
"$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_q10.npy" \
  --numerics q10 --arm fused 2>"$TMP/err" || fail "run --numerics q10: $(cat "$TMP/err")"
cmp -s "$TMP/y_default.npy" "$TMP/y_q10.npy" || fail "the default run is not the q10 run"
cmp -s "$TMP/y_default.npy" "$TMP/y_prod.npy" && fail "the q10 and q8 runs gave the same bits"
# A CUDA arm named on the CPU backend: the CPU fused arm runs, and the line says why.
"$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_named.npy" \
  --arm fused-hopper --numerics q8 2>"$TMP/err" || fail "run --arm fused-hopper: $(cat "$TMP/err")"
tail -n 1 "$TMP/err" | grep -q "fused arm, q8 numerics on cpu (requested fused-hopper: the cpu backend has no fused-hopper arm" ||
  fail "--arm fused-hopper on cpu: the last line does not say what ran and why: $(cat "$TMP/err")"
cmp -s "$TMP/y_prod.npy" "$TMP/y_named.npy" || fail "--arm fused-hopper on cpu: output differs"
# The environment is the default of a call that names nothing; a bad value is refused by name.
STRATA_NUMERICS=q8 STRATA_PF_FUSED=1 "$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" \
  --out "$TMP/y_env8.npy" 2>"$TMP/err" || fail "run with STRATA_NUMERICS=q8: $(cat "$TMP/err")"
tail -n 1 "$TMP/err" | grep -q "fused arm, q8 numerics on cpu ->" || fail "STRATA_NUMERICS=q8: $(cat "$TMP/err")"
STRATA_PF_FUSED=yes expect_error 2 "STRATA_PF_FUSED" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" \
  --weights "$W0" --out "$TMP/y_bad_env.npy"
STRATA_PF_FUSED=1 "$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_env.npy" \
  2>"$TMP/err" || fail "run with STRATA_PF_FUSED=1"
grep -q "fused arm" "$TMP/err" || fail "STRATA_PF_FUSED=1 did not select the fused arm: $(cat "$TMP/err")"
STRATA_PF_FUSED=1 "$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_env.npy" \
  --arm production 2>"$TMP/err" || fail "run --arm production"
grep -q "production arm" "$TMP/err" || fail "--arm did not override STRATA_PF_FUSED: $(cat "$TMP/err")"
# Router routing reproduces the vectors' ids.
"$BIN" run --gguf "$GGUF" --layer 1 --x "$DATA/layer1.x.npy" --out "$TMP/y_routed.npy" --ids-out "$TMP/ids.npy" \
  --weights-out "$TMP/w.npy" 2>"$TMP/err" || fail "router run: $(cat "$TMP/err")"
python3 - "$TMP/ids.npy" "$DATA/layer1.ids.npy" <<'PY' || fail "router ids differ from the vectors"
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
# Same data bytes after each header (both int32 C-order [T, k]).
def body(x):
    n = int.from_bytes(x[8:10], "little"); return x[10 + n:]
sys.exit(0 if body(a) == body(b) else 1)
PY

# ---- --backend cuda: bitwise equal to the CPU on a GPU machine, one clear error elsewhere -------
for arm in production fused fused-sm80 fused-wmma; do
  "$BIN" run --gguf "$GGUF" --layer 0 --x "$X0" --ids "$IDS0" --weights "$W0" --out "$TMP/y_cuda_$arm.npy" \
    --arm "$arm" --numerics q8 --backend cuda >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    # fused runs fused-hopper on sm_90a, else fused-sm80: the line names the one that ran.
    want="$arm"
    [ "$arm" = fused ] && want="fused-(hopper|sm80)"
    tail -n 1 "$TMP/err" | grep -Eq "; $want arm, q8 numerics on cuda ->" ||
      fail "--backend cuda --arm $arm: the last line does not name the arm that ran: $(cat "$TMP/err")"
    cmp -s "$TMP/y_prod.npy" "$TMP/y_cuda_$arm.npy" || fail "--backend cuda --arm $arm output differs from the CPU's"
  else
    [ "$rc" -eq 1 ] || fail "--backend cuda without a device -> exit $rc, expected 1 ($(cat "$TMP/err"))"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "--backend cuda without a device: not one line: $(cat "$TMP/err")"
    grep -qE "no CUDA device|built without CUDA" "$TMP/err" ||
      fail "--backend cuda without a device: unclear message '$(cat "$TMP/err")'"
    [ -e "$TMP/y_cuda_$arm.npy" ] && fail "a failed --backend cuda run wrote its output"
  fi
done
expect_error 2 "--backend" run --gguf "$GGUF" --layer 0 --x "$X0" --out "$TMP/y.npy" --backend tpu
# The demo: every CUDA arm PASSes (bitwise equal to each other and to the CPU production arm on the
# oracle tokens) on a GPU machine; elsewhere one clear error line, before any work.
"$BIN" demo --backend cuda --tokens 256 >"$TMP/out" 2>"$TMP/err"
rc=$?
if grep -qE "no CUDA device|built without CUDA" "$TMP/err"; then
  [ "$rc" -eq 1 ] || fail "demo --backend cuda without a device -> exit $rc, expected 1"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "demo --backend cuda without a device: not one line: $(cat "$TMP/err")"
else
  [ "$rc" -eq 0 ] || fail "demo --backend cuda -> exit $rc: $(cat "$TMP/out" "$TMP/err")"
  grep -q "vs CPU production arm on the oracle tokens, bitwise: equal" "$TMP/out" ||
    fail "demo --backend cuda: GPU rows not bitwise equal to the CPU's: $(cat "$TMP/out")"
fi

# ---- bad input ----------------------------------------------------------------------------------
expect_error 2 "--layer" run --gguf "$GGUF" --layer 7 --x "$X0" --out "$TMP/y.npy"
expect_error 2 "--x" run --gguf "$GGUF" --layer 0 --x "$IDS0" --out "$TMP/y.npy"
write_npy "$TMP/x_narrow.npy" "<f4" "(2, 32)" "[0.5] * 64"
expect_error 2 "--x" run --gguf "$GGUF" --layer 0 --x "$TMP/x_narrow.npy" --out "$TMP/y.npy"
write_npy "$TMP/x_nan.npy" "<f4" "(1, 512)" "[float('nan')] + [1.0] * 511"
expect_error 2 "--x" run --gguf "$GGUF" --layer 0 --x "$TMP/x_nan.npy" --out "$TMP/y.npy"
write_npy "$TMP/x1.npy" "<f4" "(1, 512)" "[0.25] * 512"
write_npy "$TMP/ids_range.npy" "<i4" "(1, 2)" "[0, 16]"
write_npy "$TMP/ids_ok.npy" "<i4" "(1, 2)" "[0, 3]"
write_npy "$TMP/ids_twice.npy" "<i4" "(1, 2)" "[3, 3]"
write_npy "$TMP/w_ok.npy" "<f4" "(1, 2)" "[0.5, 0.5]"
write_npy "$TMP/w_nan.npy" "<f4" "(1, 2)" "[float('nan'), 0.5]"
write_npy "$TMP/w_neg.npy" "<f4" "(1, 2)" "[0.5, -0.5]"
write_npy "$TMP/w_shape.npy" "<f4" "(1, 3)" "[0.5, 0.25, 0.25]"
write_npy "$TMP/ids_f32.npy" "<f4" "(1, 2)" "[0.0, 3.0]"
expect_error 2 "--ids" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_range.npy" --weights "$TMP/w_ok.npy" --out "$TMP/y.npy"
expect_error 2 "--ids" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_twice.npy" --weights "$TMP/w_ok.npy" --out "$TMP/y.npy"
expect_error 2 "--ids" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_f32.npy" --weights "$TMP/w_ok.npy" --out "$TMP/y.npy"
expect_error 2 "--weights" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_ok.npy" --weights "$TMP/w_nan.npy" --out "$TMP/y.npy"
expect_error 2 "--weights" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_ok.npy" --weights "$TMP/w_neg.npy" --out "$TMP/y.npy"
expect_error 2 "--weights" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_ok.npy" --weights "$TMP/w_shape.npy" --out "$TMP/y.npy"
expect_error 2 "--ids and --weights" run --gguf "$GGUF" --layer 0 --x "$TMP/x1.npy" --ids "$TMP/ids_ok.npy" --out "$TMP/y.npy"
expect_error 1 "--x" run --gguf "$GGUF" --layer 0 --x "$TMP/missing.npy" --out "$TMP/y.npy"
[ -e "$TMP/y.npy" ] && fail "a failed run wrote its output"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all run checks passed"
