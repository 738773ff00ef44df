"""The numpy path of the strata_moe package against the CLI, bitwise, on the bundled layers."""

import ctypes
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import strata_moe
from strata_moe import _lib
from support import CLI, GGUF, SEED, bundled, cli_run, distinct_routing, same_bits


class BundledLayers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.file = strata_moe.GgufFile(GGUF)
        cls.layers = {n: strata_moe.Layer.from_gguf(cls.file, n) for n in cls.file.moe_layers()}

    def test_file_lists_its_moe_layers(self):
        self.assertEqual(self.file.moe_layers(), [0, 1])
        info = self.file.layer(1)
        self.assertEqual((info.d, info.f, info.n_expert, info.n_expert_used), (512, 192, 16, 4))
        self.assertEqual((info.gate.ggml_type, info.down.ggml_type), (21, 42))
        self.assertEqual(info.router.shape, (16, 512))

    def test_equals_the_cli_bitwise_for_each_layer_arm_and_profile(self):
        for n, layer in self.layers.items():
            x, ids, weights = bundled(n)
            for numerics in ("q8", "q10"):
                expected = cli_run(n, x, ids, weights, "--numerics", numerics)
                for arm in ("production", "fused"):
                    with self.subTest(layer=n, numerics=numerics, arm=arm):
                        out = np.full_like(expected, np.nan)
                        y = layer.run(x, ids, weights, out=out, arm=arm, numerics=numerics)
                        self.assertIs(y, out)
                        self.assertTrue(same_bits(y, expected))

    def test_random_inputs_equal_the_cli_bitwise(self):
        rng = np.random.default_rng(SEED)
        layer = self.layers[1]
        x = rng.standard_normal((37, 512)).astype(np.float32) * rng.uniform(0.2, 3.0, size=512).astype(np.float32)
        ids, weights = distinct_routing(rng, 37, 16, 5)
        expected = cli_run(1, x, ids, weights, "--numerics", "q8")
        self.assertGreater(np.abs(expected).min(initial=np.inf) + np.abs(expected).max(), 0)
        self.assertTrue(same_bits(layer(x, ids, weights, numerics="q8"), expected), f"seed {SEED}")

    def test_sixteen_bit_inputs_are_the_run_on_their_widened_values(self):
        rng = np.random.default_rng(SEED + 1)
        layer = self.layers[0]
        x = (rng.standard_normal((23, 512)) * 2).astype(np.float16)
        ids, weights = distinct_routing(rng, 23, 16, 4)
        weights16 = weights.astype(np.float16)
        expected = cli_run(0, x.astype(np.float32), ids, weights16.astype(np.float32), "--numerics", "q8")
        y32 = layer(x, ids.astype(np.int64), weights16, out_dtype=np.float32, numerics="q8")
        self.assertTrue(same_bits(y32, expected), f"seed {SEED + 1}")
        # A float16 y is the f32 y rounded to nearest even (numpy's own conversion is that rule).
        y16 = layer(x, ids, weights16, numerics="q8")
        self.assertEqual(y16.dtype, np.float16)
        self.assertTrue(same_bits(y16, expected.astype(np.float16)), f"seed {SEED + 1}")

    def test_int64_ids_equal_int32_ids(self):
        x, ids, weights = bundled(0)
        self.assertTrue(same_bits(self.layers[0](x, ids.astype(np.int64), weights),
                                  self.layers[0](x, ids, weights)))

    def test_router_gives_the_clis_routing(self):
        x, ids, _ = bundled(1)
        got_ids, got_weights = self.layers[1].route(x)
        self.assertTrue(same_bits(got_ids, ids))
        self.assertTrue(np.all(got_weights > 0))
        np.testing.assert_allclose(got_weights.sum(axis=1), 1.0, rtol=1e-5)
        # The module-level route() with the router array and an explicit rule gives the same.
        ids2, weights2 = strata_moe.route(self.file.layer(1).router, x, 4, gating="softmax_topk_renorm")
        self.assertTrue(same_bits(ids2, got_ids) and same_bits(weights2, got_weights))

    def test_from_blocks_equals_from_gguf(self):
        info = self.file.layer(0)
        blocks = {role: (t.ggml_type, np.array(t.blocks)) for role, t in info.tensors.items()}
        layer = strata_moe.Layer.from_blocks(info.d, info.f, info.n_expert, **blocks)
        x, ids, weights = bundled(0)
        self.assertTrue(same_bits(layer(x, ids, weights), self.layers[0](x, ids, weights)))

    def test_threads_do_not_change_the_bits(self):
        x, ids, weights = bundled(1)
        self.assertTrue(same_bits(self.layers[1](x, ids, weights, threads=1),
                                  self.layers[1](x, ids, weights, threads=2)))


class Library(unittest.TestCase):
    def test_version_is_the_linked_librarys(self):
        self.assertRegex(strata_moe.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(strata_moe.__version__, strata_moe.version())
        self.assertRegex(strata_moe.git_commit(), r"^([0-9a-f]{40})?$")

    def test_bench_json_reports_the_compiled_in_commit_from_any_directory(self):
        if not CLI:
            self.skipTest("STRATA_MOE_CLI not set")
        with tempfile.TemporaryDirectory() as tmp:  # not a git checkout: the commit must not come from it
            out = subprocess.run([CLI, "bench", "--backend", "cpu", "--tokens", "32", "--cells", "1", "--quiet",
                                  "--json"], capture_output=True, text=True, cwd=tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        commit = json.loads(out.stdout)["git_commit"]
        self.assertEqual(commit or "", strata_moe.git_commit())

    def test_readme_example_runs(self):
        script = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "example.py"
        out = subprocess.run([sys.executable, str(script), str(GGUF)], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"strata_moe {strata_moe.version()}: y (8, 512) float32", out.stdout)
        self.assertIn("refused: ids", out.stdout)

    def test_ctypes_structs_match_the_c_layout(self):
        tool = os.environ.get("STRATA_MOE_ABI_SIZES")
        if not tool:
            self.skipTest("STRATA_MOE_ABI_SIZES not set (ctest sets it)")
        lines = subprocess.run([tool], check=True, capture_output=True, text=True).stdout.split("\n")
        mirror = {"strata_moe_tensor_desc": _lib.TensorDesc, "strata_moe_layer_desc": _lib.LayerDesc,
                  "strata_moe_run_options": _lib.RunOptions, "strata_moe_run_args": _lib.RunArgs,
                  "strata_moe_gguf_layer": _lib.GgufLayer}
        checked = 0
        for line in filter(None, lines):
            name, value = line.split()
            struct, _, field = name.partition(".")
            got = getattr(mirror[struct], field).offset if field else ctypes.sizeof(mirror[struct])
            self.assertEqual(got, int(value), name)
            checked += 1
        self.assertGreaterEqual(checked, 20)


if __name__ == "__main__":
    unittest.main()
