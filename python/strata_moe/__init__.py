"""strata_moe: quantised MoE expert layers from GGUF blocks, over the library's C API (ctypes).

    import strata_moe
    layer = strata_moe.Layer.from_gguf("model.gguf", 0)     # CPU; backend="cuda" with torch
    ids, weights = layer.route(x)                            # the layer's router, top-k
    y = layer(x, ids, weights, numerics="q8")                # numpy in, numpy out

Works on numpy alone. When torch imports, torch tensors (CPU and CUDA, the current stream) run
through the custom op torch.ops.strata_moe.layer_run, and MoeExperts wraps a layer as a module.
Set STRATA_MOE_NO_TORCH=1 to leave torch alone. The library is $STRATA_MOE_LIBRARY, or the
libstrata_moe.so installed next to the package, or the loader's.
"""

import os as _os

from ._core import (BadFileError, CudaError, GgufFile, InternalError, InvalidArgumentError, IoError, Layer,
                    LayerInfo, OutOfMemoryError, StrataMoeError, Tensor, UnsupportedError, cuda_device_count,
                    git_commit, route, version)

GGML_TYPES = {"q2_0": 42, "iq3_s": 21, "q4_0": 2, "q8_0": 8}
PROFILES = ("q8", "q10")
ARMS = ("production", "fused")
GATINGS = ("softmax_topk_renorm", "softmax_topk", "topk_softmax")

has_torch = False
if _os.environ.get("STRATA_MOE_NO_TORCH") != "1":
    try:
        import torch as _torch_module  # noqa: F401
    except ImportError:
        pass
    else:
        from ._torch import MoeExperts, handle_of, layer_run  # registers strata_moe::layer_run
        has_torch = True

__version__ = version()
