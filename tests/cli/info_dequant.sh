#!/usr/bin/env bash
# `strata-moe info` and `strata-moe dequant` through the real binary: output, exit codes, messages.
# Usage: info_dequant.sh <path-to-strata-moe> <tests/data dir>
set -uo pipefail
bin=$1
data=$2
model=$data/vectors/moe/model.gguf
decode=$data/vectors/decode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"

# ---- info ---------------------------------------------------------------------------------
if "$bin" info "$model" >"$tmp/info.txt" 2>"$tmp/err"; then
  grep -q '^architecture  *qwen3moe$' "$tmp/info.txt" || fail "info: no architecture line"
  grep -q '^version  *3$' "$tmp/info.txt" || fail "info: no version line"
  grep -q '^tensors  *8 (3.48 MiB)$' "$tmp/info.txt" || fail "info: no tensor count line"
  for layer in 0 1; do
    grep -Eq "^ +$layer +moe +512 +192 +16 +4 +iq3_s +iq3_s +q2_0 +1794048\$" "$tmp/info.txt" ||
      fail "info: no row for layer $layer: $(cat "$tmp/info.txt")"
  done
else
  fail "info exited non-zero: $(cat "$tmp/err")"
fi

if "$bin" info "$model" --json >"$tmp/info.json" 2>"$tmp/err"; then
  python3 - "$tmp/info.json" <<'PY' || fail "info --json content"
import json, sys
doc = json.load(open(sys.argv[1]))
assert set(doc) == {"file", "architecture", "version", "alignment", "split", "metadata",
                    "tensor_count", "tensors", "layers"}, doc.keys()
assert doc["architecture"] == "qwen3moe" and doc["split"] is None
assert doc["metadata"]["qwen3moe.expert_used_count"] == 4, doc["metadata"]
assert doc["tensor_count"] == 8 and len(doc["tensors"]) == 8
assert {"name": "blk.1.ffn_down_exps.weight", "type": "q2_0", "shape": [192, 512, 16],
        "bytes": 442368, "file": doc["file"]} in doc["tensors"], doc["tensors"]
layers = doc["layers"]
assert [l["layer"] for l in layers] == [0, 1], layers
gate_bytes = 512 // 256 * 110 * 192 * 16
down_bytes = 192 // 64 * 18 * 512 * 16
for l in layers:
    assert l["kind"] == "moe" and l["routing"] == "softmax, top-4 of 16, normalised", l
    assert l["cpu"]["runs"] and l["cpu"]["arms"] == ["production", "fused"], l
    assert l["cpu"]["profiles"] == {"q8": ["production", "fused"], "q10": ["production", "fused"]}, l
    assert l["cpu"]["default_profile"] == "q10", l
    assert l["extras"] == [], l
    # The CUDA arms the registry says carry iq3_s gate/up and q2_0 down at d = 512, f = 192.
    if "built without CUDA" not in l["cuda"]["text"]:
        assert l["cuda"]["profiles"]["q8"] == ["production", "fused-sm80", "fused-hopper", "fused-wmma"], l
        assert set(l["cuda"]["profiles"]["q10"]) == {"fused-hopper", "fused-sm80", "fused-wmma"}, l
        assert l["cuda"]["default_profile"] == "q10", l
    assert (l["d"], l["ffn"], l["n_expert"], l["n_expert_used"]) == (512, 192, 16, 4), l
    assert (l["gate"], l["up"], l["down"]) == ("iq3_s", "iq3_s", "q2_0"), l
    assert l["bytes"] == 2 * gate_bytes + down_bytes, l
PY
else
  fail "info --json exited non-zero: $(cat "$tmp/err")"
fi

"$bin" --version >"$tmp/version.txt" 2>&1 || fail "--version exited non-zero"
grep -Eq '^strata-moe [0-9]+\.[0-9]+\.[0-9]+( \([0-9a-f]{12}\))?$' "$tmp/version.txt" || fail "--version: $(cat "$tmp/version.txt")"

# ---- dequant --type: bit-exact against the reference decodes -------------------------------
for pair in "iq3_s:IQ3_S" "q2_0:q2_0"; do
  name=${pair%%:*}
  spelled=${pair##*:}
  if "$bin" dequant --type "$spelled" --blocks "$decode/$name.blocks" --out "$tmp/$name.f32" 2>"$tmp/err"; then
    cmp -s "$tmp/$name.f32" "$decode/$name.f32" || fail "dequant --type $spelled differs from $name.f32"
  else
    fail "dequant --type $spelled exited non-zero: $(cat "$tmp/err")"
  fi
done

# ---- dequant --gguf: .npy header, size, and the same values as decoding the raw blocks -------
tensor=blk.1.ffn_down_exps.weight
if "$bin" dequant --gguf "$model" --tensor "$tensor" --out "$tmp/down.npy" 2>"$tmp/err"; then
  # Cut the tensor's raw blocks out of the file, decode them with --type, compare with the .npy data.
  python3 - "$model" "$tensor" "$tmp/down.npy" "$tmp/down.blocks" <<'PY' || fail "dequant --gguf .npy header/size"
import struct, sys
model, name, npy_path, blocks_path = sys.argv[1:]
b = open(model, "rb").read()
pos = 24
def u32():
    global pos; v = struct.unpack_from("<I", b, pos)[0]; pos += 4; return v
def u64():
    global pos; v = struct.unpack_from("<Q", b, pos)[0]; pos += 8; return v
def string():
    global pos; n = u64(); s = b[pos:pos + n]; pos += n; return s.decode()
n_tensors, n_kv = struct.unpack_from("<QQ", b, 8)
sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip(t):
    global pos
    if t == 8: string()
    elif t == 9:
        et = u32(); n = u64()
        for _ in range(n): skip(et)
    else: pos += sizes[t]
for _ in range(n_kv):
    string(); skip(u32())
infos = {}
for _ in range(n_tensors):
    nm = string(); nd = u32(); ne = [u64() for _ in range(nd)]; ty = u32(); off = u64()
    infos[nm] = (ne, ty, off)
data = (pos + 31) // 32 * 32
ne, ty, off = infos[name]
assert ty == 42, ty  # Q2_0
nbytes = ne[0] // 64 * 18 * ne[1] * ne[2]
open(blocks_path, "wb").write(b[data + off:data + off + nbytes])
npy = open(npy_path, "rb").read()
assert npy[:8] == b"\x93NUMPY\x01\x00", npy[:8]
hlen = struct.unpack_from("<H", npy, 8)[0]
header = npy[10:10 + hlen].decode()
assert "'descr': '<f4'" in header and "'fortran_order': False" in header, header
assert "'shape': (16, 512, 192)" in header, header
assert (10 + hlen) % 64 == 0
assert len(npy) == 10 + hlen + 16 * 512 * 192 * 4, len(npy)
open(npy_path + ".data", "wb").write(npy[10 + hlen:])
PY
  "$bin" dequant --type q2_0 --blocks "$tmp/down.blocks" --out "$tmp/down.f32" 2>"$tmp/err" ||
    fail "dequant of the cut blocks: $(cat "$tmp/err")"
  cmp -s "$tmp/down.f32" "$tmp/down.npy.data" || fail "dequant --gguf values differ from --type decode"
else
  fail "dequant --gguf exited non-zero: $(cat "$tmp/err")"
fi

# An F32 tensor is copied as is.
if "$bin" dequant --gguf "$model" --tensor blk.0.ffn_gate_inp.weight --out "$tmp/router.npy" 2>"$tmp/err"; then
  [[ $(stat -c %s "$tmp/router.npy") == $((128 + 512 * 16 * 4)) ]] || fail "router .npy size"
  head -c 128 "$tmp/router.npy" | grep -aq "'shape': (16, 512)" || fail "router .npy shape"
else
  fail "dequant --gguf router exited non-zero: $(cat "$tmp/err")"
fi

# ---- bad input ------------------------------------------------------------------------------
expect_status 1 "no-such.gguf" "$bin" info "$tmp/no-such.gguf"
head -c 3000 "$model" >"$tmp/truncated.gguf"
expect_status 1 "blk." "$bin" info "$tmp/truncated.gguf"
expect_status 1 "past the end" "$bin" info "$tmp/truncated.gguf" --json
head -c 700 "$model" >"$tmp/cut-header.gguf"
expect_status 1 "cut-header.gguf" "$bin" dequant --gguf "$tmp/cut-header.gguf" --tensor x --out "$tmp/x.npy"
printf 'GGUF\001\000\000\000' >"$tmp/v1.gguf"
expect_status 1 "version 1" "$bin" info "$tmp/v1.gguf"
expect_status 2 "--type 'q9_9'" "$bin" dequant --type q9_9 --blocks "$decode/q2_0.blocks" --out "$tmp/x.f32"
expect_status 2 "--blocks" "$bin" dequant --type iq3_s --blocks "$decode/q2_0.blocks" --out "$tmp/x.f32"
expect_status 1 "no-such.blocks" "$bin" dequant --type iq3_s --blocks "$tmp/no-such.blocks" --out "$tmp/x.f32"
expect_status 2 "--tensor 'blk.9.nothing'" "$bin" dequant --gguf "$model" --tensor blk.9.nothing --out "$tmp/x.npy"
expect_status 2 "either" "$bin" dequant --gguf "$model" --type q2_0 --out "$tmp/x.npy"
expect_status 2 "--out" "$bin" dequant --type q2_0 --blocks "$decode/q2_0.blocks"
expect_status 2 "file" "$bin" info

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all info/dequant checks passed"
