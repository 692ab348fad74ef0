"""torch.backends.cuda: CUDA math switches. ``is_built()`` says whether CuPy (sparsetorch's CUDA
runtime) imports. ``matmul.allow_tf32`` is a view of ``torch.get_float32_matmul_precision()``
(True unless the precision is ``"highest"``), as in torch; CuPy's float32 products follow
CuPy's own setting (``CUPY_TF32``), so these switches are recorded, not applied."""

import contextlib
import warnings

from .. import _backend, _flags
from . import _props

__all__ = [
    "cuBLASModule", "cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp",
    "enable_math_sdp", "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built",
    "math_sdp_enabled",
    "matmul", "mem_efficient_sdp_enabled", "preferred_blas_library", "preferred_linalg_library",
    "sdp_kernel",
]


def is_built():
    """Whether sparsetorch can run on CUDA here (CuPy imports; a GPU need not be present)."""
    if _backend.cuda_device_count() > 0:
        return True
    reason = _backend.cuda_unavailable_reason() or ""
    return not ("not installed" in reason or "failed to import" in reason)


def _reduced(key, name):
    def get(self):
        return _flags.STATE[key]

    def set_(self, value):
        if isinstance(value, (tuple, list)) and value and all(isinstance(v, bool) for v in value):
            if len(value) > 1 and value[0] and not value[1]:
                raise RuntimeError("allow_splitk=False is not supported when reduced precision "
                                   "reductions are enabled")
            value = value[0]
        if not isinstance(value, bool):
            raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                            f"{type(value)}")
        _flags.STATE[key] = value

    return property(get, set_)


def _tf32_get(self):
    return _flags.STATE["matmul_precision"] != "highest"


def _tf32_set(self, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
    _flags.STATE["matmul_precision"] = "high" if value else "highest"


class cuBLASModule:
    """``torch.backends.cuda.matmul``: cuBLAS's switches."""

    __slots__ = ()
    allow_tf32 = property(_tf32_get, _tf32_set)
    allow_fp16_reduced_precision_reduction = _reduced(
        "fp16_reduced", "allow_fp16_reduced_precision_reduction")
    allow_bf16_reduced_precision_reduction = _reduced(
        "bf16_reduced", "allow_bf16_reduced_precision_reduction")
    allow_fp16_accumulation = _props.bool_flag("fp16_accumulation",
                                               "set_allow_fp16_accumulation_cublas")
    fp32_precision = property(lambda self: _MATMUL_PRECISION[0],
                              lambda self, v: _MATMUL_PRECISION.__setitem__(
                                  0, _props.check_precision(v)))

    def __getattr__(self, name):
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if not isinstance(getattr(type(self), name, None), property):
            raise AttributeError("Unknown attribute " + name)
        object.__setattr__(self, name, value)


_MATMUL_PRECISION = ["none"]
matmul = cuBLASModule()


def preferred_linalg_library(backend=None):
    """The linear algebra library for CUDA (recorded only: CuPy picks cuSOLVER)."""
    if backend is not None:
        _LIB[0] = str(backend)
    return _LIB[0]


def preferred_blas_library(backend=None):
    """The BLAS library for CUDA (recorded only: CuPy uses cuBLAS)."""
    if backend is not None:
        _BLAS[0] = str(backend)
    return _BLAS[0]


_LIB = ["Default"]
_BLAS = ["Cublas"]

# scaled_dot_product_attention backends: sparsetorch has one (math) implementation
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _SDP["flash"]


def enable_flash_sdp(enabled: bool):
    _SDP["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool):
    _SDP["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _SDP["math"]


def enable_math_sdp(enabled: bool):
    _SDP["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled: bool):
    _SDP["cudnn"] = bool(enabled)


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Context manager selecting the attention backends (recorded only); deprecated, as
    torch's, for ``torch.nn.attention.sdpa_kernel``."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.", FutureWarning, stacklevel=2)
    return _sdp_kernel(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_kernel(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    old = dict(_SDP)
    _SDP.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _SDP.update(old)
