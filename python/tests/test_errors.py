"""The package's error paths: every failure is a StrataMoeError subclass with the library's (or the
package's) message naming the argument; nothing crashes, nothing is written on a refusal."""

import ctypes
import os
import shutil
import tempfile
import unittest

import numpy as np

import strata_moe
from strata_moe import _core, _lib
from support import GGUF, SEED, bundled, distinct_routing


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.layer = strata_moe.Layer.from_gguf(GGUF, 0)
        cls.x, cls.ids, cls.weights = bundled(0)

    def assertRefused(self, cls, text, fn, *args, **kwargs):
        with self.assertRaises(cls) as ctx:
            fn(*args, **kwargs)
        self.assertIsInstance(ctx.exception, strata_moe.StrataMoeError)
        self.assertIn(text, str(ctx.exception))
        return ctx.exception

    def test_files(self):
        e = self.assertRefused(strata_moe.IoError, "nonexistent", strata_moe.GgufFile, "/nonexistent/model.gguf")
        self.assertEqual((e.status, e.status_name), (4, "io"))
        with tempfile.TemporaryDirectory() as tmp:
            damaged = os.path.join(tmp, "damaged.gguf")
            with open(GGUF, "rb") as src, open(damaged, "wb") as dst:
                dst.write(src.read(4096))  # header and tensor infos, data cut off
            self.assertRefused(strata_moe.BadFileError, "damaged.gguf", strata_moe.GgufFile, damaged)
            not_gguf = os.path.join(tmp, "x.npy")
            shutil.copy(GGUF.parent / "layer0.x.npy", not_gguf)
            self.assertRefused(strata_moe.BadFileError, "x.npy", strata_moe.GgufFile, not_gguf)
        self.assertRefused(strata_moe.InvalidArgumentError, "[0, 1]", strata_moe.Layer.from_gguf, GGUF, 5)

    def test_shapes_and_dtypes(self):
        x, ids, w = self.x, self.ids, self.weights
        self.assertRefused(strata_moe.InvalidArgumentError, "x: shape", self.layer, x[:, :256], ids, w)
        self.assertRefused(strata_moe.InvalidArgumentError, "x: dtype", self.layer, x.astype(np.float64), ids, w)
        self.assertRefused(strata_moe.InvalidArgumentError, "ids: shape", self.layer, x, ids[:5], w)
        self.assertRefused(strata_moe.InvalidArgumentError, "ids: dtype", self.layer, x, ids.astype(np.uint8), w)
        self.assertRefused(strata_moe.InvalidArgumentError, "weights: shape", self.layer, x, ids, w[:, :2])
        out = np.full((x.shape[0], 512), np.nan, dtype=np.float32)
        self.assertRefused(strata_moe.InvalidArgumentError, "out", self.layer, x, ids, w, out=out[:, ::2])
        self.assertRefused(strata_moe.InvalidArgumentError, "out_dtype", self.layer, x, ids, w, out_dtype=np.int8)
        self.assertRefused(strata_moe.InvalidArgumentError, "numerics", self.layer, x, ids, w, numerics="q9")
        self.assertRefused(strata_moe.InvalidArgumentError, "arm", self.layer, x, ids, w, arm="fast")

    def test_routing_is_checked_by_the_library_and_nothing_is_written(self):
        rng = np.random.default_rng(SEED + 7)
        ids, w = distinct_routing(rng, self.x.shape[0], 16, 4)
        cases = []
        bad = ids.copy(); bad[3, 1] = 16; cases.append(("ids", bad, w))
        bad = ids.copy(); bad[4, 2] = bad[4, 0]; cases.append(("ids", bad, w))
        bad = w.copy(); bad[2, 0] = -0.5; cases.append(("weights", ids, bad))
        bad = w.copy(); bad[2, 0] = np.inf; cases.append(("weights", ids, bad))
        wide = ids.astype(np.int64); wide[0, 0] += 1 << 32; cases.append(("ids", wide, w))
        for name, i, ww in cases:
            with self.subTest(name=name):
                out = np.full((self.x.shape[0], 512), 7.0, dtype=np.float32)
                e = self.assertRefused(strata_moe.InvalidArgumentError, name, self.layer, self.x, i, ww, out=out)
                self.assertEqual(e.status, 1)
                self.assertTrue(np.all(out == 7.0))

    def test_backend_and_router(self):
        if strata_moe.cuda_device_count() == 0:
            info = strata_moe.GgufFile(GGUF).layer(0)
            tensors = {role: (t.ggml_type, t.blocks.ctypes.data, t.ne, t.expert_stride_bytes, role)
                       for role, t in info.tensors.items()}
            self.assertRefused(strata_moe.UnsupportedError, "backend", _core.Layer, "cuda", info.d, info.f,
                               info.n_expert, tensors, [info])
        self.assertRefused(strata_moe.InvalidArgumentError, "backend", _core.Layer, "tpu", 1, 1, 1, {}, [])
        info = strata_moe.GgufFile(GGUF).layer(0)
        blocks = {role: (t.ggml_type, np.array(t.blocks)) for role, t in info.tensors.items()}
        short = dict(blocks, down=(42, blocks["down"][1][:100]))
        self.assertRefused(strata_moe.InvalidArgumentError, "down", strata_moe.Layer.from_blocks, 512, 192, 16, **short)
        odd = dict(blocks, gate=(9999, blocks["gate"][1]))
        self.assertRefused(strata_moe.UnsupportedError, "9999", strata_moe.Layer.from_blocks, 512, 192, 16, **odd)
        no_router = strata_moe.Layer.from_blocks(512, 192, 16, **blocks)
        self.assertRefused(strata_moe.InvalidArgumentError, "router", no_router.route, self.x)
        self.assertRefused(strata_moe.InvalidArgumentError, "gating", strata_moe.route, info.router, self.x, 4,
                           gating="argmax")
        self.assertRefused(strata_moe.InvalidArgumentError, "k", strata_moe.route, info.router, self.x, 0)

    def test_raw_workspace_misuse(self):
        n, k = self.x.shape[0], self.ids.shape[1]
        x16 = self.x.astype(np.float16)
        out = np.full((n, 512), np.nan, dtype=np.float32)
        need = self.layer.workspace_bytes(n, k, _lib.DTYPE_F16)
        self.assertGreaterEqual(need, n * 512 * 4)
        self.assertEqual(self.layer.workspace_bytes(n, k), 0)  # f32 on the CPU: nothing to stage
        buf = np.zeros(need + 512, dtype=np.uint8)
        base = buf.ctypes.data + (-buf.ctypes.data) % 256
        args = (x16.ctypes.data, _lib.DTYPE_F16, self.ids.ctypes.data, _lib.DTYPE_I32, self.weights.ctypes.data,
                _lib.DTYPE_F32, out.ctypes.data, _lib.DTYPE_F32, n, k)
        self.assertRefused(strata_moe.InvalidArgumentError, "workspace_bytes", self.layer._run_raw, *args, base,
                           need - 1, 0, 0, 0, None)
        self.assertRefused(strata_moe.InvalidArgumentError, "aligned", self.layer._run_raw, *args, base + 16,
                           need, 0, 0, 0, None)
        self.assertTrue(np.all(np.isnan(out)))
        self.layer._run_raw(*args, base, need, 0, 0, 0, None)
        self.assertTrue(np.all(np.isfinite(out)))

    def test_closed_objects(self):
        layer = strata_moe.Layer.from_gguf(GGUF, 1)
        layer.close()
        self.assertRefused(strata_moe.InvalidArgumentError, "closed", layer, self.x, self.ids, self.weights)
        f = strata_moe.GgufFile(GGUF)
        f.close()
        self.assertRefused(strata_moe.InvalidArgumentError, "closed", f.moe_layers)

    def test_message_is_the_librarys(self):
        status = _core._C.strata_moe_layer_run_ex(None, None)
        self.assertEqual(status, 1)
        with self.assertRaises(strata_moe.InvalidArgumentError) as ctx:
            _core._check(status)
        self.assertEqual(str(ctx.exception), _core._C.strata_moe_last_error().decode())
        self.assertIn("layer", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
