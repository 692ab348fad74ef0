"""Set and counting ops: unique, unique_consecutive, bincount, searchsorted, bucketize, isin,
histc.

Their results are integer or bool valued (or counts), so none is differentiable (torch records
no gradient for them either). Each op is declared with ``defop`` for the strided layout only;
a sparse input gets the dispatcher's NotImplementedError (nothing is densified silently). The
ops with several results build them from one stable sort of the payload, with ``be.xp`` only.
"""

import builtins

import numpy as np  # host-side: histc computes its bin edges once on the host

from .. import _dtype as D
from .._dispatch import call, defop, get_backend, wrap
from .._layout import strided
from .._tensor import Tensor
from .._variants import method
from ._util import check_tensor, is_scalar, norm_dim, with_out

__all__ = ["bincount", "bucketize", "histc", "isin", "searchsorted", "unique", "unique_consecutive"]

S = (strided,)


def _dense_only(op, *tensors):
    """The dispatcher's clear error for a layout this op has no kernel for."""
    key = tuple(t.layout for t in tensors)
    if key not in op.kernels:
        op.kernel_for(key)


def _be(t):
    return get_backend(t.device)


def _i64(data, like):
    return wrap(data, D.int64, like.device, strided)


# ---- unique, unique_consecutive ----

def _groups(be, rows):
    """``rows`` (n, k) sorted or consecutive -> (first-of-group mask, group id per row).
    NaN != NaN, so each NaN is its own group, as torch's unique keeps every NaN."""
    xp = be.xp
    n = rows.shape[0]
    mask = xp.ones(n, dtype=bool)
    if n > 1:
        neq = rows[1:] != rows[:-1]
        mask[1:] = neq.any(axis=1) if neq.ndim == 2 else neq
    return mask, xp.cumsum(mask) - 1


def _unique_impl(input, return_inverse, return_counts, dim, consecutive, fname, op):
    check_tensor(input, fname)
    _dense_only(op, input)
    be = _be(input)
    xp = be.xp
    x = input._data
    if dim is None:
        rows = x.reshape(-1)
        shape_rest = None
    else:
        d = norm_dim(dim, input.ndim, fname)
        moved = xp.moveaxis(x, d, 0) if x.ndim else x.reshape(1)
        shape_rest = moved.shape[1:]
        rows = moved.reshape(moved.shape[0], -1)
    n = rows.shape[0]
    if consecutive:
        order = None
        srt = rows
    elif rows.ndim == 1:
        order = xp.argsort(D.sort_key(xp, rows), kind="stable")
        srt = rows[order]
    else:
        # lexicographic row order: lexsort's last key is the primary one
        order = (xp.lexsort(D.sort_key(xp, rows).T[::-1]) if rows.shape[1] else xp.arange(n)).astype(xp.int64)
        srt = rows[order]
    mask, gid = _groups(be, srt)
    vals = srt[mask]
    if shape_rest is not None:
        vals = xp.moveaxis(vals.reshape((vals.shape[0],) + shape_rest), 0, d)
    out = [wrap(xp.ascontiguousarray(vals), input.dtype, input.device, strided)]
    if return_inverse:
        inv = xp.empty(n, dtype=xp.int64)
        if order is None:
            inv[...] = gid
        else:
            inv[order] = gid
        out.append(_i64(inv.reshape(x.shape) if dim is None else inv, input))
    if return_counts:
        starts = xp.flatnonzero(mask)
        counts = xp.diff(xp.concatenate([starts, xp.asarray([n])])).astype(xp.int64)
        out.append(_i64(counts, input))
    return out[0] if len(out) == 1 else tuple(out)


# declared for the dispatcher's layout check and error; the results are built in _unique_impl
_unique_op = defop("unique", {S: _unique_impl})
_unique_consecutive_op = defop("unique_consecutive", {S: _unique_impl})


@method
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Returns the unique elements of the input tensor (sorted; ``sorted=False`` also sorts, as
    torch's CPU kernel does). With ``dim``, the unique slices along ``dim``. Optionally the
    index of each element in the result (``return_inverse``) and each unique's count."""
    return _unique_impl(input, return_inverse, return_counts, dim, False, "unique", _unique_op)


@method
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Eliminates all but the first element from every consecutive group of equivalent elements."""
    return _unique_impl(input, return_inverse, return_counts, dim, True, "unique_consecutive",
                        _unique_consecutive_op)


# ---- bincount, histc ----

def _bincount_kernel(be, x, minlength):
    return be.xp.bincount(x, minlength=minlength).astype(be.xp.int64, copy=False)


def _bincount_w_kernel(be, x, w, minlength):
    return be.xp.bincount(x, weights=w, minlength=minlength)


_bincount_op = defop("bincount", {S: _bincount_kernel}, params=("minlength",))
_bincount_w_op = defop("bincount", {S + S: _bincount_w_kernel}, inputs=("input", "weights"),
                       params=("minlength",))


@method
def bincount(input, weights=None, minlength=0):
    """Count the frequency of each value in an array of non-negative ints (``weights``: sum the
    weight of each occurrence instead; the result is float64 unless ``weights`` is float32)."""
    check_tensor(input, "bincount")
    dt = input.dtype
    if dt.is_floating_point or dt.is_complex or dt is D.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{dt.scalar_name}': "
                                  f"bincount counts integers; convert input with .long() first")
    if not isinstance(minlength, int) or minlength < 0:
        raise RuntimeError(f"minlength should be >= 0 (got {minlength})")
    if input.ndim != 1 or (input.layout is strided and input.numel()
                           and bool((input._data < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return call(_bincount_op, (input,), (minlength,), D.int64)
    check_tensor(weights, "bincount", "weights")
    if weights.ndim != 1 or weights.shape[0] != input.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = D.float32 if weights.dtype is D.float32 else D.float64
    return call(_bincount_w_op, (input, weights), (minlength,), out, None)


def _histc_kernel(be, x, bins, lo, hi):
    xp = be.xp
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if not (xp.isfinite(xp.asarray(lo)) and xp.isfinite(xp.asarray(hi))):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo == hi:  # torch widens a degenerate range by one on each side
        lo, hi = lo - 1, hi + 1
    x = x[~xp.isnan(x)] if x.dtype.kind == "f" else x
    # NumPy's binning written out (so NumPy and CuPy count an element on a bin edge alike): the
    # scaled position, then a one-step correction against the edges, computed once on the host
    bt = np.result_type(lo, hi, np.empty(0, x.dtype if x.dtype.kind == "f" else np.float64))
    edges = np.linspace(lo, hi, bins + 1, endpoint=True, dtype=bt)
    x = x.astype(bt, copy=False)
    x = x[(x >= edges[0]) & (x <= edges[-1])]
    e = xp.asarray(edges)
    idx = ((x - e[0]) * (bins / (edges[-1] - edges[0]))).astype(xp.int64)
    idx[idx == bins] = bins - 1
    idx[x < e[idx]] -= 1
    idx[(x >= e[idx + 1]) & (idx != bins - 1)] += 1
    return xp.bincount(idx, minlength=bins)[:bins]


_histc_op = defop("histc", {S: _histc_kernel}, params=("bins", "min", "max"))


@method
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Computes the histogram of a tensor: ``bins`` equal-width bins between ``min`` and ``max``
    (both 0: the data's minimum and maximum). Elements outside the range are ignored."""
    check_tensor(input, "histc")
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{dt.scalar_name}': histc "
                                  f"takes floating-point input; convert it with .float() first")
    if not isinstance(bins, int) or bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    r = call(_histc_op, (input,), (bins, float(min), float(max)), dt)
    return with_out(r, out, "histc")


# ---- searchsorted, bucketize ----

def _searchsorted_kernel(be, seq, vals, right, sorter):
    xp = be.xp
    side = "right" if right else "left"
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter, axis=-1)
    seq, vals = D.sort_key(xp, seq), D.sort_key(xp, vals)
    if seq.ndim == 1:
        return xp.searchsorted(seq, vals, side=side)
    lead = seq.shape[:-1]
    s2 = seq.reshape(-1, seq.shape[-1])
    v2 = vals.reshape(s2.shape[0], -1)
    out = xp.empty(v2.shape, dtype=xp.int64)
    for i in range(s2.shape[0]):  # one 1-D search per leading index (NumPy has no batched one)
        out[i] = xp.searchsorted(s2[i], v2[i], side=side)
    return out.reshape(lead + vals.shape[-1:])


_searchsorted_op = defop("searchsorted", {S + S: _searchsorted_kernel},
                         inputs=("sorted_sequence", "input"), params=("right", "sorter"))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
                 out=None):
    """Find the indices from the innermost dimension of ``sorted_sequence`` such that, if the
    values in ``input`` were inserted before the indices, the order would be preserved."""
    check_tensor(sorted_sequence, "searchsorted", "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        if not is_scalar(input):
            raise TypeError(f"searchsorted(): argument 'input' must be a Tensor or a Python number, "
                            f"not {type(input).__name__}")
        input = _scalar_tensor(input, sorted_sequence)
    if sorted_sequence.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor, but "
                           "we got boundaries tensor with 0 dimensions")
    if sorted_sequence.ndim > 1 and (
            input.ndim != sorted_sequence.ndim or input.shape[:-1] != sorted_sequence.shape[:-1]):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor, but we got boundaries tensor "
            f"{list(sorted_sequence.shape)} and input value tensor {list(input.shape)}")
    srt = None
    if sorter is not None:
        check_tensor(sorter, "searchsorted", "sorter")
        if sorter.shape != sorted_sequence.shape or sorter.dtype is not D.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a long tensor with the same "
                               "shape as sorted_sequence")
        _dense_only(_searchsorted_op, sorter, sorted_sequence)
        srt = sorter._data
    dt = D.promote_types(sorted_sequence.dtype, input.dtype)
    r = call(_searchsorted_op, (sorted_sequence, input), (bool(right), srt),
             D.int32 if out_int32 else D.int64, dt)
    return with_out(r, out, "searchsorted")


def _scalar_tensor(v, like):
    dt = D.bool if isinstance(v, builtins.bool) else D.int64 if isinstance(v, int) else like.dtype
    if isinstance(v, float) and not like.dtype.is_floating_point:
        dt = D.get_default_dtype()
    return wrap(_be(like).xp.asarray(v, dtype=dt.np), dt, like.device, strided)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Returns the indices of the buckets to which each value in ``input`` belongs, where the
    boundaries of the buckets are set by the 1-D ``boundaries``."""
    check_tensor(boundaries, "bucketize", "boundaries")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ---- isin ----

def _isin_kernel(be, e, t, assume_unique, invert):
    return be.xp.isin(e, t, assume_unique=assume_unique, invert=invert)


_isin_op = defop("isin", {S + S: _isin_kernel}, inputs=("elements", "test_elements"),
                 params=("assume_unique", "invert"))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Tests if each element of ``elements`` is in ``test_elements``; a bool tensor of the same
    shape as ``elements``. Either argument (not both) may be a Python number."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(elements, Tensor):
        elements = _scalar_tensor(_num(elements, "elements"), like)
    if not isinstance(test_elements, Tensor):
        test_elements = _scalar_tensor(_num(test_elements, "test_elements"), like)
    dt = D.promote_types(elements.dtype, test_elements.dtype)
    return call(_isin_op, (elements, test_elements), (bool(assume_unique), bool(invert)),
                D.bool, dt)


def _num(v, arg):
    if not is_scalar(v):
        raise TypeError(f"isin(): argument '{arg}' must be a Tensor or a Python number, "
                        f"not {type(v).__name__}")
    return v
