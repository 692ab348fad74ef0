"""Strided kernels for gather/scatter, index_* and masked ops (payload level, ``be.xp`` only).

Kernels take the Backend first and use ``be.xp`` only, so CPU and GPU share them.
"""

from .._dtype import is_float_np
from .._xpcompat import assign


def _coords(be, idx, dim):
    """Full index tuple addressing ``out[i0, .., idx[i], .., in]`` (an open mesh elsewhere)."""
    n = idx.ndim
    out = []
    for d in range(n):
        if d == dim:
            out.append(idx)
        else:
            shape = [1] * n
            shape[d] = idx.shape[d]
            out.append(be.xp.arange(idx.shape[d]).reshape(shape))
    return tuple(out)


_UFUNC = {"add": "add", "sum": "add", "mean": "add", "multiply": "multiply", "prod": "multiply",
          "amax": "maximum", "amin": "minimum"}


def _scatter_into(be, out, idx, src, dim, reduce):
    """Write (or reduce) ``src`` into ``out`` in place at ``idx`` along ``dim``."""
    if out.ndim == 0:
        out, idx, dim = out.reshape(1), idx.reshape(1), 0
        src = src.reshape(1) if hasattr(src, "shape") else src
    elif idx.ndim == 0:
        idx = idx.reshape(1)
    key = _coords(be, idx, dim)
    if hasattr(src, "shape"):
        src = src.reshape(idx.shape) if src.ndim == 0 else src[tuple(slice(0, s) for s in idx.shape)]
    if reduce is None:
        assign(be, out, key, src)  # the last of repeated indices wins, on every device
    else:
        getattr(be.xp, _UFUNC[reduce]).at(out, key, src)


def _scatter_kernel(be, x, idx, src, dim, reduce, src_shape):
    out = x.copy()
    _scatter_into(be, out, idx, src, dim, reduce)
    return out


def _scatter_value_kernel(be, x, idx, dim, value, reduce):
    out = x.copy()
    _scatter_into(be, out, idx, value, dim, reduce)
    return out


def _gather_kernel(be, x, idx, dim, in_shape):
    if x.ndim == 0 or idx.ndim == 0:
        return be.xp.take_along_axis(x.reshape(-1), idx.reshape(-1), 0).reshape(idx.shape)
    region = tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(idx.shape))
    return be.xp.take_along_axis(x[region], idx, axis=dim)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_reduce_kernel(be, x, idx, src, dim, reduce, include_self):
    xp = be.xp
    out = x.copy()
    if not include_self:  # positions that receive values start from the reduction's identity
        if reduce in _IDENTITY:
            ident = _IDENTITY[reduce]
        elif is_float_np(x.dtype):
            ident = -xp.inf if reduce == "amax" else xp.inf
        elif x.dtype.kind == "b":
            ident = reduce == "amin"
        else:
            info = xp.iinfo(x.dtype)
            ident = info.min if reduce == "amax" else info.max
        _scatter_into(be, out, idx, ident, dim, None)
    _scatter_into(be, out, idx, src, dim, reduce)
    if reduce == "mean":
        cnt = xp.full(x.shape, 1 if include_self else 0, dtype=xp.int64)
        _scatter_into(be, cnt, idx, 1, dim, "add")
        cnt = xp.maximum(cnt, 1)
        if x.dtype.kind == "c" or is_float_np(x.dtype):
            # (bfloat16 divides in float32, then rounds once)
            out = (out / cnt.astype(x.dtype if x.dtype.kind in "fc" else xp.float32)).astype(x.dtype)
        else:  # torch floors the integer mean
            out = xp.floor_divide(out, cnt).astype(x.dtype)
    return out


def _along(dim, idx):
    return (slice(None),) * dim + (idx.reshape(-1),)


def _index_select_kernel(be, x, idx, dim, in_shape):
    if x.ndim == 0:
        return x.reshape(1)[idx.reshape(-1)].reshape(())
    return be.xp.take(x, idx.reshape(-1), axis=dim)


def _index_add_kernel(be, x, idx, src, dim, alpha):
    out = x.copy()
    s = src if alpha == 1 else src * alpha
    if out.ndim == 0:
        be.xp.add.at(out.reshape(1), idx.reshape(-1), s.reshape(-1))
    else:
        be.xp.add.at(out, _along(dim, idx), s)
    return out


def _index_copy_kernel(be, x, idx, src, dim):
    out = x.copy()
    if out.ndim == 0:
        out.reshape(1)[idx.reshape(-1)] = src.reshape(-1)
    else:
        assign(be, out, _along(dim, idx), src)
    return out


def _index_fill_kernel(be, x, idx, dim, value):
    out = x.copy()
    if out.ndim == 0:
        out.reshape(1)[idx.reshape(-1)] = value
    else:
        out[_along(dim, idx)] = value
    return out


def _masked_select_kernel(be, x, m, bshape):
    xb, mb = be.xp.broadcast_arrays(x, m)
    return xb[mb]


def _masked_scatter_kernel(be, x, m, src, source_shape):
    xb, mb = be.xp.broadcast_arrays(x, m)
    out = xb.copy()
    n = int(be.xp.count_nonzero(mb))
    flat = src.reshape(-1)
    if flat.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mb] = flat[:n]
    return out
