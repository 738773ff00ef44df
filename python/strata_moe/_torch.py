"""torch tensors and the custom op strata_moe::layer_run (imported only when torch is).

The op takes x [T, d] (f32/f16/bf16), ids [T, k] (int32/int64), weights [T, k] (f32/f16/bf16) on
the layer's device and returns y [T, d] (x's dtype unless out_dtype is given). CUDA runs go on the
current stream with a workspace from torch's allocator, so they allocate nothing in the library,
never synchronise and can be captured in a CUDA graph. A fake (meta) implementation lets
torch.compile trace the op without running it.
"""

import itertools
import weakref

import numpy as np
import torch

from . import _core, _lib

_DTYPE_CODES = {torch.float32: _lib.DTYPE_F32, torch.float16: _lib.DTYPE_F16, torch.bfloat16: _lib.DTYPE_BF16,
                torch.int32: _lib.DTYPE_I32, torch.int64: _lib.DTYPE_I64}
_TORCH_OF = {v: k for k, v in _DTYPE_CODES.items()}
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_layers = {}
_handles = itertools.count(1)
_WORKSPACE_ALIGN = 256


def handle_of(layer):
    """The op's integer handle for `layer` (a weak reference: the layer must stay alive)."""
    if layer._op_handle is None:
        layer._op_handle = next(_handles)
        _layers[layer._op_handle] = weakref.ref(layer)
    return layer._op_handle


def forget(handle):
    _layers.pop(handle, None)


def _lookup(handle):
    ref = _layers.get(handle)
    layer = ref() if ref is not None else None
    if layer is None or not layer._handle:
        raise _core.InvalidArgumentError(1, f"layer: handle {handle} names no live layer")
    return layer


def blocks_for(blocks, backend, device, role):
    """A contiguous uint8 tensor of `blocks` on the layer's device (copied there for CUDA)."""
    if not isinstance(blocks, torch.Tensor):
        blocks = torch.from_numpy(np.ascontiguousarray(blocks))
    if blocks.dtype != torch.uint8:
        raise _core.InvalidArgumentError(1, f"{role}: blocks must be uint8 (got {blocks.dtype})")
    if backend == "cuda":
        target = torch.device(device if device is not None else "cuda")
        if target.type != "cuda":
            raise _core.InvalidArgumentError(1, f"device: {target} is not a CUDA device")
        return blocks.to(target).contiguous()
    if blocks.device.type != "cpu":
        raise _core.InvalidArgumentError(1, f"{role}: a CPU layer needs CPU blocks (got {blocks.device})")
    return blocks.contiguous()


def _check_tensor(t, name, shape, dtypes, device):
    if not isinstance(t, torch.Tensor):
        raise _core.InvalidArgumentError(1, f"{name}: expected a torch tensor (got {type(t).__name__})")
    if t.dtype not in dtypes:
        raise _core.InvalidArgumentError(1, f"{name}: dtype {t.dtype} is not one of {', '.join(map(str, dtypes))}")
    if t.dim() != 2 or any(want is not None and got != want for got, want in zip(t.shape, shape)):
        want = "[" + ", ".join("?" if s is None else str(s) for s in shape) + "]"
        raise _core.InvalidArgumentError(1, f"{name}: shape {list(t.shape)} does not match {want}")
    if t.device != device:
        raise _core.InvalidArgumentError(1, f"{name}: on {t.device}, x is on {device}")
    return t.contiguous()


def _run_into(layer, x, ids, weights, y, arm_code, numerics_code):
    want = "cuda" if layer.backend == "cuda" else "cpu"
    if x.device.type != want:
        raise _core.InvalidArgumentError(1, f"x: on {x.device}, the layer is a {layer.backend} layer")
    x = _check_tensor(x, "x", (None, layer.d), _FLOATS, x.device)
    n_tokens = x.shape[0]
    ids = _check_tensor(ids, "ids", (n_tokens, None), (torch.int32, torch.int64), x.device)
    k = ids.shape[1]
    weights = _check_tensor(weights, "weights", (n_tokens, k), _FLOATS, x.device)
    if y.shape != (n_tokens, layer.d) or y.dtype not in _FLOATS or y.device != x.device or not y.is_contiguous():
        raise _core.InvalidArgumentError(1, f"out: must be a contiguous float tensor [{n_tokens}, {layer.d}] on {x.device}")
    codes = [_DTYPE_CODES[t.dtype] for t in (x, ids, weights, y)]
    nbytes = layer.workspace_bytes(n_tokens, k, *codes) if k >= 1 else 0
    workspace, base = None, None
    if nbytes > 0:
        workspace = torch.empty(nbytes + _WORKSPACE_ALIGN, dtype=torch.uint8, device=x.device)
        base = workspace.data_ptr() + (-workspace.data_ptr()) % _WORKSPACE_ALIGN
    stream = None
    if x.device.type == "cuda":
        stream = torch.cuda.current_stream(x.device).cuda_stream
        with torch.cuda.device(x.device):
            layer._run_raw(x.data_ptr(), codes[0], ids.data_ptr(), codes[1], weights.data_ptr(), codes[2],
                           y.data_ptr(), codes[3], n_tokens, k, base, nbytes, arm_code, numerics_code, 0, stream)
    else:
        layer._run_raw(x.data_ptr(), codes[0], ids.data_ptr(), codes[1], weights.data_ptr(), codes[2],
                       y.data_ptr(), codes[3], n_tokens, k, base, nbytes, arm_code, numerics_code, 0, None)
    # NOTE: the workspace is freed to torch's caching allocator on the current stream, so it is
    # reused only by work ordered after this run.
    del workspace
    return y


def _out_dtype(x_dtype, out_dtype_code):
    return x_dtype if out_dtype_code < 0 else _TORCH_OF[out_dtype_code]


@torch.library.custom_op("strata_moe::layer_run", mutates_args=())
def layer_run(x: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor, handle: int, arm: int, numerics: int,
              out_dtype: int) -> torch.Tensor:
    """y = the layer `handle` (handle_of) on x, ids, weights; arm/numerics: the C API's codes;
    out_dtype: a dtype code, or -1 for x's dtype."""
    layer = _lookup(handle)
    y = torch.empty((x.shape[0], layer.d), dtype=_out_dtype(x.dtype, out_dtype), device=x.device)
    return _run_into(layer, x, ids, weights, y, arm, numerics)


@layer_run.register_fake
def _layer_run_fake(x, ids, weights, handle, arm, numerics, out_dtype):
    layer = _lookup(handle)
    return x.new_empty((x.shape[0], layer.d), dtype=_out_dtype(x.dtype, out_dtype))


def _dtype_code(out_dtype):
    if out_dtype is None:
        return -1
    if out_dtype not in _FLOATS:
        raise _core.InvalidArgumentError(1, f"out_dtype: {out_dtype} is not float32, float16 or bfloat16")
    return _DTYPE_CODES[out_dtype]


def run_tensors(layer, x, ids, weights, out, arm_code, numerics_code, out_dtype):
    layer._require_open()
    if out is not None:
        return _run_into(layer, x, ids, weights, out, arm_code, numerics_code)
    return torch.ops.strata_moe.layer_run(x, ids, weights, handle_of(layer), arm_code, numerics_code,
                                          _dtype_code(out_dtype))


class MoeExperts(torch.nn.Module):
    """An nn.Module over a Layer: forward(x, ids, weights) -> y through strata_moe::layer_run
    (traceable by torch.compile; capturable in a CUDA graph on a CUDA layer)."""

    def __init__(self, layer, arm=None, numerics=None, out_dtype=None):
        super().__init__()
        self.layer = layer
        self.handle = handle_of(layer)
        self.arm = _core._option(_lib.ARMS, arm, "arm")
        self.numerics = _core._option(_lib.NUMERICS, numerics, "numerics")
        self.out_dtype = _dtype_code(out_dtype)

    def forward(self, x, ids, weights):
        return torch.ops.strata_moe.layer_run(x, ids, weights, self.handle, self.arm, self.numerics,
                                              self.out_dtype)
