"""The two table ops under scaled_dot_product_attention's sparse-mask path, each the other's
derivative, so every order of gradient stays O(nnz):

- ``sddmm(a, b, rows, cols)``: ``s[e] = a[rows[e]] . b[cols[e]]``, the sampled dense-dense
  product over a pattern (computed in chunks of about 1M elements: no (nnz, E) temporaries);
- ``spmm(vals, b, rows, cols, n_out)``: ``out[i] = sum_{e: rows[e] = i} vals[e] * b[cols[e]]``,
  a sparse (n_out x len(b)) matrix with that pattern times dense ``b`` (scipy / cupyx CSR).

d sddmm / d a = spmm(grad, b, rows, cols), d / d b = spmm(grad, a, cols, rows);
d spmm / d vals = sddmm(grad, b, rows, cols), d / d b = spmm(vals, grad, cols, rows).
``rows`` / ``cols`` are int64 tensors (not differentiable).
"""

from ..._dispatch import call, defop
from ..._dtype import bfloat16
from ..._layout import strided

__all__ = ["sddmm", "spmm"]

_CHUNK = 1 << 20  # elements of a gathered (chunk, E) block


def _sddmm_kernel(be, a, b, rows, cols):
    xp = be.xp
    if a.dtype == bfloat16.np:  # einsum has no bfloat16: float32 sums, one rounding (as torch)
        return _sddmm_kernel(be, a.astype(xp.float32), b.astype(xp.float32), rows, cols).astype(a.dtype)
    n = rows.shape[0]
    out = xp.empty((n,), dtype=a.dtype)
    step = max(1, _CHUNK // max(a.shape[1], 1))
    for s in range(0, n, step):
        r = rows[s:s + step]
        c = cols[s:s + step]
        out[s:s + step] = xp.einsum("ij,ij->i", a[r], b[c])
    return out


def _spmm_kernel(be, vals, b, rows, cols, n_out):
    if b.dtype == bfloat16.np:  # SciPy has no bfloat16: float32 sums, one rounding
        f32 = be.xp.float32
        return _spmm_kernel(be, vals.astype(f32), b.astype(f32), rows, cols, n_out).astype(b.dtype)
    m = be.sp.coo_matrix((vals, (rows, cols)), shape=(n_out, b.shape[0])).tocsr()
    return be.xp.ascontiguousarray(be.xp.asarray(m @ b), dtype=b.dtype)


def _sddmm_grad_a(grad, a, b, rows, cols):
    return spmm(grad, b, rows, cols, a.shape[0])


def _sddmm_grad_b(grad, a, b, rows, cols):
    return spmm(grad, a, cols, rows, b.shape[0])


def _spmm_grad_vals(grad, b, rows, cols):
    return sddmm(grad, b, rows, cols)


def _spmm_grad_b(grad, vals, b, rows, cols):
    return spmm(vals, grad, cols, rows, b.shape[0])


_S4 = (strided,) * 4
_sddmm_op = defop("sparse_attention_sddmm", {_S4: _sddmm_kernel},
                  inputs=("a", "b", "rows", "cols"),
                  grads={"a": _sddmm_grad_a, "b": _sddmm_grad_b})
_spmm_op = defop("sparse_attention_spmm", {_S4: _spmm_kernel},
                 inputs=("vals", "b", "rows", "cols"), params=("n_out",),
                 grads={"vals": _spmm_grad_vals, "b": _spmm_grad_b})


def sddmm(a, b, rows, cols):
    """``(a[rows] * b[cols]).sum(-1)`` without the (nnz, E) temporaries."""
    return call(_sddmm_op, (a, b, rows, cols), (), a.dtype)


def spmm(vals, b, rows, cols, n_out):
    """``zeros(n_out, E).index_add(0, rows, vals[:, None] * b[cols])`` as CSR @ dense."""
    return call(_spmm_op, (vals, b, rows, cols), (n_out,), b.dtype)
