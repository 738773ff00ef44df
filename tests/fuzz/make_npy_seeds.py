#!/usr/bin/env python3
"""Writes the .npy fuzzer's seed corpus into DIR: the bundled vectors' .npy files and small
arrays of both dtypes, versions 1.0 and 2.0, 0 to 3 dimensions.

Usage: make_npy_seeds.py VECTORS_DIR DIR
"""
import glob
import os
import struct
import sys


def npy(descr, shape, values, version=1):
    dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pre = 10 if version == 1 else 12
    header += " " * (63 - (pre + len(header)) % 64) + "\n"
    length = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    data = struct.pack("<%d%s" % (len(values), "f" if descr == "<f4" else "i"), *values)
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data


def main():
    vectors, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for i, path in enumerate(sorted(glob.glob(os.path.join(vectors, "**", "*.npy"), recursive=True))):
        if os.path.getsize(path) <= 65536:
            with open(path, "rb") as f, open(os.path.join(out, "vector%d.npy" % i), "wb") as g:
                g.write(f.read())
    seeds = {
        "scalar": npy("<f4", (), [1.5]),
        "row": npy("<f4", (4,), [0.0, 1.0, -2.0, 3.5]),
        "matrix": npy("<i4", (2, 3), list(range(6))),
        "cube_v2": npy("<f4", (2, 1, 2), [1.0, 2.0, 3.0, 4.0], version=2),
        "empty": npy("<i4", (0, 4), []),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name + ".npy"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
