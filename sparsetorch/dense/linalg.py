"""Strided kernels for einsum and diagonals.

Kernels take the Backend first and use ``be.xp`` only, so CPU and GPU share them.
"""

from .._dtype import bfloat16

_BF16_NP = bfloat16.np


def _einsum_kernel(be, *args):
    # payloads..., then the params (equation, ins, out_sub); ins/out_sub are for the formulas
    arrays, eq = args[:-3], args[-3]
    low = [a.dtype for a in arrays if a.dtype == _BF16_NP]
    if low:  # NumPy's einsum has no bfloat16: float32 products and sums, one rounding (as torch)
        f32 = be.xp.float32
        arrays = [a.astype(f32) if a.dtype == _BF16_NP else a for a in arrays]
        return be.xp.asarray(be.xp.einsum(eq, *arrays, optimize=len(arrays) > 2)).astype(low[0])
    return be.xp.asarray(be.xp.einsum(eq, *arrays, optimize=len(arrays) > 2))


def _diag_view(be, x, offset, d1, d2):
    """A writable view of the diagonal of ``x`` over dims (d1, d2), appended as the last dim."""
    sl = [slice(None)] * x.ndim
    if offset >= 0:
        sl[d2] = slice(offset, None)
    else:
        sl[d1] = slice(-offset, None)
    xs = x[tuple(sl)]
    n = max(min(xs.shape[d1], xs.shape[d2]), 0)
    rest = [i for i in range(x.ndim) if i != d1 and i != d2]
    shape = [xs.shape[i] for i in rest] + [n]
    strides = [xs.strides[i] for i in rest] + [xs.strides[d1] + xs.strides[d2]]
    return be.xp.lib.stride_tricks.as_strided(xs, shape, strides)


def _diag_embed_kernel(be, g, shape, offset, d1, d2):
    out = be.xp.zeros(shape, g.dtype)
    _diag_view(be, out, offset, d1, d2)[...] = g
    return out
