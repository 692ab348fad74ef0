"""Range factories: arange, range, linspace, logspace, eye, tril_indices, triu_indices.

Values follow torch's arithmetic: int64 ranges are computed in int64 from truncated arguments,
floating ranges round ``start + i * step`` once (torch's fused multiply-add), linspace counts up
from ``start`` for the first half and down from ``end`` for the second.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np  # host-side computation of the values; not a kernel

from .. import _dtype as D
from .._backend import get_backend
from .._device import as_device
from .._dispatch import wrap
from .._layout import strided
from .._tensor import Tensor
from ._data import check_dtype, finish, out_dtype, place

if TYPE_CHECKING:
    from .._dtype import dtype
    from .._layout import layout
    from .._typing import DeviceLike, Number

__all__ = ["arange", "eye", "linspace", "logspace", "range", "tril_indices", "triu_indices"]

# ---- ranges ----


def _range_num(x, fname, arg, pos):
    c = x.__class__
    if c is int or c is float:
        return x
    if isinstance(x, (Tensor, np.generic)):
        x = x.item()
    if not isinstance(x, numbers.Number):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be Number, not {type(x).__name__}"
        )
    if isinstance(x, complex):
        raise RuntimeError("value cannot be converted to type double without overflow")  # noqa: TRY004 - torch's type
    return x


def arange(
    start: Number | Tensor = 0,
    end: Number | Tensor | None = None,
    step: Number | Tensor = 1,
    *,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) spaced by ``step``.

    int64 when ``start``, ``end`` and ``step`` are all integers, else the default dtype.

    >>> arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    check_dtype(dtype, "arange")
    if end is None:
        start, end = 0, start
    start = _range_num(start, "arange", "start", 1)
    end = _range_num(end, "arange", "end", 2)
    step = _range_num(step, "arange", "step", 3)
    dtype = out_dtype(dtype, out, "arange")
    if dtype is None:
        integral = _is_int(start) and _is_int(end) and _is_int(step)
        dtype = D.int64 if integral else D.get_default_dtype()
    if dtype is D.bool or dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype.scalar_name}'")
    if dtype is D.int64:
        # torch computes int64 ranges entirely in int64 (the arguments are truncated first)
        xs, xe, xst = (math.trunc(v) for v in (start, end, step))
        if xst == 0:
            raise (RuntimeError if step == 0 else ValueError)("step must be nonzero")
        _check_range(xs, xe, xst)
        sgn = 1 if xst > 0 else -1
        n = max(0, (xe - xs + xst - sgn) // xst)
        arr = np.arange(xs, xs + n * xst, xst, dtype=np.int64)
    else:
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if not (math.isfinite(start) and math.isfinite(end)):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
        _check_range(start, end, step)
        n = max(0, math.ceil((end - start) / step))
        if dtype.is_floating_point:
            # start + i*step rounded once, like torch's fused multiply-add in double (its
            # vectorised chunks may still differ in the last ulp; that depends on the CPU)
            acc = np.float32 if dtype is D.float16 else np.longdouble
            arr = (np.arange(n).astype(acc) * acc(step) + acc(start)).astype(dtype.np)
        else:  # narrower integers: int64 accumulation of the truncated arguments, wrapped
            arr = (np.arange(n, dtype=np.int64) * math.trunc(step) + math.trunc(start)).astype(
                dtype.np
            )
    return finish(place(arr, dtype, as_device(device)), requires_grad, out, "arange")


def _is_int(v):
    return v.__class__ is int or (v.__class__ is not float and isinstance(v, numbers.Integral))


def _check_range(start, end, step):
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def range(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
):
    """Deprecated (as in torch): like :func:`arange` but includes ``end``; default dtype."""
    warnings.warn(
        "sparsetorch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use sparsetorch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    check_dtype(dtype, "range")
    if end is None:
        start, end = 0, start
    start = _range_num(start, "range", "start", 1)
    end = _range_num(end, "range", "end", 2)
    step = _range_num(step, "range", "step", 3)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    _check_range(start, end, step)
    dtype = out_dtype(dtype, out, "range") or D.get_default_dtype()
    n = math.floor((end - start) / step) + 1
    arr = (np.arange(n, dtype=np.float64) * step + start).astype(dtype.np)
    return finish(place(arr, dtype, as_device(device)), requires_grad, out, "range")


def _lin_values(start, end, steps, dtype):
    """torch's linspace: the first half counts up from ``start``, the second down from ``end``."""
    if steps == 0:
        return np.empty(0, dtype.np)
    if steps == 1:
        return np.array([start], dtype.np)
    if dtype.is_complex:
        acc = dtype.np.type
    elif dtype.is_floating_point:
        acc = np.float32 if dtype is D.float16 else dtype.np.type
    else:
        acc = np.float64
        start, end = math.trunc(start), math.trunc(end)
    s, e = acc(start), acc(end)
    step = (e - s) / acc(steps - 1)
    i = np.arange(steps, dtype=np.int64)
    half = steps // 2
    # each value rounded once (torch's fused multiply-add); extended precision emulates it
    w = np.longdouble if dtype.is_floating_point and dtype is not D.float16 else acc
    ws, we, wstep = w(s), w(e), w(step)
    lo = ws + i[:half].astype(w) * wstep
    hi = we - (steps - 1 - i[half:]).astype(w) * wstep
    return np.concatenate([lo, hi]).astype(dtype.np)


def _steps(steps, fname):
    if isinstance(steps, Tensor):
        steps = steps.item()
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        raise TypeError(
            f"{fname}(): argument 'steps' (position 3) must be int, not {type(steps).__name__}"
        )
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _lin_num(x, fname, arg, pos):
    if isinstance(x, Tensor):
        x = x.item()
    if isinstance(x, np.generic):
        x = x.item()
    if not isinstance(x, numbers.Number):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be Number, not {type(x).__name__}"
        )
    return x


def linspace(
    start: Number | Tensor,
    end: Number | Tensor | None,
    steps: int,
    *,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end``, inclusive.

    >>> linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    check_dtype(dtype, "linspace")
    start = _lin_num(start, "linspace", "start", 1)
    end = _lin_num(end, "linspace", "end", 2)
    steps = _steps(steps, "linspace")
    dtype = out_dtype(dtype, out, "linspace")
    if dtype is None:
        cplx = isinstance(start, complex) or isinstance(end, complex)
        dtype = D.default_complex() if cplx else D.get_default_dtype()
    arr = _lin_values(start, end, steps, dtype)
    return finish(place(arr, dtype, as_device(device)), requires_grad, out, "linspace")


def logspace(
    start: Number | Tensor,
    end: Number | Tensor | None,
    steps: int,
    base: float = 10.0,
    *,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end``."""
    check_dtype(dtype, "logspace")
    start = _lin_num(start, "logspace", "start", 1)
    end = _lin_num(end, "logspace", "end", 2)
    steps = _steps(steps, "logspace")
    dtype = out_dtype(dtype, out, "logspace") or D.get_default_dtype()
    acc = D.complex128 if dtype.is_complex else D.float64
    exps = _lin_values(start, end, steps, acc)
    arr = np.power(np.asarray(base, acc.np), exps)
    return finish(
        place(arr.astype(dtype.np), dtype, as_device(device)), requires_grad, out, "logspace"
    )


def _int_arg(v, fname, arg, pos):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        if isinstance(v, Tensor) and not (v.dtype.is_floating_point or v.dtype.is_complex):
            return int(v.item())
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be int, not {type(v).__name__}"
        )
    return int(v)


def eye(
    n: int,
    m: int | None = None,
    *,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A 2-D tensor with ones on the diagonal and zeros elsewhere (``n`` rows, ``m`` columns)."""
    check_dtype(dtype, "eye")
    n = _int_arg(n, "eye", "n", 1)
    m = n if m is None else _int_arg(m, "eye", "m", 2)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dtype = out_dtype(dtype, out, "eye") or D.get_default_dtype()
    device = as_device(device)
    try:
        arr = get_backend(device).xp.eye(n, m, dtype=dtype.np)
    except ValueError as e:  # NumPy: "Maximum allowed dimension exceeded"
        raise RuntimeError(f"eye(): cannot allocate a {n} x {m} tensor ({e})") from None
    return finish(wrap(arr, dtype, device, strided), requires_grad, out, "eye")


def _tri_indices(fname, row, col, offset, dtype, device, lower):
    row = _int_arg(row, fname, "row", 1)
    col = _int_arg(col, fname, "col", 2)
    offset = _int_arg(offset, fname, "offset", 3)
    check_dtype(dtype, fname)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype.is_floating_point or dtype.is_complex or dtype is D.bool:
        raise NotImplementedError(f"\"{fname}\" not implemented for '{dtype.scalar_name}'")
    r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    arr = np.stack([r, c]).astype(dtype.np).reshape(2, -1)
    return place(arr, dtype, as_device(device))


def tril_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    """Indices (2 x N) of the lower triangle of a ``row`` x ``col`` matrix, row by row."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None):
    """Indices (2 x N) of the upper triangle of a ``row`` x ``col`` matrix, row by row."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, False)
