"""``torch.autocast`` and the autocast state functions (torch.amp, torch 2.13 CPU semantics).

Under ``autocast("cpu")`` (default dtype bfloat16) the ops on torch's CPU lower-precision list
(matmul, mm, bmm, addmm, baddbmm, addbmm, linear, conv*, conv_transpose*, prelu, einsum, ...)
run in the autocast dtype and the ops on its float32 list (losses, prod, cdist, trace, quantile,
linalg, ...) in float32; everything else runs as it would outside. The per-op cast is in
``sparsetorch/_autocast.py``; this module holds the context manager and the state functions.
"""

import functools
import warnings

from .. import _autocast as _ac
from .. import _dtype as D

__all__ = [
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
]

# torch's device types, in the order its parser lists them
_DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)
_SUPPORTED = (D.bfloat16, D.float16)


def _known(device_type):
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")


def _autocast_device(device_type):
    """``device_type`` if sparsetorch has autocast state for it, else torch's error."""
    _known(device_type)
    if device_type not in _ac.DEFAULT_DTYPE:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    return device_type


def is_autocast_available(device_type):
    """Whether autocast can be used on ``device_type`` (here: ``"cpu"`` and ``"cuda"``)."""
    _known(device_type)
    return device_type in _ac.DEFAULT_DTYPE


def _cuda_available():
    from ..cuda._runtime import is_available

    return is_available()


class autocast:
    """Context manager and decorator: listed ops run in lower precision on ``device_type``.

    ``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``, as ``torch.autocast``.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004 - torch's type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                if not _cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                    f"{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, _SUPPORTED)) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled
        self._prev = []

    def __enter__(self):
        s = _ac.state()
        dev = self.device
        self._prev.append((s.cache_enabled, s.enabled[dev], s.dtype[dev]))
        s.enabled[dev] = bool(self._enabled)
        s.dtype[dev] = self.fast_dtype
        s.nesting += 1
        s.cache_enabled = bool(self._cache_enabled)
        _ac.refresh(s)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        s = _ac.state()
        s.nesting -= 1
        if s.nesting == 0:  # left the outermost region: the cast weights are dropped
            s.cache.clear()
        cache_enabled, enabled, dtype = self._prev.pop()
        s.enabled[self.device] = enabled
        s.dtype[self.device] = dtype
        s.cache_enabled = cache_enabled
        _ac.refresh(s)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


# ---- state functions (torch.is_autocast_enabled, ...) ----

def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (``"cuda"`` when not given, as torch)."""
    return _ac.state().enabled[_autocast_device("cuda" if device_type is None else device_type)]


def set_autocast_enabled(*args):
    """``set_autocast_enabled(device_type, enabled)`` (or the old ``set_autocast_enabled(enabled)``
    for CUDA)."""
    device_type, enabled = ("cuda", args[0]) if len(args) == 1 else args
    s = _ac.state()
    s.enabled[_autocast_device(device_type)] = bool(enabled)
    _ac.refresh(s)


def get_autocast_dtype(device_type):
    """get_autocast_dtype(device_type) -> dtype

    The dtype autocast casts to on ``device_type`` ('cpu' or 'cuda')."""
    return _ac.state().dtype[_autocast_device(device_type)]


def set_autocast_dtype(device_type, dtype):
    """set_autocast_dtype(device_type, dtype) -> None

    Set the dtype autocast casts to on ``device_type``."""
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be a dtype, not "
                        f"{type(dtype).__name__}")
    _ac.state().dtype[_autocast_device(device_type)] = dtype


def is_autocast_cache_enabled():
    """is_autocast_cache_enabled() -> bool

    Whether autocast caches the casts of leaf tensors inside a region."""
    return _ac.state().cache_enabled


def set_autocast_cache_enabled(enabled):
    """set_autocast_cache_enabled(enabled) -> None

    Turn autocast's cast cache on or off."""
    _ac.state().cache_enabled = bool(enabled)


def clear_autocast_cache():
    """clear_autocast_cache() -> None

    Drop the casts autocast has cached."""
    _ac.state().cache.clear()


def autocast_increment_nesting():
    """autocast_increment_nesting() -> int

    Enter one level of autocast nesting; returns the new depth."""
    s = _ac.state()
    s.nesting += 1
    return s.nesting


def autocast_decrement_nesting():
    """autocast_decrement_nesting() -> int

    Leave one level of autocast nesting; returns the new depth."""
    s = _ac.state()
    s.nesting -= 1
    return s.nesting


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    """is_autocast_cpu_enabled() -> bool

    Deprecated: ``is_autocast_enabled('cpu')`` (warns)."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """set_autocast_cpu_enabled(enabled) -> None

    Deprecated: ``set_autocast_enabled('cpu', enabled)`` (warns)."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """get_autocast_cpu_dtype() -> dtype

    Deprecated: ``get_autocast_dtype('cpu')`` (warns)."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """set_autocast_cpu_dtype(dtype) -> None

    Deprecated: ``set_autocast_dtype('cpu', dtype)`` (warns)."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """get_autocast_gpu_dtype() -> dtype

    Deprecated: ``get_autocast_dtype('cuda')`` (warns)."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """set_autocast_gpu_dtype(dtype) -> None

    Deprecated: ``set_autocast_dtype('cuda', dtype)`` (warns)."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


# ---- custom autograd.Function helpers ----

def _cast_inputs(value, device_type, dtype):
    d = getattr(value, "dtype", None)
    if d.__class__ is D.dtype and hasattr(value, "device"):
        ok = d.is_floating_point and value.device.type == device_type and d is not D.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``autograd.Function.forward`` (as ``torch.amp.custom_fwd``):
    with ``cast_inputs``, inside an autocast region the forward runs with autocast off on inputs
    cast to ``cast_inputs``; without, it runs under the current autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004 - torch's type
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs),
                       **_cast_inputs(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``autograd.Function.backward``: it runs under the autocast state
    its forward ran with (as ``torch.amp.custom_bwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004 - torch's type
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
