"""Sparse matrix products on payloads: SpMM (sparse @ dense), SpGEMM (sparse @ sparse), SDDMM.

Every kernel takes the Backend first and works on 2-D payloads with scalar values (hybrid COO
and batched CSR are flattened by the op module first).

Speed (PERF-NOTES.md, spike 2):

- The products run on a *CSR form* of the pattern: ``(crow, col, perm)``, where ``perm`` maps
  CSR order to the payload's stored order (``None`` when they agree). A CSR payload is its own
  CSR form; a COO payload's is built once (a packed-key row sort when uncoalesced) and cached
  on the payload (``p._cache``, shared by ``with_values``, which keeps the pattern).
- ``A^T @ G`` (the gradient for the dense operand) runs on a cached *transposed* CSR form
  (built once: a numba counting sort, or ``be.sp``'s CSR -> CSC conversion), so it is the same
  row-parallel gather kernel as the forward instead of a scatter.
- On the CPU the kernels are numba ``prange``-over-row-blocks loops (float rows: one call of
  the ``_wgather.py`` intrinsic each, the row's sums in registers; numba is imported lazily,
  the first time a product runs; the blocks hold equal numbers of stored entries, one set per
  thread count). Tiny products use the serial twins of the same loops, which cost ~0.5 us to
  call; no SciPy object is built per op (each costs ~20 us).
- Without numba (or on another backend) SpMM uses ``be.sp`` CSR @ dense; on the CPU it is split
  into row blocks on a thread pool, since SciPy's CSR @ dense releases the GIL. SDDMM then is a
  chunked ``einsum`` of gathered rows (bounded memory).
"""

import os

from .. import _jit
from .._memory import check_dense_alloc
from . import _cuda, _spgemm
from ._convert import csr_row_indices
from ._payload import COO, CSR

__all__ = [
    "csr_form", "csr_t_form", "entry_rows", "row_counts", "sddmm", "spgemm", "spmm",
    "spmm_reduce", "use_numba",
]

_PAR_WORK = 1 << 15  # stored entries x columns above which the parallel kernels run
_CHUNK = 1 << 16  # stored entries per chunk of the NumPy SDDMM (bounds its temporaries)
_GPU_TEMP_BYTES = 1 << 28  # bytes of one gathered operand per SDDMM chunk on CUDA
_ENABLED = _jit.ENABLED  # the numba switch (one list, in ``_jit``); this name stays for its users
use_numba = _jit.use_numba
_POOL = [None]


def _nb(be, dt):
    """The numba kernels on the CPU backend for dtype ``dt`` (float32/64, complex64/128,
    int32/64), or None (other backends and dtypes, numba missing or disabled)."""
    if be.name != "cpu":
        return None
    kind, size = dt.kind, dt.itemsize
    if not ((kind == "f" or kind == "i") and 4 <= size <= 8 or kind == "c" and 8 <= size <= 16):
        return None
    return _jit.kernels("spmm", _build_numba, 6.0)


# ---- the pattern cache ----

def _cache(p):
    c = p._cache
    if c is None:
        c = p._cache = {}
    return c


def _pack_sort(xp, key, n):
    """Stable argsort of non-negative int64 ``key`` (< 2**k) by packing positions in low bits."""
    shift = max(int(n - 1).bit_length(), 1)
    top = int(key.max()) if n else 0
    if max(top, 1).bit_length() + shift > 63:
        return xp.argsort(key, kind="stable")
    k = (key << shift) | xp.arange(n, dtype=xp.int64)
    k.sort()
    return k & ((1 << shift) - 1)


def csr_form(be, p):
    """``(crow, col, perm)``: the CSR arrays of a 2-D payload's pattern; ``values[perm]`` (or
    ``values`` when ``perm`` is None) are its values in CSR order. Duplicates of an uncoalesced
    COO stay separate entries (every product sums them)."""
    if p.__class__ is CSR:
        return p.crow, p.col, None
    c = _cache(p)
    f = c.get("csr")
    if f is None:
        xp = be.xp
        m = p.shape[0]
        rows, cols = p.indices[0], p.indices[1]
        perm = None
        if not p.coalesced and p.nnz > 1 and bool((rows[1:] < rows[:-1]).any()):
            perm = _pack_sort(xp, rows, p.nnz)
            rows, cols = rows[perm], cols[perm]
        crow = xp.zeros(m + 1, dtype=xp.int64)
        if p.nnz:
            xp.cumsum(xp.bincount(rows, minlength=m), out=crow[1:])
        f = c["csr"] = (crow, cols, perm)
    return f


def csr_t_form(be, p):
    """``(crow, col, perm)`` of the *transposed* pattern (perm indexes the stored values)."""
    c = _cache(p)
    f = c.get("csrT")
    if f is None:
        xp = be.xp
        crow, col, perm = csr_form(be, p)
        m, n = p.shape
        nnz = col.shape[0]
        if nnz == 0:
            f = (xp.zeros(n + 1, dtype=xp.int64), col, None)
        else:
            # CSR -> CSC of the positions is a counting sort by column (O(nnz + n), stable);
            # cupyx takes float values only: positions travel as float64 there (exact < 2**53)
            check_int32_limits(be, nnz, (m, n), "transposing a sparse pattern")
            nb = _jit.kernels("spmm", _build_numba, 6.0) if be.name == "cpu" else None
            # numba's counting sort of the positions: the GCN's first backward built X^T and A^T
            # in 1.1 ms through csr_matrix(...).tocsc(), ~0.5 ms now; SciPy's csr_tocsc called
            # directly (_structure._csr_t2, which moves values) took 0.8-1.1 ms for X^T (48k
            # entries) where this takes 0.6, both after a gc.collect()
            if nb is not None:
                tcrow = xp.zeros(n + 1, dtype=xp.int64)
                tcol = xp.empty(nnz, dtype=xp.int64)
                tpos = xp.empty(nnz, dtype=xp.int64)
                i64 = xp.int64
                nb.pattern_t(xp.ascontiguousarray(crow, dtype=i64),
                             xp.ascontiguousarray(col, dtype=i64), tcrow, tcol, tpos)
            else:
                pos = xp.arange(nnz, dtype=xp.int64 if be.name == "cpu" else xp.float64)
                t = be.sp.csr_matrix((pos, col, crow), shape=(m, n)).tocsc()
                tcrow, tcol, tpos = t.indptr, t.indices, t.data.astype(xp.int64, copy=False)
            order = tpos if perm is None else perm[tpos]
            f = (tcrow, tcol, order)
        c["csrT"] = f
    return f


def entry_rows(be, p):
    """Row index of every stored entry, in stored order."""
    if p.__class__ is COO:
        return p.indices[0]
    c = _cache(p)
    r = c.get("rows")
    if r is None:
        r = c["rows"] = csr_row_indices(be, p.crow)
    return r


def _cols(p):
    return p.indices[1] if p.__class__ is COO else p.col


def row_counts(be, p):
    """Number of stored entries in every row (duplicates of an uncoalesced COO count)."""
    crow, _, _ = csr_form(be, p)
    return be.xp.diff(crow)


def _bounds(be, crow, nblocks):
    """Row-block boundaries holding about equal numbers of stored entries."""
    xp = be.xp
    m = crow.shape[0] - 1
    nnz = int(crow[-1])
    b = xp.searchsorted(crow, xp.linspace(0, nnz, nblocks + 1).astype(crow.dtype), side="left")
    b[0], b[-1] = 0, m
    return xp.maximum.accumulate(b)


# ---- SpMM: op(A) @ X ----

def spmm(be, p, x, transpose=False):
    """``A @ x`` (or ``A^T @ x``) for a 2-D scalar payload ``A`` and a dense 2-D ``x``."""
    xp = be.xp
    m, n = p.shape
    rows_out = n if transpose else m
    k = x.shape[1]
    vals = p.values
    dt = x.dtype
    if vals.dtype != dt:
        dt = xp.result_type(vals.dtype, dt)
        vals = vals.astype(dt)
        x = x.astype(dt)
    nnz = p.nnz
    check_dense_alloc((rows_out, k), dt, "sparse @ dense")
    if nnz == 0 or k == 0:
        return xp.zeros((rows_out, k), dtype=dt)
    nb = _nb(be, dt)
    small = nnz * k < _PAR_WORK
    if small and be.name == "cpu":
        # tiny: a serial loop over the stored entries, no CSR form, no SciPy object
        out = xp.zeros((rows_out, k), dtype=dt)
        if nb is not None and not transpose and p.__class__ is CSR:
            nb.csr_mm_ser(p.crow, p.col, vals, x if x.flags.c_contiguous else xp.ascontiguousarray(x), out)
            return out
        r, c = entry_rows(be, p), _cols(p)
        if transpose:
            r, c = c, r
        if nb is not None:
            nb.coo_mm(r, c, vals, x if x.flags.c_contiguous else xp.ascontiguousarray(x), out)
        else:
            xp.add.at(out, r, vals[:, None] * x[c])
        return out
    crow, col, perm = csr_t_form(be, p) if transpose else csr_form(be, p)
    if nb is not None:
        x = xp.ascontiguousarray(x)
        out = xp.empty((rows_out, k), dtype=dt)
        use = perm is not None
        pm = perm if use else crow[:0]
        # float rows: the row's sums in registers (_wgather.py); other dtypes: the plain loops
        f = (dt.kind == "f" and col.dtype == xp.int64 and pm.dtype == xp.int64
             and vals.flags.c_contiguous and col.flags.c_contiguous and pm.flags.c_contiguous)
        with _threads(nnz * k) as nt:
            if nt == 1:  # no parallel region at all (launching one costs ~5 us)
                if use:
                    (nb.csr_f_rows_p if f else nb.csr_mm_rows_p)(crow, col, pm, vals, x, out)
                else:
                    (nb.csr_f_rows if f else nb.csr_mm_rows)(crow, col, vals, x, out)
                return out
            c = _cache(p)
            key = ("bounds", transpose, nt)
            bd = c.get(key)
            if bd is None:
                bd = c[key] = _bounds(be, crow, 4 * nt)
            (nb.csr_f_par if f else nb.csr_mm_par)(crow, col, pm, use, vals, x, out, bd)
        return out
    v = vals if perm is None else vals[perm]
    if be.name != "cpu":  # cupyx casts the pattern to int32 at every construction: once here
        crow, col = _int32_pattern(p, transpose, crow, col)
    return _scipy_spmm(be, crow, col, v, (rows_out, n if not transpose else m), x)


def _threads(work):  # the thread policy (``_jit.thread_count``: long products take every thread)
    # A product's multiply-adds weigh half the policy's element-operations: its row loops are
    # vector FMAs over rows in cache, and a product below ~1M of them does not pay back the
    # ~70 us wake-up of a sleeping worker (2708^2 x 1433 GCN at 2 threads, its X @ W and X^T @ G
    # at 780k: 1.51-1.75 ms an epoch on two threads, 1.29-1.34 ms on one; with torch imported,
    # whose libgomp numba's regions then share, the workers spin and 2 threads took 1.22-1.26)
    return _jit.limit(work >> 1)


_INT32_MAX = (1 << 31) - 1


def check_int32_limits(be, nnz, shape, what):
    """cupyx.scipy.sparse keeps int32 indices (cuSPARSE's 32-bit API): on a GPU, refuse clearly
    what would overflow them instead of letting the cast wrap around into a wrong answer."""
    if be.name != "cpu" and (nnz > _INT32_MAX or max(shape, default=0) > _INT32_MAX):
        raise RuntimeError(
            f"{what} on CUDA: a {' x '.join(map(str, shape))} matrix with {nnz} stored entries "
            "exceeds cupyx.scipy.sparse's int32 indices (at most 2**31 - 1 stored entries, rows "
            "and columns); split the operand into row blocks, or run this op on the CPU")


def _int32_pattern(p, transpose, crow, col):
    """``crow``/``col`` as int32 (cached with the pattern), as cupyx.scipy.sparse holds them."""
    c = _cache(p)
    key = ("int32", transpose)
    f = c.get(key)
    if f is None:
        if max(col.shape[0], crow.shape[0]) >= 1 << 31:
            return crow, col  # beyond int32: cupyx cannot hold it either (docs/gpu.md)
        f = c[key] = (crow.astype("int32", copy=False), col.astype("int32", copy=False))
    return f


def _scipy_spmm(be, crow, col, v, shape, x):
    sp = be.sp
    if be.name != "cpu":
        check_int32_limits(be, v.shape[0], shape, "sparse @ dense")
        r = _cuda.csr_dense(be, v, col, crow, shape, x)  # row-major cuSPARSE SpMM (real GPU)
        return r if r is not None else sp.csr_matrix((v, col, crow), shape=shape) @ x
    if v.shape[0] * x.shape[1] < _PAR_WORK * 8:
        return sp.csr_matrix((v, col, crow), shape=shape) @ x
    # SciPy's CSR @ dense releases the GIL: row blocks on a thread pool (sub-CSR views)
    xp = be.xp
    pool = _POOL[0]
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor

        pool = _POOL[0] = ThreadPoolExecutor(max(os.cpu_count() or 1, 1))
    b = _bounds(be, crow, 2 * min(_jit.free_cores(), os.cpu_count() or 1))

    def block(r0, r1):
        s, e = int(crow[r0]), int(crow[r1])
        sub = sp.csr_matrix((v[s:e], col[s:e], crow[r0:r1 + 1] - s), shape=(r1 - r0, shape[1]))
        return sub @ x

    parts = list(pool.map(block, b[:-1].tolist(), b[1:].tolist()))
    return xp.concatenate(parts) if parts else xp.zeros((0, x.shape[1]), x.dtype)


# ---- SpMM with a reduction over each row's stored entries ----

def spmm_reduce(be, p, x, reduce):
    """``(out, arg)`` for ``reduce`` in amax/amin: ``out[i, k]`` = reduce over the stored entries
    ``j`` of row ``i`` of ``A[i, j] * x[j, k]`` (0 for a row without entries); ``arg[i, k]`` is the
    stored position (index into the values) that gives it, -1 for an empty row."""
    xp = be.xp
    m = p.shape[0]
    k = x.shape[1]
    check_dense_alloc((m, k), x.dtype, f"sparse.mm(reduce={reduce!r})")
    crow, col, perm = csr_form(be, p)
    nnz = col.shape[0]
    out = xp.zeros((m, k), dtype=xp.result_type(p.values.dtype, x.dtype))
    arg = xp.full((m, k), -1, dtype=xp.int64)
    if nnz == 0 or k == 0:
        return out, arg
    v = p.values if perm is None else p.values[perm]
    prods = v[:, None] * x[col]
    counts = xp.diff(crow)
    nonempty = xp.flatnonzero(counts)
    starts = crow[:-1][nonempty]
    red = xp.maximum if reduce == "amax" else xp.minimum
    best = red.reduceat(prods, starts, axis=0)
    seg = xp.repeat(xp.arange(nonempty.shape[0]), counts[nonempty])
    b = best[seg]
    hit = prods == b
    if prods.dtype.kind in "fc":  # a NaN wins (maximum/minimum propagate it): point at it
        hit |= xp.isnan(prods) & xp.isnan(b)
    pos = xp.where(hit, xp.arange(nnz)[:, None], nnz)
    first = xp.minimum.reduceat(pos, starts, axis=0)  # the first stored entry reaching it
    out[nonempty] = best
    arg[nonempty] = first if perm is None else perm[first]
    return out, arg


# ---- SDDMM: values of left @ right^T at the stored positions ----

def sddmm(be, left, right, p):
    """``[nnz]`` values ``sum_k left[row, k] * right[col, k]`` at ``p``'s stored entries, in
    ``p``'s stored order (O(nnz) memory: no dense ``[M, N]`` product is formed)."""
    xp = be.xp
    dt = xp.result_type(left.dtype, right.dtype)
    nnz = p.nnz
    k = left.shape[1]
    if nnz == 0 or k == 0:
        return xp.zeros(nnz, dtype=dt)
    rows, cols = entry_rows(be, p), _cols(p)
    left = xp.ascontiguousarray(left, dtype=dt)
    right = xp.ascontiguousarray(right, dtype=dt)
    nb = _nb(be, dt)
    if nb is not None:
        out = xp.empty(nnz, dtype=dt)
        zero = out.dtype.type(0)
        if nnz * k < _PAR_WORK:
            nb.sddmm_ser(rows, cols, left, right, out, zero)
        else:
            with _threads(nnz * k) as nt:
                bd = xp.linspace(0, nnz, 4 * nt + 1).astype(xp.int64)
                nb.sddmm_par(rows, cols, left, right, out, bd, zero)
        return out
    r = _cuda.sddmm(be, rows, cols, left, right)  # one warp per entry (real GPU)
    if r is not None:
        return r
    # chunks bound the gathered temporaries: by CPU cache on the CPU, by memory on a GPU
    # (where each chunk costs several kernel launches)
    chunk = _CHUNK if be.name == "cpu" else max(_CHUNK, _GPU_TEMP_BYTES // (k * dt.itemsize))
    if nnz <= chunk:
        return xp.einsum("ij,ij->i", left[rows], right[cols])
    out = xp.empty(nnz, dtype=dt)
    for s in range(0, nnz, chunk):
        e = min(s + chunk, nnz)
        out[s:e] = xp.einsum("ij,ij->i", left[rows[s:e]], right[cols[s:e]])
    return out


# ---- SpGEMM: op(A) @ op(B), both sparse ----

def spgemm(be, a, b, ta=False, tb=False):
    """``op(a) @ op(b)`` as a coalesced COO payload with the *structural* pattern: every product
    of stored entries is kept (an entry that cancels to 0 stays stored, so its gradient flows).

    Bounded memory (about the output's own size): ``_spgemm.py``.
    """
    return _spgemm.spgemm(be, a, b, ta, tb, _ENABLED[0])


# ---- the numba kernels (built on first use) ----

wsum_row = wsum_row_p = None  # set by _build_numba: the row intrinsics (see _wgather.py)


def _build_numba():
    global wsum_row, wsum_row_p
    try:
        from numba import njit, prange

        from . import _wgather
    except ImportError:
        return False
    # module globals, not closure variables: numba keys its cache on the closure variables'
    # pickles, and an intrinsic's differs per process (the kernels would recompile every time)
    wsum_row, wsum_row_p = _wgather.wsum_row, _wgather.wsum_row_p

    # Each kernel is self-contained: a kernel that calls another jitted function of this scope
    # would hold it as a closure variable, which changes the cache key in every process.
    # A row's stored entries go four at a time: one pass over the output row per four products
    # (the row is read and written back per pass; a pass per entry made every entry wait for
    # the previous store: CSR 2708^2, 13k nnz x 16: 58 -> 48 us). The sums' order within four
    # differs from a one-by-one loop by rounding only; serial and parallel kernels agree.
    @njit(parallel=True, cache=True)
    def csr_mm_par(crow, col, perm, use_perm, vals, x, out, bounds):
        k = x.shape[1]
        for b in prange(bounds.shape[0] - 1):
            for i in range(bounds[b], bounds[b + 1]):
                o = out[i]
                for d in range(k):
                    o[d] = 0
                q = crow[i]
                q1 = crow[i + 1]
                while q + 3 < q1:
                    if use_perm:
                        va, vb = vals[perm[q]], vals[perm[q + 1]]
                        vc, vd = vals[perm[q + 2]], vals[perm[q + 3]]
                    else:
                        va, vb, vc, vd = vals[q], vals[q + 1], vals[q + 2], vals[q + 3]
                    xa, xb, xc, xd = x[col[q]], x[col[q + 1]], x[col[q + 2]], x[col[q + 3]]
                    for d in range(k):
                        o[d] += (va * xa[d] + vb * xb[d]) + (vc * xc[d] + vd * xd[d])
                    q += 4
                while q < q1:
                    v = vals[perm[q]] if use_perm else vals[q]
                    xr = x[col[q]]
                    for d in range(k):
                        o[d] += v * xr[d]
                    q += 1

    @njit(cache=True)
    def csr_mm_rows(crow, col, vals, x, out):  # csr_mm_par's loop on one thread, no perm
        k = x.shape[1]
        for i in range(crow.shape[0] - 1):
            o = out[i]
            for d in range(k):
                o[d] = 0
            q = crow[i]
            q1 = crow[i + 1]
            while q + 3 < q1:
                va, vb, vc, vd = vals[q], vals[q + 1], vals[q + 2], vals[q + 3]
                xa, xb, xc, xd = x[col[q]], x[col[q + 1]], x[col[q + 2]], x[col[q + 3]]
                for d in range(k):
                    o[d] += (va * xa[d] + vb * xb[d]) + (vc * xc[d] + vd * xd[d])
                q += 4
            while q < q1:
                v = vals[q]
                xr = x[col[q]]
                for d in range(k):
                    o[d] += v * xr[d]
                q += 1

    @njit(cache=True)
    def csr_mm_rows_p(crow, col, perm, vals, x, out):  # the same, values through perm
        k = x.shape[1]
        for i in range(crow.shape[0] - 1):
            o = out[i]
            for d in range(k):
                o[d] = 0
            q = crow[i]
            q1 = crow[i + 1]
            while q + 3 < q1:
                va, vb = vals[perm[q]], vals[perm[q + 1]]
                vc, vd = vals[perm[q + 2]], vals[perm[q + 3]]
                xa, xb, xc, xd = x[col[q]], x[col[q + 1]], x[col[q + 2]], x[col[q + 3]]
                for d in range(k):
                    o[d] += (va * xa[d] + vb * xb[d]) + (vc * xc[d] + vd * xd[d])
                q += 4
            while q < q1:
                v = vals[perm[q]]
                xr = x[col[q]]
                for d in range(k):
                    o[d] += v * xr[d]
                q += 1

    @njit(cache=True)
    def csr_mm_ser(crow, col, vals, x, out):  # out zeroed by the caller
        k = x.shape[1]
        for i in range(crow.shape[0] - 1):
            o = out[i]
            for q in range(crow[i], crow[i + 1]):
                v = vals[q]
                xr = x[col[q]]
                for d in range(k):
                    o[d] += v * xr[d]

    @njit(cache=True)
    def coo_mm(rows, cols, vals, x, out):
        k = x.shape[1]
        for q in range(rows.shape[0]):
            o = out[rows[q]]
            xr = x[cols[q]]
            v = vals[q]
            for d in range(k):
                o[d] += v * xr[d]

    # reassociation lets LLVM vectorise the dot products (the only fast-math flags: NaN/inf
    # semantics stay IEEE); the summation order then differs from a serial loop by rounding only
    @njit(parallel=True, cache=True, fastmath={"reassoc", "contract"})
    def sddmm_par(rows, cols, left, right, out, bounds, zero):
        k = left.shape[1]
        for b in prange(bounds.shape[0] - 1):
            for q in range(bounds[b], bounds[b + 1]):
                lr = left[rows[q]]
                rr = right[cols[q]]
                acc = zero
                for d in range(k):
                    acc += lr[d] * rr[d]
                out[q] = acc

    @njit(cache=True, fastmath={"reassoc", "contract"})
    def sddmm_ser(rows, cols, left, right, out, zero):
        k = left.shape[1]
        for q in range(rows.shape[0]):
            lr = left[rows[q]]
            rr = right[cols[q]]
            acc = zero
            for d in range(k):
                acc += lr[d] * rr[d]
            out[q] = acc

    # float32/float64 (int64 pattern, C-contiguous): the same rows, each one call of the
    # register-sum intrinsic: the same bits as the loops above (CSR 2708^2, 13k nnz x 16, one
    # thread: 52 -> 21 us; x 7: 54 -> 30 us; torch's 27 / 22 us)
    @njit(parallel=True, cache=True)
    def csr_f_par(crow, col, perm, use_perm, vals, x, out, bounds):
        for b in prange(bounds.shape[0] - 1):
            for i in range(bounds[b], bounds[b + 1]):
                if use_perm:
                    wsum_row_p(x, col, perm, vals, crow[i], crow[i + 1], out, i)
                else:
                    wsum_row(x, col, vals, crow[i], crow[i + 1], out, i)

    @njit(cache=True)
    def csr_f_rows(crow, col, vals, x, out):
        for i in range(crow.shape[0] - 1):
            wsum_row(x, col, vals, crow[i], crow[i + 1], out, i)

    @njit(cache=True)
    def csr_f_rows_p(crow, col, perm, vals, x, out):
        for i in range(crow.shape[0] - 1):
            wsum_row_p(x, col, perm, vals, crow[i], crow[i + 1], out, i)

    @njit(cache=True)
    def pattern_t(crow, col, tcrow, tcol, tpos):  # CSR -> CSC: a stable counting sort by column
        for q in range(col.shape[0]):  # tcrow: zeros, one more than the columns
            tcrow[col[q] + 1] += 1
        for j in range(tcrow.shape[0] - 1):
            tcrow[j + 1] += tcrow[j]
        nxt = tcrow[:-1].copy()
        for i in range(crow.shape[0] - 1):
            for q in range(crow[i], crow[i + 1]):
                c = col[q]
                d = nxt[c]
                tcol[d] = i
                tpos[d] = q
                nxt[c] = d + 1

    class Kernels:
        pass

    ns = Kernels()
    ns.csr_mm_par, ns.csr_mm_ser, ns.coo_mm = csr_mm_par, csr_mm_ser, coo_mm
    ns.csr_mm_rows, ns.csr_mm_rows_p = csr_mm_rows, csr_mm_rows_p
    ns.sddmm_par, ns.sddmm_ser = sddmm_par, sddmm_ser
    ns.pattern_t = pattern_t
    ns.csr_f_par, ns.csr_f_rows, ns.csr_f_rows_p = csr_f_par, csr_f_rows, csr_f_rows_p
    return ns
