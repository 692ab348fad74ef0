"""Creation ops: tensor, as_tensor, from_numpy, zeros/ones/empty/full (+ _like), ranges, eye.

Random creation (rand, randn, randint, ...) and ``Generator`` live in ``random.py``.
"""

import numbers

import numpy as np  # host-side conversion of Python data; not a kernel

from .. import _dtype as D
from .._backend import get_backend
from .._device import as_device
from .._dispatch import wrap
from .._layout import strided
from .._tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "scalar_tensor", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
    "logspace", "eye", "empty_strided",
]

_builtin_range = range


def _check_dtype(dtype, fname):
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be a sparsetorch dtype, not {type(dtype).__name__}")


def _infer_dtype(arr, data):
    """dtype of ``tensor(data)``: Python floats mean the default dtype, as in torch."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return D.from_numpy_dtype(arr.dtype)
    kind = arr.dtype.kind
    if kind == "f":
        return D.get_default_dtype() if arr.dtype == np.float64 else D.from_numpy_dtype(arr.dtype)
    if kind == "c":
        return D.default_complex() if arr.dtype == np.complex128 else D.from_numpy_dtype(arr.dtype)
    if kind in "iu":
        return D.int64 if arr.dtype.itemsize <= 8 and kind == "i" else D.from_numpy_dtype(arr.dtype)
    if kind == "b":
        return D.bool
    raise TypeError(
        f"tensor(): could not infer dtype of {type(data).__name__}; expected numbers, nested "
        "sequences of numbers, NumPy arrays or Tensors"
    )


def _to_host_array(data, fname):
    if isinstance(data, Tensor):
        return None
    if isinstance(data, (str, bytes, dict, set)) or data is None:
        raise TypeError(f"{fname}(): could not convert {type(data).__name__} to a tensor")
    try:
        arr = np.asarray(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{fname}(): could not convert data to a tensor: {e}") from None
    if arr.dtype == object:
        raise ValueError(
            f"{fname}(): could not convert data to a tensor: nested sequences must be rectangular "
            "and contain only numbers (or Tensors)"
        )
    return arr


def _place(arr, dtype, device, requires_grad, copy):
    device = as_device(device)
    be = get_backend(device)
    if dtype is not None and arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    elif copy:
        arr = arr.copy()
    if be.xp is not np:
        arr = be.xp.asarray(arr)
    t = wrap(arr, dtype or D.from_numpy_dtype(arr.dtype), device, strided)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Construct a tensor that owns a copy of ``data`` (numbers, nested lists, arrays, tensors)."""
    _check_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        t = data.detach().to(dtype=dtype or data.dtype, device=device or data.device, copy=True)
        return t.requires_grad_(requires_grad) if requires_grad else t
    arr = _to_host_array(data, "tensor")
    dt = dtype or _infer_dtype(arr, data)
    return _place(np.array(arr, dtype=dt.np, copy=True), dt, device, requires_grad, False)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor`, but shares memory with a NumPy array or tensor when it can."""
    _check_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data.to(dtype=dtype or data.dtype, device=device or data.device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and as_device(device).type == "cpu":
        return from_numpy(data)
    arr = _to_host_array(data, "as_tensor")
    dt = dtype or _infer_dtype(arr, data)
    return _place(arr, dt, device, False, False)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: share memory unless ``copy=True`` or a conversion is needed."""
    if copy:
        return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)
    t = as_tensor(obj, dtype=dtype, device=device)
    return t.requires_grad_(True) if requires_grad else t


def from_numpy(ndarray):
    """A tensor that shares memory with ``ndarray`` (writes show on both sides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return wrap(ndarray, D.from_numpy_dtype(ndarray.dtype), as_device(None), strided)


def scalar_tensor(s, like=None, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``s`` (dtype from ``like`` for the reflected operators)."""
    if like is not None and dtype is None:
        dtype = D.result_type(like, s) if isinstance(s, numbers.Number) else like.dtype
        device = like.device
    dt = dtype or D.result_type(s)
    return _place(np.asarray(s, dtype=dt.np), dt, device, requires_grad, False)


def _size(size, fname):
    """Sizes given as ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])`` -> tuple of ints >= 0."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(
                f"{fname}(): argument 'size' must be a tuple of ints, but found element of type "
                f"{type(s).__name__}"
            )
        if s < 0:
            raise RuntimeError(f"{fname}(): Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _filled(fname, size, fill, dtype, device, requires_grad):
    _check_dtype(dtype, fname)
    shape = _size(size, fname)
    dt = dtype or D.get_default_dtype()
    device = as_device(device)
    xp = get_backend(device).xp
    if fill is None:
        arr = xp.empty(shape, dt.np)
    elif fill == 0:
        arr = xp.zeros(shape, dt.np)
    else:
        arr = xp.full(shape, fill, dt.np)
    t = wrap(arr, dt, device, strided)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, out=None, dtype=None, layout=strided, device=None, requires_grad=False):
    """A tensor of zeros with shape ``size``."""
    return _with_out(_filled("zeros", size, 0, dtype, device, requires_grad), out, "zeros")


def ones(*size, out=None, dtype=None, layout=strided, device=None, requires_grad=False):
    """A tensor of ones with shape ``size``."""
    return _with_out(_filled("ones", size, 1, dtype, device, requires_grad), out, "ones")


def empty(*size, out=None, dtype=None, layout=strided, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialised tensor with shape ``size``."""
    return _with_out(_filled("empty", size, None, dtype, device, requires_grad), out, "empty")


def empty_strided(size, stride, *, dtype=None, layout=strided, device=None, requires_grad=False):
    return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=strided, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it)."""
    if dtype is None:
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        dtype = D.result_type(fill_value)
    if not isinstance(size, (tuple, list)):
        size = (size,)
    return _with_out(_filled("full", (tuple(size),), fill_value, dtype, device, requires_grad), out, "full")


def _like(fname, input, fill, dtype, device, requires_grad):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return _filled(fname, (tuple(input.shape),), fill, dtype or input.dtype, device or input.device,
                   requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like("zeros_like", input, 0, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like("ones_like", input, 1, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _like("empty_like", input, None, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like("full_like", input, fill_value, dtype, device, requires_grad)


def _num(x, fname, arg):
    if isinstance(x, Tensor):
        x = x.item()
    if not isinstance(x, numbers.Number) or isinstance(x, complex):
        raise TypeError(f"{fname}(): argument '{arg}' must be a real number, not {type(x).__name__}")
    return x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given."""
    _check_dtype(dtype, "arange")
    if end is None:
        start, end = 0, start
    start, end, step = _num(start, "arange", "start"), _num(end, "arange", "end"), _num(step, "arange", "step")
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign (start={start}, "
            f"end={end}, step={step})"
        )
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, numbers.Integral) for v in (start, end, step)) else D.get_default_dtype()
    device = as_device(device)
    xp = get_backend(device).xp
    import math

    n = max(0, math.ceil((end - start) / step))
    arr = (xp.arange(n, dtype=np.float64) * step + start).astype(dtype.np) if not dtype.is_complex \
        else xp.arange(n).astype(dtype.np) * step + start
    if dtype.is_floating_point is False and all(isinstance(v, numbers.Integral) for v in (start, end, step)):
        arr = xp.arange(start, end, step, dtype=dtype.np)
    t = wrap(arr, dtype, device, strided)
    if requires_grad:
        t.requires_grad_(True)
    return _with_out(t, out, "arange")


def range(start=0, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """Deprecated torch.range: like arange but includes ``end``; float by default."""
    if end is None:
        start, end = 0, start
    dtype = dtype or D.get_default_dtype()
    n = int((end - start) // step) + 1
    return arange(0, n, 1, dtype=D.float64, device=device).mul(step).add(start).to(dtype).requires_grad_(requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=strided, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_dtype(dtype, "linspace")
    if not isinstance(steps, numbers.Integral) or steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be a non-negative int, got {steps!r}")
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    xp = get_backend(device).xp
    arr = xp.linspace(_num(start, "linspace", "start"), _num(end, "linspace", "end"), steps).astype(dtype.np)
    t = wrap(arr, dtype, device, strided)
    if requires_grad:
        t.requires_grad_(True)
    return _with_out(t, out, "linspace")


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    dtype = dtype or D.get_default_dtype()
    lin = linspace(start, end, steps, dtype=D.float64, device=device)
    t = (lin * 0 + base).pow(lin).to(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return _with_out(t, out, "logspace")


def eye(n, m=None, *, out=None, dtype=None, layout=strided, device=None, requires_grad=False):
    """The ``n x m`` identity matrix."""
    _check_dtype(dtype, "eye")
    for v, a in ((n, "n"), (m, "m")):
        if v is not None and (not isinstance(v, numbers.Integral) or v < 0):
            raise RuntimeError(f"eye(): {a} must be greater or equal to 0, got {v!r}")
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    t = wrap(get_backend(device).xp.eye(n, m, dtype=dtype.np), dtype, device, strided)
    if requires_grad:
        t.requires_grad_(True)
    return _with_out(t, out, "eye")


def legacy_tensor(cls, args, kwargs):
    """``Tensor(data)`` / ``Tensor(*sizes)`` (torch's legacy constructor: float32 by default)."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        t = tensor(args[0], dtype=D.get_default_dtype(), device=device)
    else:
        t = empty(*args, device=device) if args else empty(0, device=device)
    if cls is not Tensor:
        t2 = object.__new__(cls)
        for s in ("_data", "dtype", "device", "layout", "_rg", "grad", "grad_fn", "_vc", "_extra"):
            setattr(t2, s, getattr(t, s))
        return t2
    return t


def _with_out(t, out, name):
    if out is None:
        return t
    from ._util import with_out

    return with_out(t, out, name)
