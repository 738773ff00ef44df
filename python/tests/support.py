"""Shared by the Python package's tests: paths from the environment CTest sets, seeded inputs."""

import os
import pathlib
import subprocess
import tempfile

import numpy as np

DATA = pathlib.Path(os.environ.get("STRATA_TEST_DATA_DIR", pathlib.Path(__file__).resolve().parents[2] / "tests" / "data"))
MOE = DATA / "vectors" / "moe"
GGUF = MOE / "model.gguf"
CLI = os.environ.get("STRATA_MOE_CLI", "")
SEED = int(os.environ.get("STRATA_TEST_SEED", "20261201"))


def bundled(layer):
    """x, ids, weights of a bundled layer."""
    return tuple(np.load(MOE / f"layer{layer}.{name}.npy") for name in ("x", "ids", "weights"))


def distinct_routing(rng, n_tokens, n_expert, k):
    """ids [T, k] int32 distinct per token, weights [T, k] f32 > 0."""
    ids = np.stack([rng.choice(n_expert, size=k, replace=False) for _ in range(n_tokens)]).astype(np.int32)
    weights = rng.uniform(0.05, 1.0, size=(n_tokens, k)).astype(np.float32)
    return ids, weights


def cli_run(layer, x, ids, weights, *extra):
    """y from `strata-moe run` on the bundled model (the reference the package must equal)."""
    if not CLI:
        raise RuntimeError("STRATA_MOE_CLI is not set (ctest sets it)")
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, array in (("x", x), ("ids", ids), ("weights", weights)):
            paths[name] = os.path.join(tmp, f"{name}.npy")
            np.save(paths[name], array)
        out = os.path.join(tmp, "y.npy")
        subprocess.run([CLI, "run", "--gguf", str(GGUF), "--layer", str(layer), "--x", paths["x"], "--ids",
                        paths["ids"], "--weights", paths["weights"], "--out", out, *extra],
                       check=True, capture_output=True)
        return np.load(out)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
