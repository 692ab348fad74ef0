"""A stable sort of COO entries by (row, rest-of-index) without a general sort.

PERF-NOTES.md spike 4 measured a packed-key ``np.sort`` at 40 ms for 2M keys, but that relies
on NumPy's AVX-512 sort; where ``np.sort`` is a plain quicksort (110 ms for 2M int64 keys on
our CI machines) a counting sort by row plus a per-row sort ("row bucket") is 3-5x faster. The
kernel is numba (``cache=True``, imported lazily, CPU only); without numba the caller falls back
to the packed-key sort. The order is stable, so duplicates are later summed in input order and
the result is deterministic.
"""

from .. import _jit

__all__ = ["gather_segment_sum", "row_bucket_coalesce", "row_bucket_order"]


def _kernels(be):
    return _jit.kernels("rowsort", _build, 6.0) if be.name == "cpu" else None


def row_bucket_order(be, rows, cols, nrows):
    """Stable argsort of entries by ``(rows, cols)``, or None when the kernel can't be used."""
    k = _kernels(be)
    if k is None:
        return None
    with _jit.limit(rows.shape[0]):
        return k[0](rows, cols, nrows)


def row_bucket_coalesce(be, rows, cols, vals, nrows):
    """Coalesced ``(rows, cols, vals)`` (sorted, duplicates summed in input order) for 1-D
    ``vals``, or None when the kernel can't be used."""
    if vals.ndim != 1 or vals.dtype.kind not in "fiuc" or vals.dtype.itemsize < 2:
        return None
    if vals.dtype.kind == "f" and vals.dtype.itemsize == 2:
        return None  # float16 has no numba type: NumPy's packed-key sort sums it
    k = _kernels(be)
    if k is None:
        return None
    with _jit.limit(rows.shape[0]):
        return k[1](rows, cols, vals, nrows)


def gather_segment_sum(be, vals, order, starts):
    """``out[s] = sum(vals[order[j]] for j in [starts[s], starts[s+1]))`` for 2-D float
    ``vals`` (hybrid COO values flattened to rows), each run summed in ``order``; None when the
    kernel can't be used. One pass instead of NumPy's ``vals[order]`` copy plus
    ``add.reduceat(axis=0)``, which is ~10x slower on (65k x 64) embedding gradients."""
    if vals.ndim != 2 or vals.dtype.kind != "f" or vals.dtype.itemsize < 4:
        return None
    k = _kernels(be)
    if k is None:
        return None
    with _jit.limit(vals.size):
        return k[2](vals, order, starts)


def _build():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False

    @njit(parallel=True, cache=True)
    def order_by_row(rows, cols, nrows):
        nnz = rows.shape[0]
        start = np.zeros(nrows + 1, np.int64)
        for k in range(nnz):
            start[rows[k] + 1] += 1
        for r in range(nrows):
            start[r + 1] += start[r]
        pos = start[:-1].copy()
        order = np.empty(nnz, np.int64)
        for k in range(nnz):  # counting sort by row: stable
            r = rows[k]
            order[pos[r]] = k
            pos[r] += 1
        for r in prange(nrows):  # then each row by column, stably
            s = start[r]
            e = start[r + 1]
            n = e - s
            if n <= 1:
                continue
            if n <= 32:  # insertion sort: short rows are the common case
                for i in range(s + 1, e):
                    key = order[i]
                    c = cols[key]
                    j = i - 1
                    while j >= s and cols[order[j]] > c:
                        order[j + 1] = order[j]
                        j -= 1
                    order[j + 1] = key
            else:
                seg = order[s:e].copy()
                sub = np.empty(n, cols.dtype)
                for i in range(n):
                    sub[i] = cols[seg[i]]
                p = np.argsort(sub, kind="mergesort")
                for i in range(n):
                    order[s + i] = seg[p[i]]
        return order

    @njit(parallel=True, cache=True)
    def coalesce_rows(rows, cols, vals, nrows):
        nnz = rows.shape[0]
        start = np.zeros(nrows + 1, np.int64)
        for k in range(nnz):
            start[rows[k] + 1] += 1
        for r in range(nrows):
            start[r + 1] += start[r]
        pos = start[:-1].copy()
        sc = np.empty(nnz, np.int64)
        sv = np.empty(nnz, vals.dtype)
        for k in range(nnz):  # counting sort by row, moving the (col, value) pairs: stable
            r = rows[k]
            p = pos[r]
            sc[p] = cols[k]
            sv[p] = vals[k]
            pos[r] = p + 1
        ucount = np.zeros(nrows + 1, np.int64)
        for r in prange(nrows):  # sort each row's pairs by column (stably), count the distinct
            s = start[r]
            e = start[r + 1]
            n = e - s
            if n > 32:
                p = np.argsort(sc[s:e], kind="mergesort")
                c2 = sc[s:e][p]
                v2 = sv[s:e][p]
                sc[s:e] = c2
                sv[s:e] = v2
            else:
                for i in range(s + 1, e):
                    c = sc[i]
                    v = sv[i]
                    j = i - 1
                    while j >= s and sc[j] > c:
                        sc[j + 1] = sc[j]
                        sv[j + 1] = sv[j]
                        j -= 1
                    sc[j + 1] = c
                    sv[j + 1] = v
            u = 0
            for i in range(s, e):
                if i == s or sc[i] != sc[i - 1]:
                    u += 1
            ucount[r + 1] = u
        for r in range(nrows):
            ucount[r + 1] += ucount[r]
        total = ucount[nrows]
        out_r = np.empty(total, np.int64)
        out_c = np.empty(total, np.int64)
        out_v = np.empty(total, vals.dtype)
        for r in prange(nrows):  # sum the runs of equal columns, in input order
            u = ucount[r] - 1
            for i in range(start[r], start[r + 1]):
                if i == start[r] or sc[i] != sc[i - 1]:
                    u += 1
                    out_r[u] = r
                    out_c[u] = sc[i]
                    out_v[u] = sv[i]
                else:
                    out_v[u] += sv[i]
        return out_r, out_c, out_v

    @njit(parallel=True, cache=True)
    def gather_sum(vals, order, starts):
        nseg = starts.shape[0]
        n = order.shape[0]
        D = vals.shape[1]
        out = np.empty((nseg, D), vals.dtype)
        for s in prange(nseg):
            e = starts[s + 1] if s + 1 < nseg else n
            o = out[s]
            src = vals[order[starts[s]]]
            for d in range(D):
                o[d] = src[d]
            for j in range(starts[s] + 1, e):
                src = vals[order[j]]
                for d in range(D):
                    o[d] += src[d]
        return out

    return order_by_row, coalesce_rows, gather_sum
