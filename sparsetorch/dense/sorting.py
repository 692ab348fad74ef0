"""Strided kernels for sorting-based reductions: take/put along a dim, whole-tensor median.

Kernels take the Backend first and use ``be.xp`` only, so CPU and GPU share them.
"""

from .._dtype import is_float_np, sort_key


def _flat_index(xp, index, dim, shape):
    """Row-major flat positions in ``shape`` of ``index`` taken along ``dim``."""
    nd = len(shape)
    strides = [1] * nd
    for i in range(nd - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    flat = index * strides[dim]
    for d in range(nd):
        if d != dim:
            n = index.shape[d]
            flat = flat + xp.arange(n).reshape([n if i == d else 1 for i in range(nd)]) * strides[d]
    return flat


def _take_kernel(be, x, index, dim, squeeze, shape, accumulate):
    if x.ndim == 0:
        return x.copy()
    r = be.xp.take_along_axis(x, index, axis=dim)
    return r.squeeze(dim) if squeeze else r


def _put_kernel(be, g, index, dim, squeeze, shape, accumulate):
    xp = be.xp
    if len(shape) == 0:
        return g.copy()
    if squeeze:
        g = xp.expand_dims(g, dim)
    size = 1
    for s in shape:
        size *= s
    flat = _flat_index(xp, index, dim, shape).reshape(-1)
    gv = g.reshape(-1)
    if accumulate:  # repeated indices (cummax): add them up
        if gv.dtype.kind == "c":
            out = (xp.bincount(flat, weights=gv.real, minlength=size)
                   + 1j * xp.bincount(flat, weights=gv.imag, minlength=size))
        else:
            out = xp.bincount(flat, weights=gv, minlength=size)
        out = out.astype(g.dtype)
    else:
        out = xp.zeros(size, g.dtype)
        out[flat] = gv
    return out.reshape(shape)


def _median_all_kernel(be, x):
    xp = be.xp
    v = xp.sort(sort_key(xp, x.reshape(-1))).astype(x.dtype, copy=False)
    n = v.shape[0]
    if n == 0:  # torch: NaN (integer dtypes: the smallest value)
        inexact = x.dtype.kind == "c" or is_float_np(x.dtype)
        return xp.asarray(float("nan") if inexact else xp.iinfo(x.dtype).min, x.dtype)
    if (x.dtype.kind == "c" or is_float_np(x.dtype)) and bool(xp.isnan(v[-1])):
        return xp.asarray(v[-1])
    return xp.asarray(v[(n - 1) // 2])
