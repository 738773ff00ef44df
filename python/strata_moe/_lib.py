"""ctypes declarations of the C API (include/strata_moe.h) and the library loader.

The structs mirror the header field for field; each carries its own struct_size, so the library
reads only what this module knows about. tests check the sizes against the C compiler's.
"""

import ctypes
import ctypes.util
import os
import pathlib

c_int64 = ctypes.c_int64
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p


class TensorDesc(ctypes.Structure):
    _fields_ = [
        ("ggml_type", ctypes.c_uint32),
        ("data", c_void_p),
        ("ne0", c_int64),
        ("ne1", c_int64),
        ("ne2", c_int64),
        ("expert_stride_bytes", c_size_t),
        ("name", ctypes.c_char_p),
    ]


class LayerDesc(ctypes.Structure):
    _fields_ = [
        ("d", c_int64),
        ("f", c_int64),
        ("n_expert", c_int64),
        ("gate", TensorDesc),
        ("up", TensorDesc),
        ("down", TensorDesc),
    ]


class RunOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("arm", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("cuda_stream", c_void_p),
        ("numerics", ctypes.c_int),
        ("report", c_void_p),  # strata_moe_run_report*; the package passes NULL
    ]


class RunArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("x", c_void_p),
        ("x_dtype", ctypes.c_int),
        ("ids", c_void_p),
        ("ids_dtype", ctypes.c_int),
        ("weights", c_void_p),
        ("weights_dtype", ctypes.c_int),
        ("y", c_void_p),
        ("y_dtype", ctypes.c_int),
        ("n_tokens", c_int64),
        ("k", ctypes.c_int),
        ("workspace", c_void_p),
        ("workspace_bytes", c_size_t),
        ("options", ctypes.POINTER(RunOptions)),
    ]


class GgufLayer(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("layer", ctypes.c_int),
        ("desc", LayerDesc),
        ("router", ctypes.POINTER(ctypes.c_float)),
        ("n_expert_used", ctypes.c_int),
    ]


# strata_moe_status values.
STATUS_NAMES = {
    0: "ok",
    1: "invalid argument",
    2: "bad file",
    3: "unsupported",
    4: "io",
    5: "cuda",
    6: "out of memory",
    7: "internal",
}

BACKEND_CPU, BACKEND_CUDA = 0, 1
ARMS = {None: 0, "production": 1, "fused": 2, "fused-sm80": 3, "fused-hopper": 4, "fused-wmma": 5}
NUMERICS = {None: 0, "q8": 1, "q10": 2}
GATINGS = {"softmax_topk_renorm": 0, "softmax_topk": 1, "topk_softmax": 2}
DTYPE_F32, DTYPE_F16, DTYPE_BF16, DTYPE_I32, DTYPE_I64 = 0, 1, 2, 3, 4


def _candidates():
    explicit = os.environ.get("STRATA_MOE_LIBRARY")
    if explicit:
        yield explicit
        return
    here = pathlib.Path(__file__).resolve().parent
    # Installed layout: <prefix>/<libdir>/strata_moe/python/strata_moe/_lib.py
    for parent in (here.parents[2], here.parents[1]):
        for name in ("libstrata_moe.so", "libstrata_moe.dylib"):
            if (parent / name).exists():
                yield str(parent / name)
    found = ctypes.util.find_library("strata_moe")
    if found:
        yield found


def _declare(lib):
    P = ctypes.POINTER
    status = ctypes.c_int
    sigs = {
        "strata_moe_last_error": (ctypes.c_char_p, []),
        "strata_moe_version": (ctypes.c_char_p, []),
        "strata_moe_git_commit": (ctypes.c_char_p, []),
        "strata_moe_cuda_device_count": (ctypes.c_int, []),
        "strata_moe_layer_create": (status, [ctypes.c_int, P(LayerDesc), P(c_void_p)]),
        "strata_moe_layer_destroy": (None, [c_void_p]),
        "strata_moe_layer_backend": (ctypes.c_int, [c_void_p]),
        "strata_moe_layer_run_ex": (status, [c_void_p, P(RunArgs)]),
        "strata_moe_workspace_bytes": (status, [c_void_p, P(RunArgs), P(c_size_t)]),
        "strata_moe_tensor_span_bytes": (status, [P(TensorDesc), P(c_size_t)]),
        "strata_moe_route": (status, [c_void_p, c_void_p, c_int64, c_int64, c_int64, ctypes.c_int,
                                      ctypes.c_int, c_void_p, c_void_p, ctypes.c_int]),
        "strata_moe_gguf_open": (status, [ctypes.c_char_p, P(c_void_p)]),
        "strata_moe_gguf_close": (None, [c_void_p]),
        "strata_moe_gguf_moe_layers": (status, [c_void_p, P(ctypes.c_int), ctypes.c_int, P(ctypes.c_int)]),
        "strata_moe_gguf_layer_info": (status, [c_void_p, ctypes.c_int, P(GgufLayer)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def load():
    """The shared library: $STRATA_MOE_LIBRARY, else next to an installed package, else the loader's path."""
    errors = []
    for path in _candidates():
        try:
            return _declare(ctypes.CDLL(path))
        except OSError as e:  # try the next candidate, report them all
            errors.append(f"{path}: {e}")
    raise ImportError(
        "strata_moe: libstrata_moe.so not found (build with -DSTRATA_MOE_SHARED=ON and set "
        "STRATA_MOE_LIBRARY to its path)" + ("; tried " + "; ".join(errors) if errors else ""))
