"""SpGEMM: ``op(A) @ op(B)`` of two 2-D sparse payloads, as a coalesced COO payload with the
*structural* pattern (every product of stored entries is kept, also where it cancels to 0, so its
gradient flows).

Memory is the point of this module (issue 17: a 36M-entry result peaked at 4x its own size):

- CPU with numba: Gustavson's row-by-row product in two passes over row blocks (``prange``): the
  first counts each output row's distinct columns with a marker array, the second fills the
  exact-size output (``indices`` and ``values``) in place and sorts each row's columns. Peak
  memory is the output plus row pointers and one marker array (of the column count) per block.
- Otherwise (CuPy, no numba, float16/bool values, a column count far beyond the entries): the
  products are expanded and coalesced in chunks of whole output rows (at most ``_CHUNK``
  products each); the chunks' results are packed into a few large blocks (int32 indices where
  they fit), which are copied into the exact-size output one at a time, each freed as soon as it
  is copied.

Indices beyond int64's linear range (a ``(2**33, 2**33)`` product) are fine: nothing packs
``row * ncols + col`` except ``coalesce``, which falls back to a lexicographic sort.
"""

from .. import _jit
from ._convert import coalesce, csr_row_indices
from ._payload import COO, CSR

__all__ = ["spgemm"]

_CHUNK = 1 << 20  # products expanded at once by the generic path (bounds its temporaries)
_BLOCK = 1 << 23  # entries per spill block of the generic path (>= 32 MB arrays: mmap'd)
_INT32_MAX = (1 << 31) - 1


def _by_row(be, rows, cols, vals, nrows, sorted_rows):
    """``(crow, cols, vals)`` of entries grouped by row (stable: stored order within a row)."""
    xp = be.xp
    if not sorted_rows and rows.shape[0] > 1 and bool((rows[1:] < rows[:-1]).any()):
        order = xp.argsort(rows, kind="stable")
        rows, cols, vals = rows[order], cols[order], vals[order]
    crow = xp.zeros(nrows + 1, dtype=xp.int64)
    if rows.shape[0]:
        xp.cumsum(xp.bincount(rows, minlength=nrows), out=crow[1:])
    return crow, cols, vals


def _entries(be, p, transpose):
    """(rows, cols, values, rows_sorted) of the stored entries of ``p`` or ``p^T``."""
    if p.__class__ is CSR:
        r, c = csr_row_indices(be, p.crow), p.col
        sorted_rows = True
    else:
        r, c = p.indices[0], p.indices[1]
        sorted_rows = p.coalesced
    if transpose:
        return c, r, p.values, False
    return r, c, p.values, sorted_rows


def _csr(be, p, transpose, nrows):
    if p.__class__ is CSR and not transpose:
        return p.crow.astype(be.xp.int64, copy=False), p.col, p.values
    r, c, v, s = _entries(be, p, transpose)
    return _by_row(be, r, c, v, nrows, s)


def spgemm(be, a, b, ta=False, tb=False, use_numba=True):
    """``op(a) @ op(b)`` (``op``: transpose where ``ta``/``tb``) as a coalesced COO payload."""
    xp = be.xp
    m = a.shape[1] if ta else a.shape[0]
    kdim = a.shape[0] if ta else a.shape[1]
    n = b.shape[0] if tb else b.shape[1]
    dt = xp.result_type(a.values.dtype, b.values.dtype)
    if a.nnz == 0 or b.nnz == 0:
        return COO(xp.zeros((2, 0), xp.int64), xp.zeros(0, dt), (m, n), True)
    nb = _numba() if use_numba and be.name == "cpu" else None
    small = 8 * (a.nnz + b.nnz) + (1 << 22)  # row pointers and markers of this size are cheap
    if (nb is not None and dt.kind in "fiuc" and dt.itemsize >= 4 and a.values.ndim == 1
            and m <= min(small, _INT32_MAX) and kdim <= small and n <= small):
        return _numba_spgemm(be, nb, a, b, ta, tb, m, kdim, n, dt)
    return _chunked(be, a, b, ta, tb, m, n, dt)


# ---- generic: chunks of whole output rows ----

def _chunked(be, a, b, ta, tb, m, n, dt):
    xp = be.xp
    ar, ac, av, asorted = _entries(be, a, ta)
    if not asorted and ar.shape[0] > 1 and bool((ar[1:] < ar[:-1]).any()):
        order = xp.argsort(ar, kind="stable")
        ar, ac, av = ar[order], ac[order], av[order]
    br, bc, bv, bsorted = _entries(be, b, tb)
    if not bsorted and br.shape[0] > 1 and bool((br[1:] < br[:-1]).any()):
        order = xp.argsort(br, kind="stable")
        br, bc, bv = br[order], bc[order], bv[order]
    # the run of op(B)'s row ac[e] for every entry e of op(A) (no row pointers: any row count)
    lo = xp.searchsorted(br, ac, side="left")
    counts = xp.searchsorted(br, ac, side="right") - lo
    cum = xp.cumsum(counts)
    na = ar.shape[0]
    spill = _Spill(xp, xp.int32 if max(m, n) <= _INT32_MAX else xp.int64, dt, int(cum[-1]))
    s = 0
    while s < na:
        done = int(cum[s - 1]) if s else 0
        e = int(xp.searchsorted(cum, done + _CHUNK, side="right"))
        e = min(max(e, s + 1), na)
        e = int(xp.searchsorted(ar, ar[e - 1], side="right"))  # whole output rows only
        got = _expand(be, ar[s:e], av[s:e], lo[s:e], counts[s:e], bc, bv, m, n, dt)
        if got is not None:
            spill.add(*got)
        s = e
    del lo, counts, cum
    idx = xp.empty((2, spill.total), dtype=xp.int64)
    vals = xp.empty(spill.total, dtype=dt)
    at = 0
    for r, c, v in spill.drain():  # each block is freed once copied: the output grows as
        k = v.shape[0]             # the blocks go
        idx[0, at: at + k] = r
        idx[1, at: at + k] = c
        vals[at: at + k] = v
        at += k
    return COO(idx, vals, (m, n), True)


class _Spill:
    """The chunks' results, packed into a few large blocks (rows, cols, values), int32 indices
    where the shape allows. Blocks of ``_BLOCK`` entries are allocated by the OS (mmap) and handed
    back whole when freed, so draining them into the output keeps the peak at about the output's
    size (small per-chunk arrays would stay in the allocator's heap after being freed)."""

    def __init__(self, xp, idt, dt, bound):
        self.xp, self.idt, self.dt = xp, idt, dt
        self.blocks = []  # [rows, cols, vals, used]
        self.total = 0
        self.room = bound  # at most this many entries will come (the number of products)

    def add(self, rows, cols, vals):
        k, at = vals.shape[0], 0
        while at < k:
            if not self.blocks or self.blocks[-1][3] == self.blocks[-1][2].shape[0]:
                xp = self.xp
                cap = max(min(_BLOCK, self.room), k - at)
                self.room -= cap
                self.blocks.append([xp.empty(cap, self.idt), xp.empty(cap, self.idt),
                                    xp.empty(cap, self.dt), 0])
            blk = self.blocks[-1]
            u = blk[3]
            t = min(k - at, blk[2].shape[0] - u)
            blk[0][u: u + t] = rows[at: at + t]
            blk[1][u: u + t] = cols[at: at + t]
            blk[2][u: u + t] = vals[at: at + t]
            blk[3] = u + t
            at += t
        self.total += k

    def drain(self):
        while self.blocks:
            r, c, v, u = self.blocks.pop(0)
            yield r[:u], c[:u], v[:u]
            del r, c, v


def _expand(be, ar, av, lo, counts, bc, bv, m, n, dt):
    """The coalesced products of one chunk of op(A)'s entries: (rows, cols, values)."""
    xp = be.xp
    total = int(counts.sum())
    if total == 0:
        return None
    rep = xp.repeat(xp.arange(ar.shape[0]), counts)
    starts = xp.cumsum(counts) - counts
    bpos = xp.arange(total, dtype=xp.int64)
    bpos -= xp.repeat(starts - lo, counts)
    del starts
    idx = xp.empty((2, total), dtype=xp.int64)
    xp.take(ar, rep, out=idx[0])
    xp.take(bc, bpos, out=idx[1])
    vals = av[rep].astype(dt, copy=False) * bv[bpos]
    del rep, bpos
    p = coalesce(be, COO(idx, vals, (m, n), False))
    return p.indices[0], p.indices[1], p.values


# ---- numba: Gustavson, two passes over row blocks ----

def _blocks(be, work_per_row, nblocks):
    """Row-block boundaries with about equal products each."""
    xp = be.xp
    cum = xp.cumsum(work_per_row)
    m = work_per_row.shape[0]
    total = int(cum[-1]) if m else 0
    if total == 0 or nblocks <= 1:
        return xp.array([0, m], dtype=xp.int64)
    cuts = xp.searchsorted(cum, xp.linspace(0, total, nblocks + 1)[1:-1], side="left")
    return xp.unique(xp.concatenate(([0], cuts, [m]))).astype(xp.int64)


def _numba_spgemm(be, nb, a, b, ta, tb, m, kdim, n, dt):
    xp = be.xp
    acrow, acol, aval = _csr(be, a, ta, m)
    bcrow, bcol, bval = _csr(be, b, tb, kdim)
    acol = xp.ascontiguousarray(acol, dtype=xp.int64)
    bcol = xp.ascontiguousarray(bcol, dtype=xp.int64)
    aval = xp.ascontiguousarray(aval, dtype=dt)
    bval = xp.ascontiguousarray(bval, dtype=dt)
    work = nb["work"](acrow, acol, bcrow)
    flops = int(work.sum())
    with _jit.limit(flops) as threads:
        bounds = _blocks(be, work, 4 * threads if threads > 1 else 1)
        del work
        row_nnz = xp.empty(m, dtype=xp.int64)
        nb["count"](acrow, acol, bcrow, bcol, n, bounds, row_nnz)
        crow = xp.zeros(m + 1, dtype=xp.int64)
        xp.cumsum(row_nnz, out=crow[1:])
        del row_nnz
        total = int(crow[-1])
        idx = xp.empty((2, total), dtype=xp.int64)
        vals = xp.empty(total, dtype=dt)
        nb["fill"](acrow, acol, aval, bcrow, bcol, bval, n, bounds, crow, idx[0], idx[1], vals)
    return COO(idx, vals, (m, n), True)


def _numba():
    return _jit.kernels("spgemm", _build_numba, 6.0)


def _build_numba():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False

    @njit(cache=True)
    def work(acrow, acol, bcrow):
        m = acrow.shape[0] - 1
        out = np.zeros(m, np.int64)
        for i in range(m):
            w = 0
            for p in range(acrow[i], acrow[i + 1]):
                k = acol[p]
                w += bcrow[k + 1] - bcrow[k]
            out[i] = w + 1
        return out

    @njit(parallel=True, cache=True)
    def count(acrow, acol, bcrow, bcol, n, bounds, row_nnz):
        for blk in prange(bounds.shape[0] - 1):
            mark = np.full(n, -1, np.int32)  # rows < 2**31 (the caller checks)
            for i in range(bounds[blk], bounds[blk + 1]):
                c = 0
                for p in range(acrow[i], acrow[i + 1]):
                    k = acol[p]
                    for q in range(bcrow[k], bcrow[k + 1]):
                        j = bcol[q]
                        if mark[j] != i:
                            mark[j] = i
                            c += 1
                row_nnz[i] = c

    @njit(parallel=True, cache=True)
    def fill(acrow, acol, aval, bcrow, bcol, bval, n, bounds, crow, orow, ocol, oval):
        for blk in prange(bounds.shape[0] - 1):
            pos = np.full(n, -1, np.int64)  # output position of column j in the current row
            for i in range(bounds[blk], bounds[blk + 1]):
                start = crow[i]
                e = start
                for p in range(acrow[i], acrow[i + 1]):
                    k = acol[p]
                    va = aval[p]
                    for q in range(bcrow[k], bcrow[k + 1]):
                        j = bcol[q]
                        if pos[j] < start:  # first product in this row (earlier rows: < start)
                            pos[j] = e
                            ocol[e] = j
                            oval[e] = va * bval[q]
                            e += 1
                        else:
                            oval[pos[j]] += va * bval[q]
                if e - start <= 64:  # short rows: insertion sort in place, no allocation
                    for t in range(start + 1, e):
                        c = ocol[t]
                        v = oval[t]
                        u = t - 1
                        while u >= start and ocol[u] > c:
                            ocol[u + 1] = ocol[u]
                            oval[u + 1] = oval[u]
                            u -= 1
                        ocol[u + 1] = c
                        oval[u + 1] = v
                else:
                    srt = True
                    for t in range(start + 1, e):
                        if ocol[t] < ocol[t - 1]:
                            srt = False
                            break
                    if not srt:
                        o = np.argsort(ocol[start:e], kind="mergesort")
                        cs = ocol[start:e][o]
                        vs = oval[start:e][o]
                        ocol[start:e] = cs
                        oval[start:e] = vs
                for t in range(start, e):
                    orow[t] = i

    return {"work": work, "count": count, "fill": fill}
