"""Conversions between dense, COO and CSR payloads, and coalescing.

All kernels take the Backend first and use ``be.xp`` only. Coalescing uses the packed-key sort
measured in PERF-NOTES.md (spike 4): the linear index is shifted left and the position packed
into the low bits, so one ``sort`` gives a *stable* argsort; duplicates are then summed in
input order, which makes the result deterministic.
"""

from .._memory import check_dense_alloc
from ._payload import COO, CSR
from ._rowsort import gather_segment_sum, row_bucket_coalesce, row_bucket_order
from ._runsum import coalesce_packed

__all__ = [
    "coalesce", "sorted_runs", "coo_to_dense", "dense_to_coo", "coo_to_csr", "csr_to_coo", "csr_to_dense",
    "dense_to_csr", "linear_index", "csr_row_indices", "fits_int64", "joint_keys", "decode_keys",
]


def linear_index(be, indices, sizes):
    """Row-major linear index of each column of ``indices`` within ``sizes`` (int64)."""
    xp = be.xp
    lin = xp.zeros(indices.shape[1], dtype=xp.int64)
    for d, s in enumerate(sizes):
        lin *= s
        lin += indices[d]
    return lin


def fits_int64(sizes):
    """True if every row-major linear index within ``sizes`` fits in int64 (else packing indices
    into one key, ``row * ncols + col``, would wrap around and make distinct entries collide)."""
    return max(_numel(sizes) - 1, 1).bit_length() <= 63


def joint_keys(be, indices_list, sizes):
    """Row-major order keys of the columns of several ``[ndim, n]`` index arrays, consistent
    between the arrays: ``(keys per array, table)``.

    Where the linear index fits in int64 the keys are linear indices and ``table`` is None.
    Otherwise (e.g. a ``(2**33, 2**33)`` shape) each key is the rank of its index column among the
    distinct columns in lexicographic order, and ``table`` holds those columns (``[ndim, K]``;
    column ``k`` has key ``k``): the same order and equality as linear indices, never colliding.
    :func:`decode_keys` maps keys back to index columns either way.
    """
    xp = be.xp
    if fits_int64(sizes):
        return [linear_index(be, i, sizes) for i in indices_list], None
    cat = xp.concatenate(indices_list, axis=1) if len(indices_list) > 1 else indices_list[0]
    n = cat.shape[1]
    rank = xp.zeros(n, dtype=xp.int64)
    table = cat[:, :0]
    if n:
        order, starts = _lex_runs(be, cat)
        new = xp.zeros(n, dtype=xp.int64)
        new[starts] = 1
        rank[order] = xp.cumsum(new) - 1
        table = cat[:, order[starts]]
    keys, at = [], 0
    for i in indices_list:
        keys.append(rank[at: at + i.shape[1]])
        at += i.shape[1]
    return keys, table


def decode_keys(be, keys, sizes, table):
    """Index columns (``[ndim, len(keys)]``) of keys made by :func:`joint_keys`."""
    return _unravel(be, keys, sizes) if table is None else table[:, keys]


def _unravel(be, lin, sizes):
    """Inverse of :func:`linear_index` (one ``divmod`` pass per dimension)."""
    xp = be.xp
    out = xp.empty((len(sizes), lin.shape[0]), dtype=xp.int64)
    rest = lin
    for d in range(len(sizes) - 1, 0, -1):
        s = sizes[d]
        if s:
            rest, out[d] = xp.divmod(rest, s)
        else:
            out[d] = 0
    if len(sizes):
        out[0] = rest
    return out


def _numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def coalesce(be, p):
    """Sort indices row-major and sum duplicates (values summed in input order)."""
    if p.coalesced:
        return p
    xp = be.xp
    nnz = p.nnz
    sizes = p.shape[: p.sparse_dim]
    if nnz == 0:
        return COO(p.indices, p.values, p.shape, True)
    numel_bits = max(_numel(sizes) - 1, 1).bit_length()
    shift = max(int(nnz - 1).bit_length(), 1)
    order = None
    if numel_bits + shift <= 63 and len(sizes) >= 2 and sizes[0] <= 2 * nnz + 1024:
        # where NumPy's sort is AVX-512: one sort of bit-packed keys, summed as the row buckets
        # below sum (same bits), ~2.5x faster than their cache-missing counting sort
        fast = coalesce_packed(be, p.indices, sizes, p.values)
        if fast is not None:
            return COO(fast[0], fast[1], p.shape, True)
    if numel_bits <= 63:
        lin = linear_index(be, p.indices, sizes)
        if len(sizes) >= 2 and sizes[0] <= 2 * nnz + 1024:  # row buckets fit in O(nnz) memory
            rest = linear_index(be, p.indices[1:], sizes[1:]) if len(sizes) > 2 else p.indices[1]
            fused = row_bucket_coalesce(be, p.indices[0], rest, p.values, sizes[0])
            if fused is not None:
                r, c, v = fused
                idx = xp.concatenate([r[None], _unravel(be, c, sizes[1:])]) if len(sizes) > 2 \
                    else xp.stack([r, c])
                return COO(idx, v, p.shape, True)
            order = row_bucket_order(be, p.indices[0], rest, sizes[0])
    if order is not None:
        sorted_lin = lin[order]
    elif numel_bits + shift <= 63:
        keys = (lin << shift) | xp.arange(nnz, dtype=xp.int64)
        keys.sort()
        order = keys & ((1 << shift) - 1)
        sorted_lin = keys >> shift
    elif numel_bits <= 63:  # keys too wide to pack: a stable argsort (slower, still deterministic)
        order = xp.argsort(lin, kind="stable")
        sorted_lin = lin[order]
    else:  # the linear index itself overflows int64: sort the index rows lexicographically
        order, starts = _lex_runs(be, p.indices)
        srt = p.indices[:, order]
        vals = p.values[order]
        if starts.shape[0] != nnz:
            vals = _segment_sum(be, vals, starts)
        return COO(srt[:, starts], vals, p.shape, True)
    if nnz > 1:
        new = xp.empty(nnz, dtype=bool)
        new[0] = True
        xp.not_equal(sorted_lin[1:], sorted_lin[:-1], out=new[1:])
        starts = xp.flatnonzero(new)
    else:
        starts = xp.zeros(1, dtype=xp.int64)
    vals = None
    if p.values.ndim >= 2 and starts.shape[0] != nnz:  # hybrid: gather and sum in one pass
        flat = gather_segment_sum(be, p.values.reshape(nnz, -1), order, starts)
        if flat is not None:
            vals = flat.reshape((starts.shape[0],) + p.values.shape[1:])
    if vals is None:
        vals = p.values[order]
        if starts.shape[0] != nnz:
            vals = _segment_sum(be, vals, starts)
    return COO(_unravel(be, sorted_lin[starts], sizes), vals, p.shape, True)


def sorted_runs(be, p):
    """``(order, starts)``: a stable argsort of ``p``'s entries by index (row-major) and where
    each run of equal indices begins in that order. For reductions other than coalesce's sum."""
    xp = be.xp
    sizes = p.shape[: p.sparse_dim]
    if max(_numel(sizes) - 1, 1).bit_length() > 63:
        return _lex_runs(be, p.indices)
    lin = linear_index(be, p.indices, sizes)
    order = xp.argsort(lin, kind="stable")
    keys = lin[order]
    new = xp.empty(p.nnz, dtype=bool)
    new[0] = True
    xp.not_equal(keys[1:], keys[:-1], out=new[1:])
    return order, xp.flatnonzero(new)


def _lex_runs(be, indices):
    """``sorted_runs`` by sorting the index rows lexicographically (linear index overflows)."""
    xp = be.xp
    order = xp.lexsort(indices[::-1])
    srt = indices[:, order]
    new = xp.empty(order.shape[0], dtype=bool)
    new[0] = True
    xp.any(srt[:, 1:] != srt[:, :-1], axis=0, out=new[1:])
    return order, xp.flatnonzero(new)


def _segment_sum(be, vals, starts):
    """Sum consecutive runs of rows of ``vals`` that begin at ``starts``."""
    xp = be.xp
    if vals.dtype == bool:
        return xp.logical_or.reduceat(vals, starts, axis=0)
    return xp.add.reduceat(vals, starts, axis=0, dtype=vals.dtype)  # int32 stays int32 (NumPy: int64)


def coo_to_dense(be, p):
    xp = be.xp
    check_dense_alloc(p.shape, p.values.dtype, "to_dense()")
    out = xp.zeros(p.shape, dtype=p.values.dtype)
    if p.nnz == 0:
        return out
    q = coalesce(be, p)
    if q.indices.shape[0]:
        out[tuple(q.indices)] = q.values
    else:  # no sparse dims: the one (summed) stored value is the whole tensor
        out[...] = q.values[0]
    return out


def dense_to_coo(be, x, sparse_dim=None):
    """The nonzero pattern of ``x`` over its first ``sparse_dim`` dims (all dims by default)."""
    xp = be.xp
    sd = x.ndim if sparse_dim is None else sparse_dim
    if sd == x.ndim:
        nz = xp.nonzero(x)
        idx = xp.stack(nz).astype(xp.int64) if nz else xp.zeros((0, 1 if x.size else 0), xp.int64)
        if x.ndim == 0:
            idx = xp.zeros((0, 1 if x != 0 else 0), dtype=xp.int64)
            vals = x.reshape(1)[: idx.shape[1]]
        else:
            vals = x[nz]
    else:
        flat = x.reshape(x.shape[:sd] + (-1,)) if x.size else x.reshape(x.shape[:sd] + (0,))
        mask = (flat != 0).any(axis=-1) if flat.shape[-1] else xp.zeros(x.shape[:sd], dtype=bool)
        nz = xp.nonzero(mask)
        idx = xp.stack(nz).astype(xp.int64) if sd else xp.zeros((0, 1), xp.int64)
        vals = x[nz] if sd else x.reshape((1,) + x.shape)
    return COO(idx, vals.copy(), x.shape, True)


def csr_row_indices(be, crow):
    """Row index of every stored element of a 2-D CSR (expands crow_indices)."""
    xp = be.xp
    m = crow.shape[0] - 1
    return xp.repeat(xp.arange(m, dtype=xp.int64), xp.diff(crow).astype(xp.int64))


def coo_to_csr(be, p, index_dtype=None):
    """A 2-D (or 3-D batched) COO -> CSR. Coalesces first (CSR columns are sorted and unique)."""
    xp = be.xp
    if p.dense_dim:
        raise RuntimeError(
            "to_sparse_csr(): hybrid COO tensors (with dense dimensions) cannot be converted to "
            "CSR; sparsetorch's CSR holds scalar values only"
        )
    if p.sparse_dim not in (2, 3):
        raise RuntimeError(
            f"to_sparse_csr(): expected a 2-D or 3-D (batched) tensor, got {p.sparse_dim}-D; use "
            "COO for other dimensions"
        )
    # CSR holds one row pointer per row (per batch): a huge row count is refused, not allocated
    rows = (p.shape[0] + 1,) if p.sparse_dim == 2 else (p.shape[0], p.shape[1] + 1)
    check_dense_alloc(rows, xp.dtype(xp.int64), "to_sparse_csr(): the row pointers (crow_indices)")
    q = coalesce(be, p)
    idt = index_dtype or xp.int64
    if p.sparse_dim == 2:
        m = p.shape[0]
        counts = xp.bincount(q.indices[0], minlength=m) if q.nnz else xp.zeros(m, xp.int64)
        crow = xp.zeros(m + 1, dtype=idt)
        xp.cumsum(counts, out=crow[1:])
        return CSR(crow, q.indices[1].astype(idt), q.values, p.shape)
    b, m, n = p.shape
    counts = xp.bincount(q.indices[0], minlength=b) if q.nnz else xp.zeros(b, xp.int64)
    if q.nnz and bool((counts != counts[0]).any()):
        raise RuntimeError(
            "to_sparse_csr(): batched CSR needs the same number of specified elements in every "
            f"batch, but the batches have {counts.tolist()}"
        )
    per = int(counts[0]) if b else 0
    row_counts = xp.zeros((b, m), dtype=xp.int64)
    if q.nnz:
        xp.add.at(row_counts, (q.indices[0], q.indices[1]), 1)
    crow = xp.zeros((b, m + 1), dtype=idt)
    xp.cumsum(row_counts, axis=1, out=crow[:, 1:])
    return CSR(crow, q.indices[2].reshape(b, per).astype(idt), q.values.reshape(b, per), p.shape)


def csr_to_coo(be, p):
    xp = be.xp
    if p.crow.ndim == 1:
        rows = csr_row_indices(be, p.crow)
        idx = xp.stack([rows, p.col.astype(xp.int64)])
        return COO(idx, p.values, p.shape, True)
    b = p.crow.shape[0]
    parts = []
    for i in range(b):
        rows = csr_row_indices(be, p.crow[i])
        parts.append(xp.stack([xp.full(rows.shape[0], i, dtype=xp.int64), rows, p.col[i].astype(xp.int64)]))
    idx = xp.concatenate(parts, axis=1) if parts else xp.zeros((3, 0), xp.int64)
    return COO(idx, p.values.reshape(-1), p.shape, True)


def csr_to_dense(be, p):
    return coo_to_dense(be, csr_to_coo(be, p))


def dense_to_csr(be, x, index_dtype=None):
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"to_sparse_csr(): expected a 2-D or 3-D (batched) dense tensor, got {x.ndim}-D"
        )
    return coo_to_csr(be, dense_to_coo(be, x), index_dtype)
