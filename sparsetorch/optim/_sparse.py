"""Row-sparse helpers shared by the optimizers.

A sparse gradient is reduced to ``(rows, vals)``: ``rows`` the sorted unique int64 indices of the
parameter's "rows" (the sparse dims flattened, row-major) and ``vals`` a ``[len(rows), row_size]``
array holding the summed (coalesced) gradient of each row. The parameter and its state are viewed
as ``[num_rows, row_size]`` arrays, so one code path serves hybrid COO (Embedding(sparse=True)),
general COO and 2-D CSR gradients.
"""

from .._backend import CPU, get_backend
from .._device import device as _device
from .._layout import sparse_coo, sparse_csr, strided

__all__ = ["CPU", "CPU_DEVICE", "as_rows", "backend", "dense_grad", "masked_values", "param_array",
           "row_grad"]

CPU_DEVICE = _device("cpu")


def backend(t):
    return get_backend(t.device)


def param_array(p):
    """The dense payload of ``p`` that the optimizer updates in place (a sparse parameter's
    stored values)."""
    if p.layout is not strided:
        return p._data.values
    return p._data


def masked_values(p, grad):
    """``(values of p, values of grad)`` for a sparse parameter whose gradient has its pattern."""
    pl, gl = p._data, grad._data
    if grad.layout is p.layout and gl.values.shape == pl.values.shape:
        xp = backend(p).xp
        if p.layout is sparse_coo:
            same = gl.indices is pl.indices or (gl.indices.shape == pl.indices.shape
                                                and bool(xp.array_equal(gl.indices, pl.indices)))
        else:
            same = (gl.col is pl.col or bool(xp.array_equal(gl.col, pl.col))) and (
                gl.crow is pl.crow or bool(xp.array_equal(gl.crow, pl.crow)))
        if same:
            return pl.values, gl.values
    raise RuntimeError(
        f"optimizers update a {p.layout} parameter through its stored values: its gradient must "
        f"have the parameter's sparsity pattern (got a {grad.layout} gradient with "
        f"{getattr(gl, 'nnz', 'dense')} stored entries for {pl.nnz}); coalesce the parameter, or "
        "use a masked gradient (as SparseLinear's)")


def dense_grad(grad, xp):
    """The dense payload of ``grad`` (densified when sparse)."""
    if grad.layout is strided:
        return grad._data
    return grad.to_dense()._data


def as_rows(arr, nrows):
    """``arr`` viewed as ``[nrows, row_size]`` (a view: the caller writes through it), or None
    when no view exists (non-contiguous payload)."""
    if not arr.flags.c_contiguous:
        return None
    return arr.reshape(nrows, -1) if arr.size else arr.reshape(nrows, 0)


def row_grad(grad, shape):
    """Reduce a sparse gradient of a parameter of ``shape`` to ``(rows, vals, num_rows)``.

    ``rows`` sorted unique int64, ``vals`` ``[len(rows), row_size]``, duplicates summed. Returns
    None when the gradient is dense or of a form without a row view (batched CSR).
    """
    lay = grad.layout
    if lay is sparse_coo:
        if not grad.is_coalesced():
            grad = grad.coalesce()
        pl = grad._data
        idx, vals = pl.indices, pl.values
        sd = idx.shape[0]
        if sd == 1:
            rows = idx[0]
        else:
            rows = idx[0]
            for k in range(1, sd):
                rows = rows * shape[k] + idx[k]
        nrows = 1
        for s in shape[:sd]:
            nrows *= s
        return rows, vals.reshape(vals.shape[0], -1), nrows
    if lay is sparse_csr:
        pl = grad._data
        if pl.crow.ndim != 1 or len(shape) != 2 or pl.values.ndim != 1:
            return None
        xp = backend(grad).xp
        counts = xp.diff(pl.crow)
        r = xp.repeat(xp.arange(shape[0], dtype=xp.int64), counts)
        rows = r * shape[1] + pl.col.astype(xp.int64)
        return rows, pl.values.reshape(-1, 1), shape[0] * shape[1]
    return None
