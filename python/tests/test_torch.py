"""The torch path: tensors on the CPU and CUDA, the custom op strata_moe::layer_run, CUDA graph
capture and replay, torch.compile. Skips where torch does not import (CI); CUDA cases skip
without a CUDA device and a CUDA build of the library."""

import unittest

import numpy as np

import strata_moe
from support import GGUF, SEED, bundled, distinct_routing, same_bits

try:
    import torch
except ImportError:
    torch = None

HAVE_TORCH = torch is not None and strata_moe.has_torch
HAVE_CUDA = HAVE_TORCH and torch.cuda.is_available() and strata_moe.cuda_device_count() > 0


def bits(t):
    """The raw bits of a tensor as a numpy array (bf16 has no numpy dtype)."""
    t = t.detach().cpu().contiguous()
    view = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}[t.dtype]
    return t.view(view).numpy()


def random_inputs(seed, n_tokens, k=4, n_expert=16, d=512):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n_tokens, d)) * rng.uniform(0.2, 3.0, size=d)).astype(np.float32)
    ids, weights = distinct_routing(rng, n_tokens, n_expert, k)
    return x, ids, weights


@unittest.skipUnless(HAVE_TORCH, "torch is not importable")
class TorchCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.layer = strata_moe.Layer.from_gguf(GGUF, 0)

    def test_f32_tensors_equal_the_numpy_run(self):
        x, ids, w = bundled(0)
        expected = self.layer(x, ids, w)
        y = self.layer(torch.from_numpy(x), torch.from_numpy(ids).long(), torch.from_numpy(w))
        self.assertEqual(y.dtype, torch.float32)
        self.assertTrue(same_bits(y.numpy(), expected))

    def test_sixteen_bit_tensors_round_the_f32_result(self):
        x, ids, w = random_inputs(SEED + 11, 31)
        for dtype in (torch.float16, torch.bfloat16):
            with self.subTest(dtype=dtype):
                xt, wt = torch.from_numpy(x).to(dtype), torch.from_numpy(w).to(dtype)
                expected = self.layer(xt.float().numpy(), ids, wt.float().numpy())
                y = self.layer(xt, torch.from_numpy(ids), wt)
                self.assertEqual(y.dtype, dtype)
                self.assertTrue((bits(y) == bits(torch.from_numpy(expected).to(dtype))).all(), f"seed {SEED + 11}")

    def test_op_and_compile_on_cpu(self):
        x, ids, w = (torch.from_numpy(a) for a in random_inputs(SEED + 12, 17))
        module = strata_moe.MoeExperts(self.layer)
        eager = module(x, ids, w)
        compiled = torch.compile(module, fullgraph=True)
        self.assertTrue((bits(compiled(x, ids, w)) == bits(eager)).all())
        torch.library.opcheck(torch.ops.strata_moe.layer_run.default,
                              (x, ids, w, module.handle, module.arm, module.numerics, module.out_dtype),
                              test_utils=("test_schema", "test_faketensor"))

    def test_errors_are_package_exceptions(self):
        x, ids, w = (torch.from_numpy(a) for a in random_inputs(SEED + 13, 5))
        with self.assertRaises(strata_moe.InvalidArgumentError) as ctx:
            self.layer(x[:, :100], ids, w)
        self.assertIn("x: shape", str(ctx.exception))
        bad = ids.clone()
        bad[0, 0] = 99
        with self.assertRaises(strata_moe.InvalidArgumentError) as ctx:
            self.layer(x, bad, w)
        self.assertIn("ids", str(ctx.exception))


@unittest.skipUnless(HAVE_CUDA, "no CUDA device (or torch, or a CUDA build of the library)")
class TorchCuda(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cpu = strata_moe.Layer.from_gguf(GGUF, 1)
        cls.gpu = strata_moe.Layer.from_gguf(GGUF, 1, backend="cuda", device="cuda")

    def test_each_dtype_equals_the_f32_c_api_run(self):
        x, ids, w = random_inputs(SEED + 21, 200, k=4)
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            for ids_dtype in (torch.int32, torch.int64):
                with self.subTest(dtype=dtype, ids_dtype=ids_dtype):
                    xt = torch.from_numpy(x).to(dtype)
                    wt = torch.from_numpy(w).to(dtype)
                    # The reference: the f32 C API run (CPU backend, same bits as every CUDA arm)
                    # on the widened 16-bit values, rounded to the dtype.
                    ref32 = self.cpu(xt.float().numpy(), ids, wt.float().numpy(), numerics="q8")
                    ref = torch.from_numpy(ref32).to(dtype)
                    for arm in ("production", "fused"):
                        y = self.gpu(xt.cuda(), torch.from_numpy(ids).to(ids_dtype).cuda(), wt.cuda(), arm=arm,
                                     numerics="q8")
                        torch.cuda.synchronize()
                        self.assertEqual((y.dtype, y.device.type), (dtype, "cuda"))
                        self.assertTrue((bits(y) == bits(ref)).all(), f"{arm} seed {SEED + 21}")

    def test_runs_on_the_current_stream(self):
        x, ids, w = (torch.from_numpy(a).cuda() for a in random_inputs(SEED + 22, 64))
        expected = self.gpu(x, ids, w)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = self.gpu(x, ids, w)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        self.assertTrue((bits(y) == bits(expected)).all())

    def test_cuda_graph_capture_and_replay_give_the_same_bits(self):
        n = 96
        x0, ids0, w0 = random_inputs(SEED + 23, n)
        x1, ids1, w1 = random_inputs(SEED + 24, n)
        for dtype in (torch.bfloat16, torch.float32):
            with self.subTest(dtype=dtype):
                sx = torch.from_numpy(x0).to(dtype).cuda()
                sids = torch.from_numpy(ids0).long().cuda()
                sw = torch.from_numpy(w0).cuda()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # warm-up outside the capture
                    self.gpu(sx, sids, sw, numerics="q8")
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    sy = self.gpu(sx, sids, sw, numerics="q8")  # q8: the workspace carries its pipeline
                for x, ids, w in ((x1, ids1, w1), (x0, ids0, w0)):
                    sx.copy_(torch.from_numpy(x).to(dtype))
                    sids.copy_(torch.from_numpy(ids).long())
                    sw.copy_(torch.from_numpy(w))
                    sy.fill_(float("nan"))
                    graph.replay()
                    direct = self.gpu(torch.from_numpy(x).to(dtype).cuda(), torch.from_numpy(ids).cuda(),
                                      torch.from_numpy(w).cuda(), numerics="q8")
                    torch.cuda.synchronize()
                    self.assertTrue((bits(sy) == bits(direct)).all(), f"replay, seed {SEED + 23}")

    def test_compiled_module_equals_eager(self):
        x, ids, w = random_inputs(SEED + 25, 128)
        xt = torch.from_numpy(x).to(torch.bfloat16).cuda()
        ids_t, wt = torch.from_numpy(ids).long().cuda(), torch.from_numpy(w).cuda()

        class Block(torch.nn.Module):
            def __init__(self, layer):
                super().__init__()
                self.experts = strata_moe.MoeExperts(layer)

            def forward(self, x, ids, w):
                return x + self.experts(x * 0.5, ids, w)

        block = Block(self.gpu)
        eager = block(xt, ids_t, wt)
        compiled = torch.compile(block, fullgraph=True)
        got = compiled(xt, ids_t, wt)
        torch.cuda.synchronize()
        self.assertTrue((bits(got) == bits(eager)).all())

    def test_q10_equals_the_cpu_q10_run(self):
        x, ids, w = random_inputs(SEED + 26, 40)
        expected = self.cpu(x, ids, w, numerics="q10")
        y = self.gpu(torch.from_numpy(x).cuda(), torch.from_numpy(ids).cuda(), torch.from_numpy(w).cuda(),
                     numerics="q10")
        torch.cuda.synchronize()
        self.assertTrue(same_bits(y.cpu().numpy(), expected), f"seed {SEED + 26}")

if __name__ == "__main__":
    unittest.main()
