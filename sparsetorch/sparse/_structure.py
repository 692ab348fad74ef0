"""Structure kernels on sparse payloads: transposes, COO -> CSR by counting sort, and the index
maps behind slicing, selection and joining.

The kernels touch index arrays only. A kernel that keeps a subset (or a reordering) of the
stored entries returns ``src``, the positions of the stored values the result keeps, so that the
op layer (``_ops/sparse_shape.py``) gathers the values with a differentiable op and the gradient
keeps the input's pattern. The two exceptions move values themselves because they are on a
measured path: :func:`csr_transpose` and :func:`coo_to_csr` (``t().to_sparse_csr()``, the
benchmark). Both are counting sorts, O(nnz + size): on the CPU SciPy's compiled
``csr_tocsc`` / ``coo_tocsr`` (called directly, no SciPy object per call); elsewhere a stable
argsort by the key.
"""

from .._memory import check_dense_alloc
from ._convert import coo_to_csr as _coo_to_csr_by_sort
from ._convert import csr_row_indices
from ._payload import CSR

__all__ = [
    "coo_row_filter",
    "coo_to_csr",
    "csr_filter_cols",
    "csr_gather_rows",
    "csr_map_cols",
    "csr_transpose",
    "index_map",
    "strictly_increasing",
]

# value dtypes SciPy's sparsetools accept (no float16): others travel as positions
_SPT_CHARS = frozenset("?bBhHiIlLqQfdgFDG")


def _tools(be):
    """SciPy's compiled sparsetools on the CPU backend; None on backends without them."""
    return getattr(be.sp, "_sparsetools", None)


def strictly_increasing(be, a):
    return a.shape[0] < 2 or bool((a[1:] > a[:-1]).all())


# ---- counting sorts: CSR transpose, COO -> CSR ----

def _compress(be, nrows, ncols, keys, other, vals, idt):
    """Counting sort of entries by ``keys`` (stable): ``(ptr, other sorted, vals sorted)``.

    ``keys`` / ``other`` are the row / column of each entry (for a transpose: column / row).
    """
    xp = be.xp
    nnz = keys.shape[0]
    tools = _tools(be)
    if tools is not None:
        ptr = xp.empty(nrows + 1, dtype=idt)
        out_other = xp.empty(nnz, dtype=idt)
        keys = keys.astype(idt, copy=False)
        other = other.astype(idt, copy=False)
        if vals.ndim == 1 and vals.dtype.char in _SPT_CHARS:
            out_vals = xp.empty(nnz, dtype=vals.dtype)
            tools.coo_tocsr(nrows, ncols, nnz, keys, other, vals, ptr, out_other, out_vals)
            return ptr, out_other, out_vals
        pos = xp.empty(nnz, dtype=idt)  # hybrid or float16 values: sort positions, then gather
        src = xp.arange(nnz, dtype=idt)
        tools.coo_tocsr(nrows, ncols, nnz, keys, other, src, ptr, out_other, pos)
        return ptr, out_other, vals[pos]
    order = xp.argsort(keys, kind="stable")
    ptr = xp.zeros(nrows + 1, dtype=idt)
    if nnz:
        xp.cumsum(xp.bincount(keys, minlength=nrows), out=ptr[1:])
    return ptr, other[order].astype(idt, copy=False), vals[order]


def _csr_t2(be, crow, col, vals, m, n):
    """The transpose of one 2-D CSR: ``(crow, col, vals)`` of an n x m CSR (the input's CSC)."""
    xp = be.xp
    tools = _tools(be)
    nnz = col.shape[0]
    idt = crow.dtype
    if tools is not None and vals.dtype.char in _SPT_CHARS and col.dtype == idt:
        ptr = xp.empty(n + 1, dtype=idt)
        rows = xp.empty(nnz, dtype=idt)
        out = xp.empty(nnz, dtype=vals.dtype)
        tools.csr_tocsc(m, n, crow, col, vals, ptr, rows, out)
        return ptr, rows, out
    rows = csr_row_indices(be, crow)
    return _compress(be, n, m, col, rows, vals, idt)


def csr_transpose(be, p):
    """CSR of the transpose of a CSR payload (the last two dims swapped, per batch).

    torch returns a CSC tensor here; sparsetorch has no CSC layout, and the CSR of the transpose
    is the same arrays a CSC would hold. O(nnz + ncols): a counting sort by column.
    """
    xp = be.xp
    m, n = p.shape[-2], p.shape[-1]
    check_dense_alloc(tuple(p.shape[:-2]) + (n + 1,), xp.dtype(xp.int64),
                      "the transpose of a CSR tensor: its row pointers (crow_indices)")
    if p.crow.ndim == 1:
        crow, col, vals = _csr_t2(be, p.crow, p.col, p.values, m, n)
        return CSR(crow, col, vals, (n, m))
    parts = [_csr_t2(be, p.crow[b], p.col[b], p.values[b], m, n) for b in range(p.crow.shape[0])]
    if not parts:
        return CSR(xp.zeros((0, n + 1), p.crow.dtype), p.col, p.values, p.shape[:-2] + (n, m))
    crow, col, vals = (xp.stack(a) for a in zip(*parts))
    return CSR(crow, col, vals, p.shape[:-2] + (n, m))


def _canonical(be, m, crow, col):
    """Columns sorted and unique within every row (then a row-sorted COO is coalesced)."""
    tools = _tools(be)
    if tools is not None:
        return bool(tools.csr_has_canonical_format(m, crow, col))
    if col.shape[0] < 2:
        return True
    rows = csr_row_indices(be, crow)
    return not bool(((rows[1:] == rows[:-1]) & (col[1:] <= col[:-1])).any())


def coo_to_csr(be, p, index_dtype=None):
    """COO -> CSR. A 2-D uncoalesced COO is first counting-sorted by row (O(nnz + rows), stable);
    when that leaves every row's columns sorted and unique - as for the transpose of a coalesced
    tensor (``x.t().to_sparse_csr()``) or a cat along columns - it is done; otherwise (and for
    coalesced, batched or hybrid inputs) the general path coalesces."""
    if p.coalesced or p.indices.shape[0] != 2 or p.values.ndim != 1 or p.nnz < 2:
        return _coo_to_csr_by_sort(be, p, index_dtype)
    xp = be.xp
    m, n = p.shape
    idt = index_dtype or xp.int64
    crow, col, vals = _compress(be, m, n, p.indices[0], p.indices[1], p.values, xp.dtype(idt))
    if _canonical(be, m, crow, col):
        return CSR(crow, col, vals, p.shape)
    return _coo_to_csr_by_sort(be, p, index_dtype)


# ---- index maps ----

def index_map(be, keys, index, size):
    """Match stored coordinates ``keys`` (along one dim) against the positions ``index`` selects.

    Returns ``(src, new)``: for every stored entry, once per ``j`` with ``index[j] == key``, the
    entry's position ``src`` and its new coordinate ``new = j``; entries keep their stored order
    and the copies of one entry follow ``index``'s order (repeated indices repeat entries, as in
    torch). O(nnz + len(index) + size) with a position table when ``size`` is modest, else
    O((nnz + len(index)) log len(index)) by binary search.
    """
    xp = be.xp
    nnz = keys.shape[0]
    k = index.shape[0]
    i64 = xp.int64
    if nnz == 0 or k == 0:
        e = xp.zeros(0, dtype=i64)
        return e, e
    index = index.astype(i64, copy=False)
    if size <= 4 * (nnz + k) + 4096:
        counts = xp.bincount(index, minlength=size)
        if int(counts.max()) <= 1:  # no repeats: one table lookup per stored entry
            table = xp.full(size, -1, dtype=i64)
            table[index] = xp.arange(k, dtype=i64)
            new = table[keys]
            src = xp.flatnonzero(new >= 0)
            return src, new[src]
        order = xp.argsort(index, kind="stable")
        starts = xp.cumsum(counts) - counts
        lo = starts[keys]
        rep = counts[keys]
    else:
        order = xp.argsort(index, kind="stable")
        sidx = index[order]
        lo = xp.searchsorted(sidx, keys, "left")
        rep = xp.searchsorted(sidx, keys, "right") - lo
        if int(rep.max()) <= 1:
            src = xp.flatnonzero(rep)
            return src, order[lo[src]]
    src = xp.repeat(xp.arange(nnz, dtype=i64), rep)
    first = xp.cumsum(rep) - rep
    within = xp.arange(src.shape[0], dtype=i64) - xp.repeat(first, rep)
    return src, order[xp.repeat(lo, rep) + within]


def coo_row_filter(be, row, lo, hi):
    """Positions of the stored entries whose coordinate ``row`` lies in ``[lo, hi)``."""
    if hi - lo == 1:
        return be.xp.flatnonzero(row == lo)
    return be.xp.flatnonzero((row >= lo) & (row < hi))


# ---- CSR slicing ----

def csr_gather_rows(be, crow, rows):
    """Rows ``rows`` (any order, repeats allowed) of a 2-D CSR: ``(crow', src)``."""
    xp = be.xp
    rows = rows.astype(xp.int64, copy=False)
    starts = crow[rows].astype(xp.int64)
    lens = crow[rows + 1].astype(xp.int64) - starts
    out = xp.zeros(rows.shape[0] + 1, dtype=crow.dtype)
    xp.cumsum(lens, out=out[1:])
    total = int(out[-1])
    src = xp.repeat(starts - out[:-1].astype(xp.int64), lens) + xp.arange(total, dtype=xp.int64)
    return out, src


def _recompress(be, crow, keep):
    """``crow`` of the CSR that keeps the stored entries where the bool array ``keep`` is set."""
    xp = be.xp
    c = xp.zeros(keep.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(keep, out=c[1:])
    return c[crow].astype(crow.dtype)


def csr_filter_cols(be, crow, col, lo, hi):
    """Columns ``[lo, hi)`` of a 2-D CSR: ``(crow', col', src)`` (stays canonical)."""
    keep = (col >= lo) & (col < hi)
    src = be.xp.flatnonzero(keep)
    return _recompress(be, crow, keep), (col[src] - lo).astype(col.dtype), src


def csr_map_cols(be, crow, col, index, size):
    """Columns at the strictly increasing ``index`` of a 2-D CSR: ``(crow', col', src)``
    (the map is monotone, so every row stays sorted)."""
    xp = be.xp
    src, new = index_map(be, col, index, size)
    keep = xp.zeros(col.shape[0], dtype=bool)
    keep[src] = True
    return _recompress(be, crow, keep), new.astype(col.dtype), src
