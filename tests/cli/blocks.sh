#!/usr/bin/env bash
# `run` and `info` on small seeded GGUF files laid out like each architecture's: runs exit 0 with
# bitwise-equal arms, refusals exit 1 with one line naming the architecture, tensor or key.
# Usage: blocks.sh <strata-moe> <tests/data>
set -u
BIN="$1"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
tmp="$TMP"
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
SEED=$RANDOM
echo "seed $SEED"

# make <out> <arch> <options...>: a one-MoE-layer file (d 128, f 64, E 8), Q8_0 experts.
make_gguf() {
  python3 - "$SEED" "$@" <<'PY'
import random, struct, sys
seed, out, arch, opts = int(sys.argv[1]), sys.argv[2], sys.argv[3], set(sys.argv[4:])
rng = random.Random(seed * 7919 + sum(map(ord, out)))
d, f, E, k = 128, 64, 8, 2
kv, tensors = [], []
def s(x): return struct.pack("<Q", len(x)) + x.encode()
def key(name, t, payload): kv.append(s(name) + struct.pack("<I", t) + payload)
def u32(name, v): key(name, 4, struct.pack("<I", v))
def f32(name, v): key(name, 6, struct.pack("<f", v))
def q8(rows, cols):
    b = bytearray()
    for _ in range(rows * cols // 32):
        b += struct.pack("<e", rng.uniform(0.004, 0.02)) + bytes(rng.randrange(256) for _ in range(32))
    return bytes(b)
def floats(n, sd): return struct.pack("<%df" % n, *[rng.gauss(0, sd) for _ in range(n)])
def tensor(name, ttype, ne, data): tensors.append((name, ttype, ne, data))
layer = 1 if "lead" in opts else 0
if "noarch" not in opts:
    key("general.architecture", 8, s(arch))
    u32(arch + ".block_count", layer + 1)
    u32(arch + ".expert_count", E)
    u32(arch + ".expert_used_count", k)
if "gating9" in opts: u32(arch + ".expert_gating_func", 9)
if "lead" in opts: u32(arch + ".leading_dense_block_count", 1)
if "split2" in opts or "split1" in opts:
    key("split.no", 2, struct.pack("<H", 1 if "split2" in opts else 0))
    key("split.count", 2, struct.pack("<H", 2))
if "lead" in opts:
    tensor("blk.0.ffn_gate.weight", 0, [d, 96], floats(d * 96, 0.1))
    tensor("blk.0.ffn_up.weight", 0, [d, 96], floats(d * 96, 0.1))
    tensor("blk.0.ffn_down.weight", 0, [96, d], floats(d * 96, 0.1))
b = "blk.%d." % layer
if "noexperts" not in opts:
    tensor(b + "ffn_gate_inp.weight", 0, [d, E], floats(d * E, 0.3))
    if "perexpert" in opts:
        for e in range(E):
            tensor(b + "ffn_gate.%d.weight" % e, 8, [d, f], q8(f, d))
            tensor(b + "ffn_up.%d.weight" % e, 8, [d, f], q8(f, d))
            tensor(b + "ffn_down.%d.weight" % e, 8, [f, d], q8(d, f))
    else:
        tensor(b + "ffn_gate_exps.weight", 8, [d, f, E], q8(f * E, d))
        tensor(b + "ffn_up_exps.weight", 8, [d, f, E], q8(f * E, d))
        tensor(b + "ffn_down_exps.weight", 8, [f, d, E], q8(d * E, f))
if "biases" in opts:
    tensor(b + "ffn_gate_inp.bias", 0, [E], floats(E, 0.5))
    tensor(b + "ffn_gate_exps.bias", 0, [f, E], floats(f * E, 1.0))
    tensor(b + "ffn_up_exps.bias", 0, [f, E], floats(f * E, 1.0))
    tensor(b + "ffn_down_exps.bias", 0, [d, E], floats(d * E, 1.0))
if "shared" in opts:
    tensor(b + "ffn_gate_shexp.weight", 8, [d, 64], q8(64, d))
    tensor(b + "ffn_up_shexp.weight", 8, [d, 64], q8(64, d))
    tensor(b + "ffn_down_shexp.weight", 8, [64, d], q8(d, 64))
    if "gated" in opts: tensor(b + "ffn_gate_inp_shexp.weight", 0, [d], floats(d, 0.2))
if "extra" in opts: tensor(b + "ffn_up_exps_s.weight", 0, [E], floats(E, 1.0))
hdr = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv)
offset, infos, blob = 0, b"", b""
for name, ttype, ne, data in tensors:
    infos += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
    infos += struct.pack("<IQ", ttype, offset)
    pad = (len(data) + 31) // 32 * 32
    blob += data + bytes(pad - len(data))
    offset += pad
head = hdr + infos
head += bytes((len(head) + 31) // 32 * 32 - len(head))
open(out, "wb").write(head + blob)
PY
}
write_x() {  # write_x <file> <rows>: random f32 [rows, 128]
  python3 - "$1" "$2" "$SEED" <<'PY'
import random, struct, sys
path, rows, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 128), }" % rows
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % (rows * 128), *[rng.gauss(0, 1.5) for _ in range(rows * 128)]))
PY
}
write_x "$TMP/x.npy" 13

# ---- runs ----------------------------------------------------------------------------------------
run_block() {  # run_block <label> <gguf> <layer> <stderr needle>
  local label=$1 file=$2 layer=$3 needle=$4
  "$BIN" run --gguf "$file" --layer "$layer" --x "$TMP/x.npy" --out "$TMP/$label.prod.npy" --arm production \
    2>"$TMP/err" || { fail "$label: run exited non-zero: $(cat "$TMP/err")"; return; }
  grep -qF -- "$needle" "$TMP/err" || fail "$label: stderr lacks '$needle': $(cat "$TMP/err")"
  "$BIN" run --gguf "$file" --layer "$layer" --x "$TMP/x.npy" --out "$TMP/$label.fused.npy" --arm fused \
    --threads 1 2>"$TMP/err" || fail "$label: fused run: $(cat "$TMP/err")"
  cmp -s "$TMP/$label.prod.npy" "$TMP/$label.fused.npy" || fail "$label: production and fused outputs differ"
}
make_gguf "$TMP/qwen35.gguf" qwen35moe shared gated
run_block qwen35moe "$TMP/qwen35.gguf" 0 "shared expert ffn 64 (sigmoid-gated)"
make_gguf "$TMP/ds.gguf" deepseek2 shared lead
run_block deepseek2 "$TMP/ds.gguf" 1 "shared expert ffn 64 (unscaled)"
make_gguf "$TMP/oss.gguf" gpt-oss biases
run_block gpt-oss "$TMP/oss.gguf" 0 "swiglu-oai"
make_gguf "$TMP/mix.gguf" llama perexpert
run_block mixtral "$TMP/mix.gguf" 0 "softmax, top-2 of 8, normalised"
make_gguf "$TMP/q3.gguf" qwen3moe
run_block qwen3moe "$TMP/q3.gguf" 0 "softmax, top-2 of 8, normalised"

# Routing overrides for experiments.
"$BIN" run --gguf "$TMP/q3.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/y.npy" --k 3 --gating sigmoid \
  --ids-out "$TMP/ids.npy" 2>"$TMP/err" || fail "--k 3 --gating sigmoid: $(cat "$TMP/err")"
grep -qF "sigmoid, top-3 of 8" "$TMP/err" || fail "--k/--gating not applied: $(cat "$TMP/err")"
head -c 128 "$TMP/ids.npy" | grep -aq "'shape': (13, 3)" || fail "--k 3: ids-out is not [13, 3]"
expect_status 2 "--k" "$BIN" run --gguf "$TMP/q3.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/y.npy" --k 9
expect_status 2 "--gating" "$BIN" run --gguf "$TMP/q3.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/y.npy" --gating max

# The CUDA arms do not compute gpt-oss's biases: refused by name (or no CUDA at all here).
"$BIN" run --gguf "$TMP/oss.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/y_cuda.npy" --backend cuda 2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] || fail "gpt-oss --backend cuda exited $rc, expected 1"
grep -qE "per-expert biases|built without CUDA|no CUDA device" "$TMP/err" || fail "gpt-oss on cuda: $(cat "$TMP/err")"
[ -e "$TMP/y_cuda.npy" ] && fail "a refused run wrote its output"

# ---- refusals: exit 1, one line naming what is not computed --------------------------------
refuse() {  # refuse <needle> <gguf> [layer]
  expect_status 1 "$1" "$BIN" run --gguf "$2" --layer "${3:-0}" --x "$TMP/x.npy" --out "$TMP/refused.npy"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "refusal '$1' is not one line: $(cat "$TMP/err")"
  [ -e "$TMP/refused.npy" ] && fail "refusal '$1' wrote its output"
}
make_gguf "$TMP/grok.gguf" grok
refuse "architecture 'grok'" "$TMP/grok.gguf"
make_gguf "$TMP/extra.gguf" qwen3moe extra
refuse "blk.0.ffn_up_exps_s.weight" "$TMP/extra.gguf"
make_gguf "$TMP/noshared.gguf" qwen35moe
refuse "blk.0.ffn_gate_shexp.weight" "$TMP/noshared.gguf"
make_gguf "$TMP/nogate.gguf" qwen3next shared
refuse "blk.0.ffn_gate_inp_shexp.weight" "$TMP/nogate.gguf"
make_gguf "$TMP/gating.gguf" glm4moe gating9
refuse "glm4moe.expert_gating_func" "$TMP/gating.gguf"
make_gguf "$TMP/qbias.gguf" qwen3moe biases
refuse "biases are not part of the qwen3moe block" "$TMP/qbias.gguf"
expect_status 2 "dense FFN layer" "$BIN" run --gguf "$TMP/ds.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/y.npy"

# ---- info: never refuses; says what runs each layer or why not ------------------------------
"$BIN" info "$TMP/grok.gguf" >"$TMP/info.txt" 2>"$TMP/err" || fail "info refused grok: $(cat "$TMP/err")"
grep -qF "cannot run: architecture 'grok'" "$TMP/info.txt" || fail "info grok: $(cat "$TMP/info.txt")"
"$BIN" info "$TMP/ds.gguf" --no-tensors >"$TMP/info.txt" 2>"$TMP/err" || fail "info ds: $(cat "$TMP/err")"
grep -qE "^dense layers +0 \(skipped by run\)" "$TMP/info.txt" || fail "info: no dense layer line: $(cat "$TMP/info.txt")"
grep -qF "shared expert ffn 64 (unscaled)" "$TMP/info.txt" || fail "info: no shared expert: $(cat "$TMP/info.txt")"
grep -qE "^blk.1.ffn_gate_exps.weight +q8_0" "$TMP/info.txt" && fail "info --no-tensors listed tensors"
"$BIN" info "$TMP/mix.gguf" >"$TMP/info.txt" 2>"$TMP/err" || fail "info mix: $(cat "$TMP/err")"
grep -qE "^MoE layers +1$" "$TMP/info.txt" || fail "info: per-expert mixtral layer not found: $(cat "$TMP/info.txt")"
grep -qF "per-expert tensors" "$TMP/info.txt" || fail "info: per-expert tensors not named"
grep -qE "^blk.0.ffn_down.7.weight +q8_0 +\[64, 128\] +8704$" "$TMP/info.txt" || fail "info: tensor list"
"$BIN" info "$TMP/oss.gguf" --json --keys >"$TMP/info.json" 2>"$TMP/err" || fail "info --json: $(cat "$TMP/err")"
python3 - "$TMP/info.json" <<'PY' || fail "info --json content"
import json, sys
doc = json.load(open(sys.argv[1]))
l = doc["layers"][0]
assert l["kind"] == "moe" and l["cpu"]["runs"] and not l["cuda"]["runs"], l
assert "expert biases" in l["extras"] and any("swiglu-oai" in e for e in l["extras"]), l
assert "router bias" in l["routing"] and "softmax over the selected" in l["routing"], l
assert doc["metadata"]["gpt-oss.expert_used_count"] == 2
PY
"$BIN" info "$TMP/oss.gguf" --keys --no-tensors >"$TMP/info.txt" 2>"$TMP/err"
grep -qE '^general.architecture +string +"gpt-oss"$' "$TMP/info.txt" || fail "info --keys: $(cat "$TMP/info.txt")"

# A split GGUF: shards found beside each other; the second shard is read with the first's keys.
make_gguf "$TMP/m-00001-of-00002.gguf" qwen3moe split1 noexperts
make_gguf "$TMP/m-00002-of-00002.gguf" qwen3moe split2 noarch
"$BIN" info "$TMP/m-00002-of-00002.gguf" >"$TMP/info.txt" 2>"$TMP/err" || fail "info shard 2: $(cat "$TMP/err")"
grep -qE "^split +shard 2 of 2$" "$TMP/info.txt" || fail "info: split not recognised: $(cat "$TMP/info.txt")"
grep -qE "^architecture +qwen3moe$" "$TMP/info.txt" || fail "info shard 2: no architecture from shard 1"
grep -qF "m-00001-of-00002.gguf (found)" "$TMP/info.txt" || fail "info: first shard not found"
"$BIN" run --gguf "$TMP/m-00001-of-00002.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/split.npy" 2>"$TMP/err" ||
  fail "run across shards: $(cat "$TMP/err")"
# dequant finds a tensor in whichever shard holds it.
"$BIN" dequant --gguf "$TMP/m-00001-of-00002.gguf" --tensor blk.0.ffn_down_exps.weight \
  --out "$TMP/down.npy" 2>"$TMP/err" || fail "dequant across shards: $(cat "$TMP/err")"
# A second shard whose own keys make it another shard is refused, named, when the first is opened.
make_gguf "$TMP/bad-00001-of-00002.gguf" qwen3moe split1 noexperts
make_gguf "$TMP/bad-00002-of-00002.gguf" qwen3moe split1 noarch
"$BIN" run --gguf "$TMP/bad-00001-of-00002.gguf" --layer 0 --x "$TMP/x.npy" --out "$TMP/bad.npy" 2>"$TMP/err"
status=$?
[[ $status == 1 ]] || fail "run with a damaged second shard exited $status: $(cat "$TMP/err")"
grep -qF "bad-00002-of-00002.gguf: keys 'split.no' = 0 and 'split.count' = 2 disagree with the file name (shard 00002 of 00002)" "$TMP/err" ||
  fail "damaged second shard: $(cat "$TMP/err")"
[[ -e $TMP/bad.npy ]] && fail "a refused run wrote its output"
rm "$TMP/m-00001-of-00002.gguf"
"$BIN" info "$TMP/m-00002-of-00002.gguf" >"$TMP/info.txt" 2>"$TMP/err" || fail "info lone shard 2: $(cat "$TMP/err")"
grep -qF "m-00001-of-00002.gguf (missing)" "$TMP/info.txt" || fail "info: missing shard not said"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all block checks passed"
