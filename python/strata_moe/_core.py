"""Layers, GGUF files, routing and runs over numpy arrays (and torch tensors, see _torch)."""

import ctypes
import os

import numpy as np

from . import _lib

_C = _lib.load()


class StrataMoeError(RuntimeError):
    """A failure reported by the library: `status` (strata_moe_status) and the library's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.status_name = _lib.STATUS_NAMES.get(status, "unknown")
        self.message = message


class InvalidArgumentError(StrataMoeError, ValueError):
    pass


class BadFileError(StrataMoeError):
    pass


class UnsupportedError(StrataMoeError):
    pass


class IoError(StrataMoeError, OSError):
    pass


class CudaError(StrataMoeError):
    pass


class OutOfMemoryError(StrataMoeError, MemoryError):
    pass


class InternalError(StrataMoeError):
    pass


_ERRORS = {1: InvalidArgumentError, 2: BadFileError, 3: UnsupportedError, 4: IoError, 5: CudaError,
           6: OutOfMemoryError, 7: InternalError}


def _error(status, message):
    return _ERRORS.get(status, StrataMoeError)(status, message)


def _check(status):
    if status != 0:
        raise _error(status, _C.strata_moe_last_error().decode("utf-8", "replace"))


def _invalid(message):
    return InvalidArgumentError(1, message)


def version():
    """The linked library's version, "MAJOR.MINOR.PATCH"."""
    return _C.strata_moe_version().decode()


def git_commit():
    """The library source tree's commit at configure time, or "" when unknown."""
    return _C.strata_moe_git_commit().decode()


def cuda_device_count():
    """CUDA devices this build sees (0 without CUDA)."""
    return _C.strata_moe_cuda_device_count()


def _option(table, value, what):
    if value not in table:
        names = ", ".join(repr(k) for k in table if k is not None)
        raise _invalid(f"{what}: {value!r} is not one of {names}" + (" or None" if None in table else ""))
    return table[value]


# ---- routing ----------------------------------------------------------------------------------

def route(router, x, k, gating="softmax_topk_renorm", threads=0):
    """Top-k routing on the host: router [E, d], x [T, d] (f32; f16 widened) -> (ids int32 [T, k],
    weights f32 [T, k]) in descending probability. gating: softmax_topk_renorm (qwen3moe),
    softmax_topk, topk_softmax."""
    router = np.ascontiguousarray(router, dtype=np.float32)
    x = np.ascontiguousarray(x, dtype=np.float32)
    if router.ndim != 2:
        raise _invalid(f"router: shape {router.shape} is not [E, d]")
    if x.ndim != 2 or x.shape[1] != router.shape[1]:
        raise _invalid(f"x: shape {x.shape} does not match the router's [E, d] = {router.shape}")
    rule = _option(_lib.GATINGS, gating, "gating")
    n_tokens = x.shape[0]
    ids = np.empty((n_tokens, int(k)), dtype=np.int32)
    weights = np.empty((n_tokens, int(k)), dtype=np.float32)
    _check(_C.strata_moe_route(router.ctypes.data, x.ctypes.data, n_tokens, router.shape[1], router.shape[0],
                               int(k), rule, ids.ctypes.data, weights.ctypes.data, int(threads)))
    return ids, weights


# ---- GGUF files -------------------------------------------------------------------------------

class Tensor:
    """One stacked expert tensor of a layer: ggml type id, ne = (values per row, rows, experts),
    expert stride in bytes, and its bytes (`blocks`, a uint8 array over the tensor's span)."""

    def __init__(self, desc, blocks, name):
        self.ggml_type = int(desc.ggml_type)
        self.ne = (int(desc.ne0), int(desc.ne1), int(desc.ne2))
        self.expert_stride_bytes = int(desc.expert_stride_bytes)
        self.blocks = blocks
        self.name = name

    def __repr__(self):
        return f"Tensor({self.name!r}, type={self.ggml_type}, ne={self.ne})"


def _span_bytes(desc):
    out = ctypes.c_size_t()
    _check(_C.strata_moe_tensor_span_bytes(ctypes.byref(desc), ctypes.byref(out)))
    return out.value


def _view_bytes(address, count):
    if count == 0:
        return np.empty(0, dtype=np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * count).from_address(address))


class LayerInfo:
    """An MoE layer of a GGUF file: d, f, n_expert, gate/up/down Tensors, router [E, d] f32 (a copy;
    None when the file has none) and n_expert_used (k of the file, 0 when absent)."""

    def __init__(self, file, raw):
        self.file = file  # keeps the mapping alive
        self.layer = raw.layer
        self.d, self.f, self.n_expert = raw.desc.d, raw.desc.f, raw.desc.n_expert
        self.tensors = {}
        for role in ("gate", "up", "down"):
            desc = getattr(raw.desc, role)
            name = desc.name.decode() if desc.name else role
            self.tensors[role] = Tensor(desc, _view_bytes(desc.data, _span_bytes(desc)), name)
        self.router = None
        if raw.router:
            self.router = np.ctypeslib.as_array(raw.router, shape=(self.n_expert, self.d)).copy()
        self.n_expert_used = raw.n_expert_used

    gate = property(lambda self: self.tensors["gate"])
    up = property(lambda self: self.tensors["up"])
    down = property(lambda self: self.tensors["down"])


class GgufFile:
    """A GGUF model file, mapped read-only (the library's reader: every offset checked)."""

    def __init__(self, path):
        handle = ctypes.c_void_p()
        _check(_C.strata_moe_gguf_open(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle
        self.path = os.fspath(path)

    def close(self):
        if getattr(self, "_handle", None):
            _C.strata_moe_gguf_close(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _require_open(self):
        if not self._handle:
            raise _invalid(f"file: {self.path} is closed")

    def moe_layers(self):
        """The MoE layers' numbers (blk.N), in order."""
        self._require_open()
        count = ctypes.c_int()
        _check(_C.strata_moe_gguf_moe_layers(self._handle, None, 0, ctypes.byref(count)))
        layers = (ctypes.c_int * max(count.value, 1))()
        _check(_C.strata_moe_gguf_moe_layers(self._handle, layers, count.value, ctypes.byref(count)))
        return list(layers[:count.value])

    def layer(self, layer):
        """LayerInfo of blk.`layer`."""
        self._require_open()
        raw = _lib.GgufLayer()
        raw.struct_size = ctypes.sizeof(_lib.GgufLayer)
        _check(_C.strata_moe_gguf_layer_info(self._handle, int(layer), ctypes.byref(raw)))
        return LayerInfo(self, raw)


# ---- layers -----------------------------------------------------------------------------------

_NUMPY_DTYPES = {np.dtype(np.float32): _lib.DTYPE_F32, np.dtype(np.float16): _lib.DTYPE_F16,
                 np.dtype(np.int32): _lib.DTYPE_I32, np.dtype(np.int64): _lib.DTYPE_I64}
_NUMPY_OF = {v: k for k, v in _NUMPY_DTYPES.items()}
_WORKSPACE_ALIGN = 256


def _is_torch(value):
    return type(value).__module__.startswith("torch")


class Layer:
    """One MoE expert layer (gate/up/down in GGUF block formats) on the CPU or a CUDA device.

    Layer.from_gguf(path, layer) or Layer.from_blocks(...); then layer(x, ids, weights) or
    layer.run(...). The layer keeps what its weights live in (the mapped file, the arrays)."""

    def __init__(self, backend, d, f, n_expert, tensors, keep, router=None, n_expert_used=0):
        if backend not in ("cpu", "cuda"):
            raise _invalid(f"backend: {backend!r} is not 'cpu' or 'cuda'")
        self.backend = backend
        self.d, self.f, self.n_expert = int(d), int(f), int(n_expert)
        self.router = router
        self.n_expert_used = int(n_expert_used)
        self._keep = keep  # the weights' owners and the names' bytes
        desc = _lib.LayerDesc()
        desc.d, desc.f, desc.n_expert = self.d, self.f, self.n_expert
        names = []
        for role in ("gate", "up", "down"):
            ggml_type, address, ne, stride, name = tensors[role]
            t = getattr(desc, role)
            t.ggml_type, t.data = int(ggml_type), address
            t.ne0, t.ne1, t.ne2 = ne
            t.expert_stride_bytes = int(stride)
            names.append(name.encode())
            t.name = names[-1]
        self._keep.append(names)
        handle = ctypes.c_void_p()
        _check(_C.strata_moe_layer_create(_lib.BACKEND_CUDA if backend == "cuda" else _lib.BACKEND_CPU,
                                          ctypes.byref(desc), ctypes.byref(handle)))
        self._handle = handle
        self._op_handle = None

    # ---- construction ---------------------------------------------------------------------

    @classmethod
    def from_gguf(cls, path, layer, backend="cpu", device=None):
        """Layer blk.`layer` of a GGUF file (a path or a GgufFile). backend 'cuda' copies the
        blocks to `device` (a torch device; torch is needed for device memory)."""
        file = path if isinstance(path, GgufFile) else GgufFile(path)
        info = file.layer(layer)
        return cls.from_info(info, backend=backend, device=device)

    @classmethod
    def from_info(cls, info, backend="cpu", device=None):
        tensors = {role: (t.ggml_type, t.blocks, t.ne, t.expert_stride_bytes, t.name)
                   for role, t in info.tensors.items()}
        return cls._from_arrays(info.d, info.f, info.n_expert, tensors, backend, device, [info],
                                router=info.router, n_expert_used=info.n_expert_used)

    @classmethod
    def from_blocks(cls, d, f, n_expert, gate, up, down, backend="cpu", device=None):
        """A layer over raw GGUF blocks: gate, up, down each (ggml_type, blocks) with blocks a
        C-contiguous uint8 numpy array (or a torch uint8 tensor: CPU for backend 'cpu', CUDA for
        'cuda') holding the experts one after another; gate/up [d, f, E], down [f, d, E]."""
        tensors = {}
        for role, spec, ne in (("gate", gate, (d, f, n_expert)), ("up", up, (d, f, n_expert)),
                               ("down", down, (f, d, n_expert))):
            try:
                ggml_type, blocks = spec
            except (TypeError, ValueError):
                raise _invalid(f"{role}: expected (ggml_type, blocks)") from None
            tensors[role] = (int(ggml_type), blocks, ne, 0, role)
        return cls._from_arrays(d, f, n_expert, tensors, backend, device, [])

    @classmethod
    def _from_arrays(cls, d, f, n_expert, tensors, backend, device, keep, router=None, n_expert_used=0):
        resolved = {}
        for role, (ggml_type, blocks, ne, stride, name) in tensors.items():
            if _is_torch(blocks) or backend == "cuda":
                try:
                    from . import _torch
                except ImportError:
                    raise UnsupportedError(3, "backend: a CUDA layer from Python needs torch (for the device "
                                              "memory of its weights)") from None
                blocks = _torch.blocks_for(blocks, backend, device, role)
                address, size = blocks.data_ptr(), blocks.numel() * blocks.element_size()
            else:
                blocks = np.asarray(blocks)
                if blocks.dtype != np.uint8 or not blocks.flags.c_contiguous:
                    raise _invalid(f"{role}: blocks must be a C-contiguous uint8 array (got {blocks.dtype})")
                address, size = blocks.ctypes.data, blocks.nbytes
            desc = _lib.TensorDesc(ggml_type, address, ne[0], ne[1], ne[2], stride, None)
            needed = _span_bytes(desc)
            if size < needed:
                raise _invalid(f"{role}: {size} bytes of blocks, the tensor {ne} needs {needed}")
            keep.append(blocks)
            resolved[role] = (ggml_type, address, ne, stride, name)
        return cls(backend, d, f, n_expert, resolved, keep, router=router, n_expert_used=n_expert_used)

    def close(self):
        if getattr(self, "_handle", None):
            if self._op_handle is not None:
                from . import _torch
                _torch.forget(self._op_handle)
            _C.strata_moe_layer_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def _require_open(self):
        if not self._handle:
            raise _invalid("layer: closed")

    # ---- runs -----------------------------------------------------------------------------

    def route(self, x, k=None, gating="softmax_topk_renorm", threads=0):
        """(ids, weights) from the layer's router (a GGUF layer's ffn_gate_inp); k defaults to
        the file's expert_used_count. x: numpy [T, d]."""
        if self.router is None:
            raise _invalid("router: this layer has no router (pass ids and weights)")
        k = self.n_expert_used if k is None else k
        return route(self.router, x, k, gating=gating, threads=threads)

    def workspace_bytes(self, n_tokens, k, x_dtype=_lib.DTYPE_F32, ids_dtype=_lib.DTYPE_I32,
                        weights_dtype=_lib.DTYPE_F32, y_dtype=_lib.DTYPE_F32):
        """Bytes of scratch a run of n_tokens x k with these dtype codes needs."""
        self._require_open()
        args = _lib.RunArgs()
        args.struct_size = ctypes.sizeof(_lib.RunArgs)
        args.x_dtype, args.ids_dtype, args.weights_dtype, args.y_dtype = x_dtype, ids_dtype, weights_dtype, y_dtype
        args.n_tokens, args.k = int(n_tokens), int(k)
        out = ctypes.c_size_t()
        _check(_C.strata_moe_workspace_bytes(self._handle, ctypes.byref(args), ctypes.byref(out)))
        return out.value

    def _run_raw(self, x, x_dtype, ids, ids_dtype, weights, weights_dtype, y, y_dtype, n_tokens, k,
                 workspace, workspace_bytes, arm_code, numerics_code, threads, stream):
        self._require_open()
        options = _lib.RunOptions()
        options.struct_size = ctypes.sizeof(_lib.RunOptions)
        options.arm = arm_code
        options.numerics = numerics_code
        options.threads = int(threads)
        options.cuda_stream = stream
        args = _lib.RunArgs()
        args.struct_size = ctypes.sizeof(_lib.RunArgs)
        args.x, args.x_dtype = x, x_dtype
        args.ids, args.ids_dtype = ids, ids_dtype
        args.weights, args.weights_dtype = weights, weights_dtype
        args.y, args.y_dtype = y, y_dtype
        args.n_tokens, args.k = n_tokens, k
        args.workspace, args.workspace_bytes = workspace, workspace_bytes
        args.options = ctypes.pointer(options)
        _check(_C.strata_moe_layer_run_ex(self._handle, ctypes.byref(args)))

    def run(self, x, ids, weights, out=None, *, arm=None, numerics=None, threads=0, out_dtype=None):
        """y[t] = sum_j weights[t, j] * expert_{ids[t, j]}(x[t]).

        numpy: x [T, d] float32/float16, ids [T, k] int32/int64, weights [T, k] float32/float16;
        y (or `out`) [T, d] in x's dtype unless out_dtype says otherwise. torch tensors (CPU or
        CUDA, on the current stream) go through the torch op; bfloat16 is accepted there.
        arm: None (the environment), 'production', 'fused', 'fused-sm80', 'fused-hopper',
        'fused-wmma'; numerics: None (the environment, else q10 where the backend has a q10 arm
        for the layer, else q8), 'q8', 'q10'."""
        arm_code = _option(_lib.ARMS, arm, "arm")
        numerics_code = _option(_lib.NUMERICS, numerics, "numerics")
        if _is_torch(x):
            from . import _torch
            return _torch.run_tensors(self, x, ids, weights, out, arm_code, numerics_code, out_dtype)
        if self.backend != "cpu":
            raise _invalid("x: a CUDA layer runs on torch CUDA tensors, not numpy arrays")
        x = self._array(x, "x", (None, self.d), (np.float32, np.float16))
        n_tokens = x.shape[0]
        ids = self._array(ids, "ids", (n_tokens, None), (np.int32, np.int64))
        k = ids.shape[1]
        weights = self._array(weights, "weights", (n_tokens, k), (np.float32, np.float16))
        y_dtype = np.dtype(out_dtype) if out_dtype is not None else (out.dtype if out is not None else x.dtype)
        if y_dtype not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise _invalid(f"out_dtype: {y_dtype} is not float32 or float16")
        if out is None:
            out = np.empty((n_tokens, self.d), dtype=y_dtype)
        elif not isinstance(out, np.ndarray) or out.shape != (n_tokens, self.d) or out.dtype != y_dtype \
                or not out.flags.c_contiguous or not out.flags.writeable:
            raise _invalid(f"out: must be a writeable C-contiguous {y_dtype} array of shape {(n_tokens, self.d)}")
        codes = [_NUMPY_DTYPES[a.dtype] for a in (x, ids, weights)] + [_NUMPY_DTYPES[y_dtype]]
        workspace, base, nbytes = None, None, 0
        if k >= 1:
            nbytes = self.workspace_bytes(n_tokens, k, *codes)
        if nbytes > 0:
            workspace = np.empty(nbytes + _WORKSPACE_ALIGN, dtype=np.uint8)
            base = workspace.ctypes.data + (-workspace.ctypes.data) % _WORKSPACE_ALIGN
        self._run_raw(x.ctypes.data, codes[0], ids.ctypes.data, codes[1], weights.ctypes.data, codes[2],
                      out.ctypes.data, codes[3], n_tokens, k, base, nbytes, arm_code, numerics_code, threads,
                      None)
        return out

    __call__ = run

    @staticmethod
    def _array(value, name, shape, dtypes):
        a = np.asarray(value)
        if a.dtype not in [np.dtype(t) for t in dtypes]:
            allowed = ", ".join(np.dtype(t).name for t in dtypes)
            raise _invalid(f"{name}: dtype {a.dtype} is not one of {allowed}")
        if a.ndim != 2 or any(want is not None and got != want for got, want in zip(a.shape, shape)):
            want = "[" + ", ".join("?" if s is None else str(s) for s in shape) + "]"
            raise _invalid(f"{name}: shape {list(a.shape)} does not match {want}")
        return np.ascontiguousarray(a)
