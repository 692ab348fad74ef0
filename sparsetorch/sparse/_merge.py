"""Pattern merges on payloads: the union (``a + beta * b``) and the intersection of two sparse
payloads of one shape. Used by the binary elementwise ops (``_elementwise.py``).

The union keeps every position of both patterns, also where the sum is 0 (a stored zero, or
``x - x``): the pattern of a result never depends on its values, so gradients and later ops see
every input position. (SciPy's ``A + B`` drops zero sums; torch keeps them, as we do.)

Speed, on the CPU (``benchmarks/bench_sparse.py``, 2 x 3.3M entries):

- 2-D CSR and 2-D COO with scalar values: a numba two-pointer merge per row, one pass, about
  as fast as SciPy's C++ ``csr_plus_csr`` (numba is imported lazily; ``sparse._spmm.use_numba``
  switches it off).
- Without numba: SciPy's merge on complex values ``v + 1j`` (a nonzero imaginary marker, so no
  sum is dropped), about 1.5x SciPy's float merge; tiny inputs and other backends: a stable
  argsort of the concatenated linear keys (a merge of two sorted runs) in ``be.xp``.
- Two payloads with the same pattern (the same index buffers, e.g. accumulated gradients) add
  their values, O(nnz) with no merge.
"""

from .. import _jit
from . import _convert as C
from ._payload import COO, CSR

__all__ = ["coo_add", "csr_add", "intersect", "keys_of", "rows_of"]

_SCIPY_MIN_NNZ = 4096  # below this, building SciPy objects (~20 us each) costs more than it saves


def rows_of(be, p):
    """Row of every stored entry of a 2-D CSR payload (cached on the pattern, as ``_spmm``)."""
    c = p._cache
    if c is None:
        c = p._cache = {}
    r = c.get("rows")
    if r is None:
        r = c["rows"] = C.csr_row_indices(be, p.crow)
    return r


def keys_of(be, p):
    """Row-major linear index of the stored entries of a COO or 2-D CSR payload."""
    if p.__class__ is CSR:
        k = rows_of(be, p) * p.shape[1]
        k += p.col
        return k
    if p.indices.shape[0] == 2:
        k = p.indices[0] * p.shape[1]
        k += p.indices[1]
        return k
    return C.linear_index(be, p.indices, p.shape[: p.indices.shape[0]])


def _same_pattern(a, b):
    if a.__class__ is COO:
        return a.indices is b.indices
    return a.col is b.col and a.crow is b.crow


def _signed(v, beta):
    return v if beta == 1 else -v


# ---- numba kernels ----

def _numba():
    return _jit.kernels("merge", _build_numba, 3.0)


def _build_numba():
    try:
        from numba import njit
    except ImportError:
        return False

    @njit(cache=True, nogil=True)
    def csr_union(crow_a, col_a, va, crow_b, col_b, vb, crow, col, val):
        k = 0
        crow[0] = 0
        for i in range(crow_a.shape[0] - 1):
            pa, ea = crow_a[i], crow_a[i + 1]
            pb, eb = crow_b[i], crow_b[i + 1]
            while pa < ea and pb < eb:
                ca, cb = col_a[pa], col_b[pb]
                if ca < cb:
                    col[k] = ca
                    val[k] = va[pa]
                    pa += 1
                elif cb < ca:
                    col[k] = cb
                    val[k] = vb[pb]
                    pb += 1
                else:
                    col[k] = ca
                    val[k] = va[pa] + vb[pb]
                    pa += 1
                    pb += 1
                k += 1
            while pa < ea:
                col[k] = col_a[pa]
                val[k] = va[pa]
                pa += 1
                k += 1
            while pb < eb:
                col[k] = col_b[pb]
                val[k] = vb[pb]
                pb += 1
                k += 1
            crow[i + 1] = k
        return k

    @njit(cache=True, nogil=True)
    def coo2_union(ra, ca, va, rb, cb, vb, ro, co, val):
        na, nb = ra.shape[0], rb.shape[0]
        pa = pb = k = 0
        while pa < na and pb < nb:
            if ra[pa] < rb[pb] or (ra[pa] == rb[pb] and ca[pa] < cb[pb]):
                ro[k] = ra[pa]
                co[k] = ca[pa]
                val[k] = va[pa]
                pa += 1
            elif ra[pa] == rb[pb] and ca[pa] == cb[pb]:
                ro[k] = ra[pa]
                co[k] = ca[pa]
                val[k] = va[pa] + vb[pb]
                pa += 1
                pb += 1
            else:
                ro[k] = rb[pb]
                co[k] = cb[pb]
                val[k] = vb[pb]
                pb += 1
            k += 1
        while pa < na:
            ro[k] = ra[pa]
            co[k] = ca[pa]
            val[k] = va[pa]
            pa += 1
            k += 1
        while pb < nb:
            ro[k] = rb[pb]
            co[k] = cb[pb]
            val[k] = vb[pb]
            pb += 1
            k += 1
        return k

    return {"csr": csr_union, "coo2": coo2_union}


# ---- union ----

def _union_keys(be, ka, va, kb, vb):
    """Sorted unique keys of ``ka`` and ``kb`` (each sorted, unique) and the sums on them: a
    stable argsort of the concatenation (a merge of two sorted runs), then equal keys summed."""
    xp = be.xp
    k = xp.concatenate((ka, kb))
    order = k.argsort(kind="stable")
    sk = k[order]
    vals = xp.concatenate((va, vb))[order]
    n = sk.shape[0]
    if n < 2:
        return sk, vals
    dup = (sk[1:] == sk[:-1]).nonzero()[0]
    if dup.shape[0] == 0:
        return sk, vals
    dup += 1
    keep = xp.ones(n, dtype=bool)
    keep[dup] = False
    out = vals[keep]
    # the j-th duplicate (at sorted position dup[j]) belongs to output row dup[j] - j - 1
    rows = dup - xp.arange(1, dup.shape[0] + 1)
    if out.dtype == bool:
        out[rows] |= vals[dup]
    else:
        out[rows] += vals[dup]
    return sk[keep], out


def _crow_of(be, rows, m):
    xp = be.xp
    crow = xp.zeros(m + 1, dtype=xp.int64)
    if rows.shape[0]:
        xp.cumsum(xp.bincount(rows, minlength=m), out=crow[1:])
    return crow


def _sp_csr(be, crow, col, data, shape):
    """A SciPy CSR array on the given buffers (no copies, no index-dtype downcast)."""
    m = be.sp.csr_array(shape, dtype=data.dtype)
    m.data, m.indices, m.indptr = data, col, crow
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m


def _marked(xp, v, mark):
    """``v + mark * 1j`` in the complex dtype of ``v`` (two strided writes: faster than ``v + 1j``)."""
    c = xp.empty(v.shape[0], dtype=xp.complex64 if v.dtype == xp.float32 else xp.complex128)
    c.real = v
    c.imag = mark
    return c


def _csr_union_scipy(be, crow_a, col_a, va, crow_b, col_b, vb, shape):
    """SciPy's C++ row merge, with an imaginary marker on every value so that no sum is 0."""
    xp = be.xp
    r = _sp_csr(be, crow_a, col_a, _marked(xp, va, 1), shape) + _sp_csr(
        be, crow_b, col_b, _marked(xp, vb, 2), shape)
    idt = crow_a.dtype
    return (r.indptr.astype(idt, copy=False), r.indices.astype(idt, copy=False),
            xp.ascontiguousarray(r.data.real))


def _compiled(be, a, b):
    """The numba kernels if they apply to these payloads (CPU, scalar numeric values)."""
    if be.name != "cpu" or a.values.ndim != 1 or a.values.dtype.kind not in "fiucb":
        return None
    return _numba()


def _scipy_ok(be, a, b):
    # SciPy's merge builds row pointers: not for a COO whose row count dwarfs its entries
    return (be.name == "cpu" and a.values.ndim == 1 and a.values.dtype.kind == "f"
            and a.nnz + b.nnz >= _SCIPY_MIN_NNZ
            and (a.__class__ is CSR or a.shape[0] <= 4 * (a.nnz + b.nnz) + 65536))


def coo_add(be, a, b, beta):
    """Coalesced COO ``a + beta * b`` of two COO payloads (same shape and sparse_dim; same
    dtype)."""
    xp = be.xp
    a, b = C.coalesce(be, a), C.coalesce(be, b)
    if _same_pattern(a, b):
        return a.with_values(a.values + b.values if beta == 1 else a.values - b.values)
    sd = a.sparse_dim
    vb = _signed(b.values, beta)
    nb = _compiled(be, a, b) if sd == 2 else None
    if nb is not None:
        n = a.nnz + b.nnz
        buf = xp.empty(2 * n, dtype=xp.int64)  # rows in buf[:k], then the columns moved to buf[k:2k]
        cols = xp.empty(n, dtype=xp.int64)
        val = xp.empty(n, dtype=a.values.dtype)
        k = nb["coo2"](a.indices[0], a.indices[1], a.values, b.indices[0], b.indices[1], vb, buf, cols, val)
        buf[k: 2 * k] = cols[:k]
        return COO(buf[: 2 * k].reshape(2, k), val[:k], a.shape, True)
    if sd == 2 and _scipy_ok(be, a, b):
        m = a.shape[0]
        crow, col, vals = _csr_union_scipy(
            be, _crow_of(be, a.indices[0], m), a.indices[1], a.values,
            _crow_of(be, b.indices[0], m), b.indices[1], vb, a.shape)
        idx = xp.empty((2, col.shape[0]), dtype=xp.int64)
        idx[0] = C.csr_row_indices(be, crow)
        idx[1] = col
        return COO(idx, vals, a.shape, True)
    if not C.fits_int64(a.shape[:sd]):  # packed keys would overflow: ranks (lexicographic)
        (ka, kb), table = C.joint_keys(be, [a.indices, b.indices], a.shape[:sd])
        sk, vals = _union_keys(be, ka, a.values, kb, vb)
        return COO(table[:, sk], vals, a.shape, True)
    sk, vals = _union_keys(be, keys_of(be, a), a.values, keys_of(be, b), vb)
    if sd == 2:
        idx = xp.empty((2, sk.shape[0]), dtype=xp.int64)
        xp.divmod(sk, a.shape[1], out=(idx[0], idx[1]))
    else:
        idx = C._unravel(be, sk, a.shape[:sd])
    return COO(idx, vals, a.shape, True)


def csr_add(be, a, b, beta):
    """CSR ``a + beta * b`` (same shape and dtype; batched CSR goes through COO)."""
    xp = be.xp
    if _same_pattern(a, b):
        return a.with_values(a.values + b.values if beta == 1 else a.values - b.values)
    if a.crow.ndim != 1:
        u = coo_add(be, C.csr_to_coo(be, a), C.csr_to_coo(be, b), beta)
        return C.coo_to_csr(be, u, a.crow.dtype)
    vb = _signed(b.values, beta)
    nb = _compiled(be, a, b)
    idt = a.crow.dtype
    if nb is not None:
        n = a.nnz + b.nnz
        crow = xp.empty(a.crow.shape[0], dtype=idt)
        col = xp.empty(n, dtype=a.col.dtype)
        val = xp.empty(n, dtype=a.values.dtype)
        k = nb["csr"](a.crow, a.col, a.values, b.crow, b.col.astype(a.col.dtype, copy=False), vb, crow, col, val)
        return CSR(crow, col[:k], val[:k], a.shape)
    if _scipy_ok(be, a, b):
        return CSR(*_csr_union_scipy(be, a.crow, a.col, a.values, b.crow, b.col, vb, a.shape), a.shape)
    m, n = a.shape
    if not C.fits_int64(a.shape):  # packed keys would overflow: the lexicographic COO path
        u = coo_add(be, C.csr_to_coo(be, a), C.csr_to_coo(be, b), beta)
        return C.coo_to_csr(be, u, idt)
    sk, vals = _union_keys(be, keys_of(be, a), a.values, keys_of(be, b), vb)
    rows, col = xp.divmod(sk, n)
    return CSR(_crow_of(be, rows, m).astype(idt, copy=False), col.astype(idt, copy=False), vals, a.shape)


# ---- intersection ----

def intersect(be, a, b):
    """COO payload of the positions stored in both ``a`` and ``b`` (with ``a``'s values there);
    either may be COO or CSR."""
    xp = be.xp
    a = C.coalesce(be, a if a.__class__ is COO else C.csr_to_coo(be, a))
    b = C.coalesce(be, b if b.__class__ is COO else C.csr_to_coo(be, b))
    if C.fits_int64(a.shape[: a.sparse_dim]):
        ka, kb = keys_of(be, a), keys_of(be, b)
    else:  # packed keys would overflow: ranks in lexicographic order
        (ka, kb), _ = C.joint_keys(be, [a.indices, b.indices], a.shape[: a.sparse_dim])
    if kb.shape[0] == 0 or ka.shape[0] == 0:
        hit = xp.zeros(ka.shape[0], dtype=bool)
    else:
        pos = xp.minimum(xp.searchsorted(kb, ka), kb.shape[0] - 1)
        hit = kb[pos] == ka
    return COO(a.indices[:, hit], a.values[hit], a.shape, True)
