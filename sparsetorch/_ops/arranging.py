"""Splitting and arranging at torch's top level: tensor_split (h/v/dsplit), row_stack, rot90,
block_diag, cartesian_prod, combinations; diff, trapezoid (trapz) and unravel_index.

They are compositions of differentiable sparsetorch ops (narrow, cat, flip, ...), so their
gradients come from their parts, higher derivatives included.
"""

import itertools
import math
import numbers

from .. import _dtype as D
from .._tensor import Tensor
from .._variants import method
from . import pointwise as _pw
from . import _join
from ._util import check_tensor, norm_dim

__all__ = [
    "block_diag",
    "cartesian_prod",
    "combinations",
    "diff",
    "dsplit",
    "hsplit",
    "rot90",
    "row_stack",
    "tensor_split",
    "trapezoid",
    "trapz",
    "unravel_index",
    "vsplit",
]


# ---- splitting and arranging ----

def _split_at(input, indices, d):
    n = input.shape[d]
    bounds = [min(max(i if i >= 0 else i + n, 0), n) for i in indices]
    starts = [0] + bounds
    ends = bounds + [n]
    return tuple(input.narrow(d, s, max(e - s, 0)) if e > s else input.narrow(d, min(s, n), 0)
                 for s, e in zip(starts, ends))


@method
def tensor_split(input, indices_or_sections, dim=0):
    """Splits a tensor into multiple sub-tensors (views), all along ``dim``, according to the
    indices or number of sections specified by ``indices_or_sections``."""
    check_tensor(input, "tensor_split")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = norm_dim(dim, input.ndim, "tensor_split")
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.is_floating_point or ios.dtype.is_complex or ios.dtype is D.bool:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {ios.dtype}")
        if ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, numbers.Integral) and not isinstance(ios, bool):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        n = input.shape[d]
        q, r = divmod(n, ios)
        idx, at = [], 0
        for i in range(ios - 1):
            at += q + (1 if i < r else 0)
            idx.append(at)
        return _split_at(input, idx, d)
    if not isinstance(ios, (list, tuple)):
        raise TypeError("tensor_split(): argument 'indices_or_sections' must be an int, a "
                        f"sequence of ints or a Tensor, not {type(ios).__name__}")
    return _split_at(input, [int(i) for i in ios], d)


def _nsplit(input, ios, d, fname, min_dims):
    check_tensor(input, fname)
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{fname} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, numbers.Integral) and not isinstance(ios, bool):
        n = input.shape[d]
        if ios == 0 or n % ios:
            raise RuntimeError(f"torch.{fname} attempted to split along dimension {d}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{ios}!")
    return tensor_split(input, ios, d)


@method
def hsplit(input, indices_or_sections):
    """Splits ``input`` horizontally (dim 1, or dim 0 for a 1-D tensor) with tensor_split."""
    check_tensor(input, "hsplit")
    return _nsplit(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


@method
def vsplit(input, indices_or_sections):
    """Splits ``input`` (at least 2-D) vertically, along dim 0, with tensor_split."""
    return _nsplit(input, indices_or_sections, 0, "vsplit", 2)


@method
def dsplit(input, indices_or_sections):
    """Splits ``input`` (at least 3-D) depthwise, along dim 2, with tensor_split."""
    return _nsplit(input, indices_or_sections, 2, "dsplit", 3)


def row_stack(tensors, *, out=None):
    """Alias of :func:`vstack`."""
    return _join.vstack(tensors, out=out)


@method
def rot90(input, k=1, dims=(0, 1)):
    """Rotate ``input`` by 90 degrees ``k`` times in the plane given by ``dims`` (from the first
    towards the second)."""
    check_tensor(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (norm_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k = k % 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def block_diag(*tensors):
    """Create a block diagonal matrix from the provided tensors (0-d, 1-d or 2-d each)."""
    from .creation import zeros

    mats = []
    for i, t in enumerate(tensors):
        check_tensor(t, "block_diag", f"tensors[{i}]")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
        mats.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    if not mats:
        return zeros(1, 0)
    dt = D.result_type(*mats) if len(mats) > 1 else mats[0].dtype
    cols = sum(m.shape[1] for m in mats)
    dev = mats[0].device
    rows, at = [], 0
    for m in mats:
        r, c = m.shape
        parts = [zeros(r, at, dtype=dt, device=dev), m.to(dt),
                 zeros(r, cols - at - c, dtype=dt, device=dev)]
        rows.append(_join.cat(parts, 1))
        at += c
    return _join.cat(rows, 0)


def cartesian_prod(*tensors):
    """Cartesian product of the given 1-D tensors (rows of the result are the tuples)."""
    for i, t in enumerate(tensors):
        check_tensor(t, "cartesian_prod", f"tensors[{i}]")
        if t.ndim != 1:
            raise RuntimeError("Expect a 1D vector, but got shape " + str(list(t.shape)))
    if len(tensors) == 1:
        return tensors[0]
    grids = _join.meshgrid(*tensors, indexing="ij")
    return _join.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Compute combinations of length ``r`` of the elements of the 1-D ``input`` (as Python's
    itertools.combinations / combinations_with_replacement, in the same order)."""
    from .creation import empty, tensor

    check_tensor(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(gen(range(n), r))
    if r == 0 or not combos:
        return empty(0, dtype=input.dtype, device=input.device) if r == 0 else \
            empty(0, r, dtype=input.dtype, device=input.device)
    idx = tensor(combos, dtype=D.int64, device=input.device)  # (m, r) host-built index
    return input.index_select(0, idx.reshape(-1)).reshape(len(combos), r)


# ---- diff, trapezoid ----

@method
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Computes the n-th forward difference along ``dim`` (``prepend``/``append`` are joined to
    ``input`` along ``dim`` first). Bool input gives the logical xor of neighbours."""
    check_tensor(input, "diff")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = norm_dim(dim, input.ndim, "diff")
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        check_tensor(extra, "diff", name)
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None:
        parts.append(prepend)
    parts.append(input)
    if append is not None:
        parts.append(append)
    x = _join.cat(parts, d) if len(parts) > 1 else input
    is_bool = x.dtype is D.bool
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = _pw.logical_xor(a, b) if is_bool else a - b
    return x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Computes the trapezoidal rule along ``dim``: with sample points ``x`` or a constant
    spacing ``dx`` (default 1). Integer ``y`` integrates in the default float dtype."""
    check_tensor(y, "trapezoid", "y")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = norm_dim(dim, y.ndim, "trapezoid")
    if not (y.dtype.is_floating_point or y.dtype.is_complex):
        y = y.to(D.get_default_dtype())
    n = y.shape[d]
    if n == 0:
        return y.sum(d) * 0
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))
    if x is None:
        return mid.sum(d) * ((1.0 if dx is None else dx) / 2)
    if dx is not None:
        raise TypeError("trapezoid(): pass either 'x' or 'dx', not both")
    check_tensor(x, "trapezoid", "x")
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point "
                               f"(got {x.shape[0]} x values and {n} y values)")
        dxs = diff(x).reshape([n - 1 if i == d else 1 for i in range(y.ndim)])
    else:
        dxs = diff(x, dim=dim)
    return (mid * dxs).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- unravel_index ----

def unravel_index(indices, shape):
    """Converts a tensor of flat indices into a tuple of coordinate tensors that index into an
    arbitrary tensor of the specified ``shape``."""
    check_tensor(indices, "unravel_index", "indices")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    total = math.prod(shape)
    idx = indices.long()
    idx = _pw.remainder(idx, total) if total else idx  # torch wraps out-of-range indices
    coords = []
    for s in reversed(shape):
        coords.append(_pw.remainder(idx, s) if s else idx)
        idx = _pw.floor_divide(idx, s) if s else idx
    return tuple(reversed(coords))
