"""Shared helpers of the creation ops, and the conversion of Python data for ``tensor()``.

Python data is converted on the host with NumPy (interop, not a kernel): nested sequences are
walked once to find their shape and torch's inferred dtype (Python floats -> the default dtype,
ints -> int64, bools -> bool, complex -> the default complex dtype; NumPy scalars, arrays and
one-element tensors keep their dtype), then handed to NumPy in one call.
"""

import math
import numbers

import numpy as np  # host-side conversion of Python data; not a kernel

from .. import _dtype as D
from .. import _torch_warnings as _tw
from .._backend import CPU as CPU_BACKEND, get_backend, move
from .._device import CPU, as_device
from .._dispatch import wrap
from .._layout import strided
from .._tensor import Tensor
from ._util import check_tensor, with_out

__all__ = []

_builtin_range = range
_builtin_complex = complex

# torch's C++ scalar-type names, used in messages that quote torch's wording
GRAD_DTYPE_MESSAGE = "Only Tensors of floating point and complex dtype can require gradients"


# ---- shared argument helpers (also used by random.py) ----


def check_dtype(dtype, fname):
    if dtype is not None and dtype.__class__ is not D.dtype:
        raise TypeError(
            f"{fname}(): argument 'dtype' must be sparsetorch.dtype, not {type(dtype).__name__}"
        )


def parse_size(size, fname):
    """Sizes given as ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(Size)`` -> tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for i, s in enumerate(size):
        if s.__class__ is not int:
            if (
                isinstance(s, bool)
                or not hasattr(s, "__index__")
                or (isinstance(s, Tensor) and (s.dtype.is_floating_point or s.dtype.is_complex))
            ):
                raise TypeError(
                    f"{fname}(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(s).__name__} at pos {i}"
                )
            s = s.__index__()
        out.append(s)
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def finish(t, requires_grad, out=None, fname=None):
    """Apply ``requires_grad`` (floating/complex only, as torch) and the ``out=`` contract."""
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(GRAD_DTYPE_MESSAGE)
        t._rg = True
    if out is not None:
        return with_out(t, out, fname)
    return t


def out_dtype(dtype, out, fname):
    """Factory dtype when ``out=`` is given: defaults to, and must agree with, ``out.dtype``."""
    if out is None:
        return dtype
    check_tensor(out, fname, "out")
    if dtype is None:
        return out.dtype
    if dtype is not out.dtype:
        raise RuntimeError(
            f"dtype {dtype.scalar_name} does not match dtype of out parameter "
            f"({out.dtype.scalar_name})"
        )
    return dtype


def place(arr, dt, device):
    """Wrap a host array as a tensor of dtype ``dt`` on ``device`` (moved when not the CPU)."""
    if device is not CPU and device.type != "cpu":
        arr = move(arr, CPU_BACKEND, get_backend(device))
    return wrap(arr, dt, device, strided)


# ---- tensor(): dtype inference and conversion of nested Python data ----

_PY_NUMBERS = frozenset((float, int, bool, _builtin_complex))
_NP_NUMBER = (np.number, np.bool_)


def _py_dtype(t):
    if t is float:
        return D.get_default_dtype()
    if t is int:
        return D.int64
    if t is bool:
        return D.bool
    return D.default_complex()


def _leaf_dtype(x):
    """The dtype a scalar leaf stands for, or None when ``x`` is not a scalar."""
    t = type(x)
    if t in _PY_NUMBERS:
        return _py_dtype(t)
    if isinstance(x, np.generic):
        return np_to_dtype(x.dtype)
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return x.dtype
    if isinstance(x, numbers.Number):  # Fraction, Decimal, ...
        if isinstance(x, numbers.Integral):
            return D.int64
        return D.get_default_dtype() if isinstance(x, numbers.Real) else D.default_complex()
    return None


def np_to_dtype(npdt):
    try:
        return D.from_numpy_dtype(npdt)
    except TypeError:
        if npdt.kind in "biufc" and not npdt.isnative:
            return D.from_numpy_dtype(npdt.newbyteorder("="))
        raise


def _is_seq(x):
    c = x.__class__
    if c is list or c is tuple or c is _builtin_range:
        return True
    if isinstance(x, (str, bytes, dict, Tensor)) or x is None:
        return False
    return hasattr(x, "__len__") and hasattr(x, "__getitem__")


def _array_like(x):
    """Objects NumPy reads without walking them (array interfaces, buffers)."""
    return (
        hasattr(x, "__array__") or hasattr(x, "__array_interface__") or isinstance(x, memoryview)
    ) and not isinstance(x, Tensor)


class _Scan:
    """Result of walking nested data: inferred dtype and whether Tensors need unpacking."""

    __slots__ = ("dtype", "tensors")

    def __init__(self):
        self.dtype = None
        self.tensors = False

    def add(self, d):
        self.dtype = d if self.dtype is None else D.promote_types(self.dtype, d)


def _shape_of(data):
    shape = []
    x = data
    while True:
        if isinstance(x, np.ndarray):
            shape.extend(x.shape)
            return shape
        if not _is_seq(x):
            return shape
        n = len(x)
        shape.append(n)
        if n == 0:
            return shape
        x = x[0]


def _walk(x, shape, d, scan):
    if isinstance(x, np.ndarray):
        if d:  # an array inside a sequence (dlrm's Criteo loader): torch warns once
            _tw.list_of_ndarrays()
        if x.shape != tuple(shape[d:]):
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {len(x)})")
        scan.add(np_to_dtype(x.dtype))
        return
    if not _is_seq(x):
        raise TypeError(
            f"not a sequence: expected a nested sequence at dim {d}, got {type(x).__name__}"
        )
    n = shape[d]
    if len(x) != n:
        raise ValueError(f"expected sequence of length {n} at dim {d} (got {len(x)})")
    if d + 1 < len(shape):
        for e in x:
            _walk(e, shape, d + 1, scan)
        return
    types = set(map(type, x))
    if types <= _PY_NUMBERS:
        for t in types:
            scan.add(_py_dtype(t))
        return
    if all(t in _PY_NUMBERS or issubclass(t, _NP_NUMBER) for t in types):
        # NumPy scalars: one dtype per scalar type (a list of np.int64 offsets, as dlrm's data
        # loader builds, was a dtype lookup and a promotion per element: 2x torch's time)
        for t in types:
            scan.add(_py_dtype(t) if t in _PY_NUMBERS else np_to_dtype(np.dtype(t)))
        return
    for e in x:
        dt = _leaf_dtype(e)
        if dt is None:
            if _is_seq(e) or isinstance(e, np.ndarray):
                raise TypeError(
                    f"found a sequence at dim {d + 1}, but the first element at that depth is a "
                    "number: nested sequences must be rectangular"
                )
            if isinstance(e, (str, bytes)):  # torch: a TypeError/ValueError, not "infer dtype"
                raise TypeError(f"tensor(): invalid data type '{type(e).__name__}' in data")
            raise RuntimeError(f"Could not infer dtype of {type(e).__name__}")
        if isinstance(e, Tensor):
            scan.tensors = True
        scan.add(dt)


def _unpack_tensors(x):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.ndarray) or not _is_seq(x):
        return x
    return [_unpack_tensors(e) for e in x]


def _overflow(dt):
    return RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def _check_int_range(a, dt):
    """torch's overflow check for Python numbers stored into an integer dtype."""
    if a.size == 0:
        return
    info = np.iinfo(dt.np)
    lo = info.min if dt.is_signed else -info.max
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise _overflow(dt)
    if a.min() < lo or a.max() > info.max:
        raise _overflow(dt)


def _convert_python(data, dt, scan):
    """Nested Python data -> a fresh host array of dtype ``dt``."""
    if scan.tensors:
        data = _unpack_tensors(data)
    inferred = scan.dtype
    if dt.is_floating_point or dt.is_complex or dt is D.bool or inferred is None:
        if inferred is not None and inferred.is_complex and not dt.is_complex:
            raise TypeError("must be real number, not complex")
        try:
            return np.array(data, dtype=dt.np)
        except OverflowError:
            raise ValueError("Overflow when unpacking long long") from None
    # integer target: go through int64/float64 so out-of-range values raise as in torch
    wide = np.float64 if (inferred.is_floating_point or inferred.is_complex) else np.int64
    if inferred.is_complex:
        raise TypeError("must be real number, not complex")
    try:
        a = np.array(data, dtype=wide)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if dt is not D.int64 or wide is np.float64:
        _check_int_range(a, dt)
    return a if a.dtype == dt.np else a.astype(dt.np)


def data_tensor(data, device=None):
    """``tensor(data, device=device)`` for Python or NumPy ``data`` (not a Tensor): the index and
    value arguments of the sparse constructors."""
    arr, dt = host_array(data, None, "tensor")
    return place(arr, dt, as_device(device) if device is not None else CPU)


def host_array(data, dtype, fname):
    """(fresh host ndarray, dtype) for ``tensor(data)``: torch's inference rules."""
    if data.__class__ is list:  # fast path: a flat list of Python numbers
        types = set(map(type, data))
        if types and types <= _PY_NUMBERS:
            scan = _Scan()
            for t in types:
                scan.add(_py_dtype(t))
            dt = dtype or scan.dtype
            return _convert_python(data, dt, scan), dt
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, np.ndarray) and _array_like(data) and not _is_list_like(data):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        dt = dtype or np_to_dtype(data.dtype)
        return np.array(data, dtype=dt.np, copy=True), dt
    leaf = _leaf_dtype(data)
    if leaf is not None:
        dt = dtype or leaf
        scan = _Scan()
        scan.add(leaf)
        scan.tensors = isinstance(data, Tensor)
        return _convert_python(data, dt, scan).reshape(()), dt
    if not _is_seq(data):
        if isinstance(data, (str, bytes)):
            raise TypeError(f"tensor(): invalid data type '{type(data).__name__}'")
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    shape = _shape_of(data)
    scan = _Scan()
    if shape:
        _walk(data, shape, 0, scan)
    dt = dtype or scan.dtype or D.get_default_dtype()
    if 0 in shape:
        return np.zeros(shape, dt.np), dt
    return _convert_python(data, dt, scan), dt


def _is_list_like(x):
    return x.__class__ is list or x.__class__ is tuple


def size_args(fname, args, size):
    if size is not None:
        if args:
            raise TypeError(f"{fname}(): got multiple values for argument 'size'")
        args = (size,)
    # NOTE: torch requires a size; ``zeros()`` giving a 0-d tensor is a harmless extension that
    # code building shapes with ``zeros(*shape)`` relies on.
    if (
        len(args) == 1
        and not isinstance(args[0], (tuple, list))
        and (
            args[0].__class__ is not int
            and (isinstance(args[0], bool) or not hasattr(args[0], "__index__"))
        )
    ):
        raise TypeError(
            f"{fname}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{type(args[0]).__name__}"
        )
    return parse_size(args, fname)


def checked_fill_value(v, dt):
    """A fill value checked as torch does (integer overflow raises RuntimeError)."""
    if dt.is_complex or dt is D.bool:
        return v
    if dt.is_floating_point:
        if isinstance(v, _builtin_complex):
            raise TypeError("must be real number, not complex")
        return v
    if isinstance(v, float) and not math.isfinite(v):
        raise _overflow(dt)
    iv = int(v)
    info = np.iinfo(dt.np)
    lo = info.min if dt.is_signed else -info.max
    if iv < lo or iv > info.max:
        raise _overflow(dt)
    # negative values wrap into unsigned dtypes, as torch allows
    return np.array(iv).astype(dt.np)[()] if iv < 0 and not dt.is_signed else iv


def broadcast_shape(a, b):
    """Broadcast shape of ``a`` and ``b`` (RuntimeError with torch's message if impossible)."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def zero_grad(grad):
    """The gradient of an input whose values were overwritten or sampled: zeros (torch's)."""
    return grad.new_zeros(grad.shape)
