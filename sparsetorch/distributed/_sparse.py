"""Sparse all-reduce of COO (hybrid and uncoalesced included) and CSR tensors.

Each rank contributes its stored entries; the result equals the dense all-reduce of the
densified tensors, in O(total nnz) memory, never O(dense size):

1. all-gather (blocking, 16 bytes a rank) each rank's ``nnz`` with a fingerprint of shape,
   layout and dtype, so that a mismatch fails on every rank instead of mixing garbage;
2. all-gather-v the indices (``[nnz, sparse_dim]`` rows) and the values (``[nnz, *dense]``)
   with those variable counts, in rank order;
3. reduce locally: SUM/AVG merge the ranks' sorted runs (each rank coalesced its part before
   sending) and add the rows in rank order, so every rank gets bit-identical values (numba
   k-way merge, ``_merge.py``; the coalesce kernel otherwise); MAX/MIN/PRODUCT group equal
   indices and account for the *implicit zeros* of ranks that did not store a position (the
   result stored at a position held by fewer than ``world_size`` ranks is ``max(.., 0)``,
   ``min(.., 0)`` or ``0``), which is what the dense all-reduce of the densified tensors gives.

The reduced payload replaces the tensor's payload in place (torch's ``all_reduce`` contract).
"""

from .. import _dispatch
from .._layout import sparse_coo
from ..sparse import _convert as C
from ..sparse._payload import COO
from ._merge import merge_sum
from ._work import RedOpType

__all__ = ["clear_buffers", "sparse_all_reduce_steps"]


def _fingerprint(t):
    # only ints: their tuple hashes are the same in every process (str hashes are randomised)
    p = t._data
    dims = (p.sparse_dim, p.dense_dim) if t.layout is sparse_coo else (-1, p.batch_dim)
    return hash((tuple(p.shape), dims, p.values.dtype.num)) & 0x7FFFFFFFFFFF


def _check_op(t, op, fname):
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM):
        raise RuntimeError(f"{fname}(): ReduceOp.{op.name} is not supported for sparse tensors")
    if op is RedOpType.AVG and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(
            f"{fname}(): ReduceOp.AVG needs a floating-point tensor, got {t.dtype.name}; "
            "use ReduceOp.SUM and divide, or convert with .float()"
        )
    if op in (RedOpType.MIN, RedOpType.MAX) and t.dtype.is_complex:
        raise RuntimeError(f"{fname}(): ReduceOp.{op.name} is not defined for complex tensors")
    if t.layout is not sparse_coo and t._data.batch_dim:
        raise NotImplementedError(
            f"{fname}(): batched CSR tensors are not supported (ranks' patterns may differ per "
            "batch); all-reduce each batch, or use COO"
        )


def sparse_all_reduce_steps(be, t, op, nb, fname="all_reduce"):
    """The steps (see ``_work``) of the in-place sparse all-reduce of ``t`` over backend ``be``."""
    _check_op(t, op, fname)
    bk = _dispatch.get_backend(t.device)
    xp = bk.xp
    csr = t.layout is not sparse_coo
    coo = C.csr_to_coo(bk, t._data) if csr else t._data
    # coalesce locally first: duplicates (an Embedding gradient repeats rows) are not sent, each
    # rank's part is a sorted run (merged below), and MAX/MIN/PRODUCT see at most one entry
    # per position and rank (the others hold an implicit zero)
    coo = C.coalesce(bk, coo)
    sd = coo.sparse_dim
    row = 1
    for s in coo.values.shape[1:]:
        row *= s
    world = be.size
    meta = xp.asarray([coo.nnz, _fingerprint(t)], dtype=xp.int64)
    every = xp.empty(2 * world, dtype=xp.int64)
    # blocking on purpose (16 bytes a rank): every MPI call of the collective is then issued
    # by the call itself, so ranks issue them in program order however late they wait
    be.allgather(meta, every, False)
    every = _host(every).reshape(world, 2)
    if len(set(every[:, 1].tolist())) != 1:
        raise RuntimeError(
            f"{fname}(): the sparse tensors differ in shape, sparse/dense dims, layout or dtype "
            f"across ranks (this rank: {t.layout.name} {list(t.shape)} {t.dtype.name})"
        )
    counts = every[:, 0].tolist()
    total = sum(counts)
    idx_send = xp.ascontiguousarray(coo.indices.T) if sd != 1 else coo.indices.reshape(-1)
    vals_send = xp.ascontiguousarray(coo.values)
    idx_buf = _take(bk, total * sd, xp.int64)
    vals_buf = _take(bk, total * row, coo.values.dtype)
    idx = idx_buf[: total * sd].reshape(total, sd)
    vals = vals_buf[: total * row].reshape((total,) + tuple(coo.values.shape[1:]))
    reqs = be.allgatherv(idx_send, idx, [c * sd for c in counts], nb)
    reqs = reqs + be.allgatherv(vals_send, vals, [c * row for c in counts], nb)
    yield reqs
    idx = xp.ascontiguousarray(idx.T) if sd != 1 else idx.reshape(1, total)
    merged = COO(idx, vals, coo.shape, world == 1 and coo.coalesced)
    if op in (RedOpType.SUM, RedOpType.AVG):
        out = _sum_runs(bk, merged, counts)
        if op is RedOpType.AVG:
            out = COO(out.indices, _divide(xp, out.values, world), out.shape, True)
    else:
        out = _reduce_union(bk, merged, op, world)
    # the receive buffers go back to the pool: the result must not live in them
    if xp.may_share_memory(out.values, vals_buf) or xp.may_share_memory(out.indices, idx_buf):
        out = COO(out.indices.copy(), out.values.copy(), out.shape, out.coalesced)
    _give(bk, idx_buf)
    _give(bk, vals_buf)
    if csr:
        out = C.coo_to_csr(bk, out, t._data.crow.dtype)
    t._data = out
    _dispatch.bump_version(t)


def _sum_runs(bk, p, counts):
    """Sum the ranks' coalesced runs of ``p`` (a k-way merge; the coalesce kernel if the
    merge kernel can't be used)."""
    xp = bk.xp
    sizes = p.shape[: p.sparse_dim]
    numel = 1
    for s in sizes:
        numel *= s
    if p.nnz and numel < 2 ** 63:
        keys = p.indices[0] if p.sparse_dim == 1 else C.linear_index(bk, p.indices, sizes)
        starts = xp.zeros(len(counts) + 1, dtype=xp.int64)
        xp.cumsum(xp.asarray(counts, dtype=xp.int64), out=starts[1:])
        got = merge_sum(bk, keys, p.values.reshape(p.nnz, -1), starts)
        if got is not None:
            ukeys, vals = got
            idx = ukeys[None] if p.sparse_dim == 1 else C._unravel(bk, ukeys, sizes)
            return COO(idx, vals.reshape((ukeys.shape[0],) + p.values.shape[1:]), p.shape, True)
    return C.coalesce(bk, p)


# ---- receive buffers ----
# Reused across calls on the CPU: first-touch page faults of fresh buffers cost about as much
# as the all-gather itself (~18 ms for 40 MB here). A buffer is taken for the duration of one
# collective, so concurrent async all-reduces never share one. Freed by clear_buffers().
_POOL = []
_POOL_MAX = 4


def _take(bk, n, dtype):
    xp = bk.xp
    if bk.name == "cpu":
        for i, b in enumerate(_POOL):
            if b.dtype == dtype and b.shape[0] >= n:
                return _POOL.pop(i)
    return xp.empty(max(n, 1), dtype=dtype)


def _give(bk, buf):
    if bk.name == "cpu":
        _POOL.append(buf)
        if len(_POOL) > _POOL_MAX:
            _POOL.sort(key=lambda b: b.nbytes)
            _POOL.pop(0)


def clear_buffers():
    """Drop the pooled receive buffers (``destroy_process_group`` calls this)."""
    _POOL.clear()


def _host(a):
    return a.get() if hasattr(a, "get") else a


def _divide(xp, v, n):
    if v.dtype.kind in "fc":
        return xp.true_divide(v, v.dtype.type(n), out=v if v.flags.writeable else None)
    return v // n


def _reduce_union(bk, p, op, world):
    """Group equal indices of ``p`` (at most one entry per rank each) and reduce with ``op``."""
    xp = bk.xp
    nnz = p.nnz
    if nnz == 0:
        return COO(p.indices, p.values, p.shape, True)
    order, starts = C.sorted_runs(bk, p)
    ufunc = {RedOpType.MAX: xp.maximum, RedOpType.MIN: xp.minimum,
             RedOpType.PRODUCT: xp.multiply}[op]
    vals = p.values[order]
    if vals.dtype == bool and op is RedOpType.PRODUCT:
        ufunc = xp.logical_and
    red = ufunc.reduceat(vals, starts, axis=0)
    held = xp.diff(xp.append(starts, nnz))  # how many ranks stored each position
    partial = held < world  # the other ranks hold an implicit zero there
    if bool(partial.any()):
        zero = xp.zeros((), dtype=red.dtype)
        if op is RedOpType.PRODUCT:
            red[partial] = zero
        else:
            red[partial] = ufunc(red[partial], zero)
    idx = p.indices[:, order[starts]]
    return COO(xp.ascontiguousarray(idx), red, p.shape, True)
