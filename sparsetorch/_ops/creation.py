"""Creation ops: tensor, as_tensor, asarray, from_numpy, scalar_tensor, zeros/ones/empty/full
(+ _like), empty_strided, complex, polar.

Ranges (arange, linspace, eye, ...) live in ``_ranges.py`` (re-exported here) and the conversion
of Python data in ``_data.py``; random creation (rand, randn, randint, ...) in ``random.py``. Data is converted on
the host with NumPy (interop, not a kernel) and then placed on the target device.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np  # host-side interop (from_numpy, as_tensor); not a kernel

from .. import _dtype as D
from .. import _flags
from .._backend import get_backend
from .._device import CPU, as_device
from .._dispatch import call, defop, wrap
from .._layout import strided
from .._tensor import Tensor
from ._data import (
    check_dtype,
    checked_fill_value,
    finish,
    host_array,
    np_to_dtype,
    out_dtype,
    parse_size,
    place,
    size_args,
)
from ._ranges import *  # noqa: F401,F403
from ._ranges import __all__ as _ranges_all
from ._util import check_tensor, with_out
from .pinning import pinned_result
from .sparse_core import sparse_coo_tensor

if TYPE_CHECKING:
    from .._dtype import dtype
    from .._layout import layout
    from .._typing import DeviceLike, IntOrSize, Number, SizeLike

__all__ = [
    "tensor",
    "as_tensor",
    "asarray",
    "from_numpy",
    "scalar_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "empty_strided",
    "complex",
    "polar",
]
__all__ += _ranges_all


def tensor(data: Any, *, dtype: dtype | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Constructs a tensor with no autograd history by copying ``data``.

    Python floats give the default dtype, ints ``int64``, bools ``bool``, complex numbers the
    default complex dtype; NumPy arrays and scalars keep their dtype.

    >>> tensor([[1, 2], [3, 4]]).dtype
    sparsetorch.int64
    """
    check_dtype(dtype, "tensor")
    device = as_device(device) if device is not None else None
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "sparsetorch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        t = data.detach().to(dtype=dtype or data.dtype, device=device or data.device, copy=True)
        t._vc = None
        return pinned_result(finish(t, requires_grad), pin_memory)
    arr, dt = host_array(data, dtype, "tensor")
    return pinned_result(finish(place(arr, dt, device or CPU), requires_grad), pin_memory)


def as_tensor(data: Any, dtype: dtype | None = None, device: DeviceLike | None = None) -> Tensor:
    """Converts ``data`` into a tensor, sharing memory with NumPy arrays and tensors when it can.

    No copy is made when ``data`` is a tensor or CPU NumPy array of the requested dtype.
    """
    check_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data.to(dtype=dtype or data.dtype, device=device or data.device)
    dev = as_device(device)
    if (
        isinstance(data, np.ndarray)
        and dev.type == "cpu"
        and data.dtype.isnative
        and (dtype is None or dtype.np == data.dtype)
        and data.dtype in D._FROM_NP  # other dtypes take the converting path (and its error)
    ):
        return from_numpy(data)
    arr, dt = host_array(data, dtype, "as_tensor")
    return place(arr, dt, dev)


def asarray(obj: Any, *, dtype: dtype | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, requires_grad: bool | None = None) -> Tensor:
    """Converts ``obj`` to a tensor (torch.asarray): shares memory unless ``copy=True`` or a
    conversion is needed; ``copy=False`` raises ValueError when sharing is impossible."""
    check_dtype(dtype, "asarray")
    if copy is False:
        src_dt = (
            obj.dtype
            if isinstance(obj, Tensor)
            else (np_to_dtype(obj.dtype) if isinstance(obj, np.ndarray) else None)
        )
        if src_dt is not None and dtype is not None and src_dt is not dtype:
            raise ValueError(
                f"can't alias tensor with dtype '{src_dt.scalar_name}' into dtype "
                f"'{dtype.scalar_name}'."
            )
    if copy:
        if isinstance(obj, Tensor):
            t = obj.detach().to(dtype=dtype or obj.dtype, device=device or obj.device, copy=True)
        else:
            t = tensor(obj, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad is None:
        return t
    if requires_grad and not t._rg:
        if t is obj:
            t = t.detach()
        return finish(t, True)
    if not requires_grad and t._rg:
        return t.detach()
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """Creates a tensor that shares memory with ``ndarray`` (writes show on both sides).

    >>> a = np.array([1, 2, 3]); t = from_numpy(a); t[0] = -1; a
    array([-1,  2,  3])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not ndarray.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported; call array.astype(array.dtype."
            "newbyteorder('=')) first."
        )
    dt = D.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and sparsetorch does not support non-writable "
            "tensors: writing to this tensor will fail. Copy the array (array.copy()) or make it "
            "writable before converting it to a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return wrap(ndarray, dt, CPU, strided)


def scalar_tensor(
    s: Number | Tensor, like: Tensor | None = None, *, dtype: dtype | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False, layout: layout | None = None,
    pin_memory: bool = False,
) -> Tensor:
    """A 0-d tensor holding ``s`` (the default dtype unless ``dtype`` is given).

    ``like`` (internal, used by the reflected operators) takes dtype and device from a tensor.
    """
    if like is not None and dtype is None:
        dtype = D.result_type(like, s)
        device = like.device
    dt = dtype or D.get_default_dtype()
    if isinstance(s, Tensor):
        s = s.item()
    elif not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    return finish(place(np.array(s, dtype=dt.np), dt, as_device(device)), requires_grad)


# ---- filled tensors ----


def _filled(fname, shape, fill, dtype, device, requires_grad, out, layout=None):
    if layout is not None and layout is not strided:
        return _sparse_zeros(fname, shape, fill, dtype, device, requires_grad, layout)
    dt = out_dtype(dtype, out, fname) or D.get_default_dtype()
    device = as_device(device)
    xp = np if device is CPU else get_backend(device).xp
    if fill is None:
        arr = xp.empty(shape, dt.np)
        v = _flags.uninitialized_fill(dt.np)  # torch's deterministic mode fills new memory
        if v is not None:
            arr.fill(v)
    elif fill == 0 and fill.__class__ is int:
        arr = xp.zeros(shape, dt.np)
    elif fill == 1 and fill.__class__ is int:
        arr = xp.ones(shape, dt.np)
    else:
        arr = xp.full(shape, checked_fill_value(fill, dt), dt.np)
    return finish(wrap(arr, dt, device, strided), requires_grad, out, fname)


def _sparse_zeros(fname, shape, fill, dtype, device, requires_grad, layout):
    if fill != 0 or layout.name != "sparse_coo":
        raise NotImplementedError(
            f"{fname}(): layout={layout!r} is not supported; create a strided tensor and convert "
            "it with .to_sparse()"
        )
    dt = dtype or D.get_default_dtype()
    idx = zeros(len(shape), 0, dtype=D.int64, device=device)
    vals = zeros(0, dtype=dt, device=device)
    return sparse_coo_tensor(idx, vals, shape, requires_grad=requires_grad)


def zeros(
    *args: IntOrSize,
    size: SizeLike | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Returns a tensor filled with the scalar value 0, with the shape given by ``size``.

    >>> zeros(2, 3).shape
    sparsetorch.Size([2, 3])
    """
    check_dtype(dtype, "zeros")
    return pinned_result(_filled(
        "zeros", size_args("zeros", args, size), 0, dtype, device, requires_grad, out, layout
    ), pin_memory)


def ones(
    *args: IntOrSize,
    size: SizeLike | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Returns a tensor filled with the scalar value 1, with the shape given by ``size``."""
    check_dtype(dtype, "ones")
    return pinned_result(_filled(
        "ones", size_args("ones", args, size), 1, dtype, device, requires_grad, out, layout
    ), pin_memory)


def empty(
    *args: IntOrSize,
    size: SizeLike | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Returns a tensor filled with uninitialized data, with the shape given by ``size``."""
    check_dtype(dtype, "empty")
    return pinned_result(_filled(
        "empty", size_args("empty", args, size), None, dtype, device, requires_grad, out, layout
    ), pin_memory)


def full(
    size: SizeLike,
    fill_value: Number | Tensor,
    *,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    The dtype is inferred from ``fill_value``: bool -> bool, int -> int64, float -> default.
    """
    check_dtype(dtype, "full")
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}"
        )
    if isinstance(fill_value, Tensor):
        if fill_value.ndim != 0:
            raise TypeError("full(): argument 'fill_value' (position 2) must be Number, not Tensor")
        fill_value = fill_value.item()
    elif not isinstance(fill_value, numbers.Number):
        raise TypeError(
            f"full(): argument 'fill_value' (position 2) must be Number, not "
            f"{type(fill_value).__name__}"
        )
    if dtype is None and out is None:
        dtype = D._scalar_dtype(fill_value)
    return pinned_result(_filled(
        "full", parse_size((size,), "full"), fill_value, dtype, device, requires_grad, out, layout
    ), pin_memory)


def _like(fname, input, fill, dtype, layout, device, requires_grad):
    check_tensor(input, fname)
    check_dtype(dtype, fname)
    return _filled(
        fname,
        input._data.shape if input.layout is strided else tuple(input.shape),
        fill,
        dtype or input.dtype,
        device or input.device,
        requires_grad,
        None,
        layout if layout is not None else input.layout,
    )


def zeros_like(
    input: Tensor, *, dtype: dtype | None = None, layout: layout | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False, memory_format: Any = None,
) -> Tensor:
    """A tensor of zeros with the size (and by default dtype and device) of ``input``."""
    return _like("zeros_like", input, 0, dtype, layout, device, requires_grad)


def ones_like(
    input: Tensor, *, dtype: dtype | None = None, layout: layout | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False, memory_format: Any = None,
) -> Tensor:
    """A tensor of ones with the size (and by default dtype and device) of ``input``."""
    return _like("ones_like", input, 1, dtype, layout, device, requires_grad)


def empty_like(
    input: Tensor, *, dtype: dtype | None = None, layout: layout | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False, memory_format: Any = None,
) -> Tensor:
    """An uninitialized tensor with the size (and by default dtype and device) of ``input``."""
    return _like("empty_like", input, None, dtype, layout, device, requires_grad)


def full_like(
    input: Tensor,
    fill_value: Number | Tensor,
    *,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """A tensor like ``input`` filled with ``fill_value`` (dtype of ``input`` by default)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _like("full_like", input, fill_value, dtype, layout, device, requires_grad)


def empty_strided(
    size: SizeLike, stride: SizeLike, *, dtype: dtype | None = None, layout: layout | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False, pin_memory: bool = False,
) -> Tensor:
    """An uninitialized tensor with the given ``size`` and ``stride`` (in elements)."""
    check_dtype(dtype, "empty_strided")
    shape = parse_size((size,), "empty_strided")
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(stride)})"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(stride)}"
        )
    dt = dtype or D.get_default_dtype()
    device = as_device(device)
    xp = get_backend(device).xp
    n = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    buf = xp.empty(n, dt.np)
    v = _flags.uninitialized_fill(dt.np)
    if v is not None:
        buf.fill(v)
    arr = xp.lib.stride_tricks.as_strided(buf, shape, tuple(s * dt.itemsize for s in stride))
    return finish(wrap(arr, dt, device, strided), requires_grad)


# ---- complex construction ----

# torch's formulas: real inputs, complex result; the (complex) gradient is projected back
_complex_op = defop(
    "complex", {(strided, strided): lambda be, re, im: re + 1j * im}, inputs=("real", "imag"),
    grads={"real": lambda grad: grad.real, "imag": lambda grad: grad.imag}, holomorphic=False,
)
_polar_op = defop(
    "polar", {(strided, strided): lambda be, r, th: r * be.xp.exp(1j * th)}, inputs=("abs", "angle"),
    grads={"abs": lambda grad, result: (grad.conj() * result.sgn()).real,
           "angle": lambda grad, result: (grad.conj() * result * 1j).real},
    holomorphic=False,
)


def _complex_pair(fname, a, b, an, bn, op, out):
    check_tensor(a, fname, an)
    check_tensor(b, fname, bn)
    if a.dtype not in (D.float16, D.float32, D.float64) or b.dtype not in (
        D.float16,
        D.float32,
        D.float64,
    ):
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{a.dtype.scalar_name} and {b.dtype.scalar_name}"
        )
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {a.dtype.scalar_name} but got scalar type "
            f"{b.dtype.scalar_name} for second argument"
        )
    dt = a.dtype.to_complex()
    return with_out(call(op, (a, b), (), dt, None), out, fname)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A complex tensor ``real + 1j * imag``."""
    return _complex_pair("complex", real, imag, "real", "imag", _complex_op, out)


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A complex tensor ``abs * exp(1j * angle)``."""
    return _complex_pair("polar", abs, angle, "abs", "angle", _polar_op, out)
