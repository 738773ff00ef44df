#!/usr/bin/env python3
"""Writes the GGUF fuzzer's seed corpus into DIR.

From the bundled model: the whole file and prefixes (4 KiB, 64 KiB, up to the end of the tensor
infos, the counts only). Plus small complete MoE files, so that mutations reach layer discovery
(the bundled model is far longer than the fuzzer's input limit): separate and merged gate/up,
v2 and v3, with and without shared experts.

Usage: make_seeds.py MODEL.gguf DIR
"""
import os
import random
import struct
import sys

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
BLOCKS = {0: (1, 4), 1: (1, 2), 21: (256, 110), 42: (64, 18)}  # f32, f16, iq3_s, q2_0


def tensor_infos_end(b):
    pos = 24

    def u32():
        nonlocal pos
        pos += 4
        return struct.unpack_from("<I", b, pos - 4)[0]

    def u64():
        nonlocal pos
        pos += 8
        return struct.unpack_from("<Q", b, pos - 8)[0]

    def skip(t):
        nonlocal pos
        if t == 8:
            n = u64()
            pos += n
        elif t == 9:
            et, n = u32(), u64()
            for _ in range(n):
                skip(et)
        else:
            pos += struct.calcsize("<" + SCALAR[t])

    n_tensors, n_kv = struct.unpack_from("<QQ", b, 8)
    for _ in range(n_kv):
        n = u64()
        pos += n
        skip(u32())
    for _ in range(n_tensors):
        n = u64()
        pos += n
        dims = u32()
        pos += 8 * dims + 12
    return pos


def gguf_string(s):
    s = s.encode()
    return struct.pack("<Q", len(s)) + s


def small_moe(version, merged, shared, d=256, f=64, n_expert=2):
    kvs = [("general.architecture", 8, gguf_string("qwen3moe")),
           ("general.alignment", 4, struct.pack("<I", 32)),
           ("qwen3moe.block_count", 4, struct.pack("<I", 1)),
           ("qwen3moe.embedding_length", 4, struct.pack("<I", d)),
           ("qwen3moe.expert_feed_forward_length", 4, struct.pack("<I", f)),
           ("qwen3moe.expert_count", 4, struct.pack("<I", n_expert)),
           ("qwen3moe.expert_used_count", 4, struct.pack("<I", 1)),
           ("test.nested", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 5, 2) + struct.pack("<ii", 1, -1))]
    tensors = [("blk.0.ffn_gate_inp.weight", 0, [d, n_expert])]
    if merged:
        tensors.append(("blk.0.ffn_gate_up_exps.weight", 21, [d, 2 * f, n_expert]))
    else:
        tensors += [("blk.0.ffn_gate_exps.weight", 21, [d, f, n_expert]),
                    ("blk.0.ffn_up_exps.weight", 21, [d, f, n_expert])]
    tensors.append(("blk.0.ffn_down_exps.weight", 42, [f, d, n_expert]))
    if shared:
        tensors += [("blk.0.ffn_gate_inp_shexp.weight", 0, [d]),
                    ("blk.0.ffn_gate_shexp.weight", 1, [d, 32]),
                    ("blk.0.ffn_up_shexp.weight", 1, [d, 32]),
                    ("blk.0.ffn_down_shexp.weight", 1, [32, d])]
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, t, payload in kvs:
        out += gguf_string(key) + struct.pack("<I", t) + payload
    data = b""
    rng = random.Random(len(tensors) * 7 + version)
    for name, t, ne in tensors:
        values, block = BLOCKS[t]
        n = 1
        for x in ne:
            n *= x
        out += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", x) for x in ne)
        out += struct.pack("<IQ", t, len(data))
        data += bytes(rng.getrandbits(8) for _ in range(n // values * block))
        data += b"\0" * (-len(data) % 32)
    out += b"\0" * (-len(out) % 32)
    return out + data


def main():
    model_path, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    model = open(model_path, "rb").read()
    seeds = {"model.gguf": model, "model-4k.gguf": model[:4096], "model-64k.gguf": model[:65536],
             "model-infos.gguf": model[:tensor_infos_end(model)], "model-counts.gguf": model[:24]}
    for version in (2, 3):
        for merged in (False, True):
            for shared in (False, True):
                seeds[f"small-v{version}-{'merged' if merged else 'split'}-{'shared' if shared else 'plain'}.gguf"] = \
                    small_moe(version, merged, shared)
    for name, data in seeds.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
