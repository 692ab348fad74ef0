"""Reductions of sparse tensors: ``sum`` / ``sparse.sum``, ``mean``, ``amax`` / ``amin``, and
``sparse.softmax`` / ``sparse.log_softmax``.

Semantics (chosen to match the dense answer; documented in the public docstrings):

- ``sum``: over all dims -> a dense 0-d tensor. Over some dims of a COO tensor -> COO with the
  remaining dims (the stored slices), as ``torch.sum(coo, dim)``; when only dense dims remain ->
  dense, as ``torch.sparse.sum``. A CSR tensor over one dim -> a dense tensor (torch raises for
  ``keepdim=False``); with ``keepdim=True`` -> CSR, as torch.
- ``mean``: ``sum / n`` with ``n`` counting the implicit zeros (the dense mean); same layouts.
- ``amax`` / ``amin``: over ALL entries, implicit zeros included, so the result equals the dense
  answer (torch has no sparse amax). Same layouts as ``sum``. At ties the gradient is split
  evenly among the tied entries (implicit zeros count, their share is dropped: masked).
- ``sparse.softmax`` / ``log_softmax``: unspecified entries are -inf (torch.sparse): the result
  has the input's pattern, slices with no stored entry stay empty.

Everything is a composition of differentiable ops: ``values`` / ``with_values`` and two private
segment ops (sum and max over groups of stored entries), so gradients are masked and O(nnz).
"""

from .. import _dtype as D
from .._dispatch import call, composite, defop, wrap
from .._memory import check_dense_alloc
from .._layout import sparse_coo, sparse_csr, strided
from ..sparse import _convert as C
from ..sparse._payload import COO, CSR
from ..sparse._runsum import run_starts
from .sparse_values import stored
from ._util import backend_of, check_tensor, norm_dim, quiet
from .sparse_core import coalesce, to_sparse_coo, to_sparse_csr, values, with_values

__all__ = ["sparse_log_softmax", "sparse_softmax", "sparse_sum"]

O, R, S = (sparse_coo,), (sparse_csr,), (strided,)


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


# ---- segments: which stored entries reduce into which output row ----

class Segments:
    """Which stored entries reduce into which output row.

    ``starts``: the entries are sorted by group, group ``g`` (nonempty) starts at ``starts[g]``
    and is written to output row ``slots[g]`` (``g`` when ``slots`` is None). Otherwise
    ``ids[i]`` is the output row of entry ``i``. ``n_out``: the number of output rows.
    """

    __slots__ = ("counts_", "ids_", "n_out", "nnz", "slots", "starts")

    def __init__(self, n_out, nnz, starts=None, ids=None, slots=None):
        self.n_out, self.nnz, self.starts, self.slots = n_out, nnz, starts, slots
        self.ids_, self.counts_ = ids, None

    def _group_sizes(self, be):
        if self.starts.shape[0] == 0:
            return self.starts
        return be.xp.diff(self.starts, append=self.nnz)

    def ids(self, be):
        """Output row of every entry (the gather index of the backward)."""
        if self.ids_ is None:
            xp = be.xp
            rows = self.slots if self.slots is not None else xp.arange(self.starts.shape[0], dtype=xp.int64)
            self.ids_ = xp.repeat(rows, self._group_sizes(be))
        return self.ids_

    def counts(self, be):
        """Stored entries per output row."""
        if self.counts_ is None:
            xp = be.xp
            if self.starts is None:
                c = xp.bincount(self.ids_, minlength=self.n_out)
            elif self.slots is None:
                c = self._group_sizes(be)
            else:
                c = xp.zeros(self.n_out, dtype=xp.int64)
                c[self.slots] = self._group_sizes(be)
            self.counts_ = c
        return self.counts_

    def ids_tensor(self, like):
        return wrap(self.ids(backend_of(like)), D.int64, like.device, strided)


def _scatter_rows(xp, seg, g, fill):
    """Per-group results ``g`` placed at their output rows (``fill`` elsewhere)."""
    if seg.slots is None:
        return g
    out = xp.full((seg.n_out,) + g.shape[1:], fill, dtype=g.dtype)
    out[seg.slots] = g
    return out


def _segment_sum_kernel(be, v, seg):
    xp = be.xp
    if v.dtype in D.REDUCED_NP:  # float32 accumulator, one rounding (as torch)
        return _segment_sum_kernel(be, v.astype(xp.float32), seg).astype(v.dtype)
    if seg.starts is not None:
        g = (xp.add.reduceat(v, seg.starts, axis=0) if seg.starts.shape[0]
             else xp.zeros((0,) + v.shape[1:], dtype=v.dtype))
        return _scatter_rows(xp, seg, g, 0)
    if seg.n_out == 1:
        return v.sum(axis=0, keepdims=True)
    check_dense_alloc((seg.n_out,) + v.shape[1:], v.dtype, "sum() of a sparse tensor")
    if v.ndim == 1 and v.dtype.kind == "f":
        return xp.bincount(seg.ids_, weights=v, minlength=seg.n_out).astype(v.dtype, copy=False)
    out = xp.zeros((seg.n_out,) + v.shape[1:], dtype=v.dtype)
    xp.add.at(out, seg.ids_, v)
    return out


_segment_sum_op = defop(
    "_segment_sum", {S: _segment_sum_kernel}, params=("seg",),
    grads={"input": lambda grad, seg: grad.index_select(0, seg.ids_tensor(grad))},
)


def segment_sum(v, seg):
    return call(_segment_sum_op, (v,), (seg,))


def _lowest(xp, dt, is_max):
    if dt.kind == "f" or dt == D.bfloat16.np:
        return -xp.inf if is_max else xp.inf
    info = xp.iinfo(dt)
    return info.min if is_max else info.max


def _segment_max_kernel(be, v, seg, is_max, implicit):
    """Max (min) of each output row's stored values, and 0 where the row has implicit entries
    (``implicit``: their number per output row; None: none)."""
    xp = be.xp
    uf = xp.maximum if is_max else xp.minimum
    low = _lowest(xp, v.dtype, is_max)
    if seg.starts is not None:
        g = (uf.reduceat(v, seg.starts, axis=0) if seg.starts.shape[0]
             else xp.zeros((0,) + v.shape[1:], dtype=v.dtype))
        out = _scatter_rows(xp, seg, g, low)
    elif seg.n_out == 1:
        out = ((v.max(axis=0) if is_max else v.min(axis=0))[None] if v.shape[0]
               else xp.full((1,) + v.shape[1:], low, dtype=v.dtype))
    else:
        out = xp.full((seg.n_out,) + v.shape[1:], low, dtype=v.dtype)
        uf.at(out, seg.ids_, v)
    if implicit is not None:
        has = (implicit > 0).reshape((-1,) + (1,) * (out.ndim - 1))
        out = xp.where(has, uf(out, 0), out).astype(v.dtype, copy=False)
    return out


def _segment_max_backward(grad, input, result, seg, is_max, implicit):
    """Split evenly among the tied entries of each row (implicit zeros tie at 0 too; their share
    is dropped: masked semantics)."""
    ids = seg.ids_tensor(grad)
    hit = input == result.index_select(0, ids)
    ties = segment_sum(hit.to(grad.dtype), seg)
    if implicit is not None:
        imp = wrap(implicit, D.int64, grad.device, strided).to(grad.dtype)
        ties = ties + (result == 0) * imp.reshape((-1,) + (1,) * (result.ndim - 1))
    return (grad / ties.clamp(min=1)).index_select(0, ids) * hit


_segment_max_op = defop(
    "_segment_max", {S: _segment_max_kernel}, params=("seg", "is_max", "implicit"),
    grads={"input": _segment_max_backward},
)


def segment_max(v, seg, is_max=True, implicit=None):
    return call(_segment_max_op, (v,), (seg, is_max, implicit))


# ---- grouping the stored entries by the kept sparse dims ----

def _group(be, indices, sizes, kept, sorted_prefix):
    """Segments of entries by their indices over ``kept`` dims, and the [len(kept), G] indices
    of the groups (sorted, unique)."""
    xp = be.xp
    nnz = indices.shape[1]
    ksizes = [sizes[d] for d in kept]
    if not kept:  # one group: everything
        return Segments(1, nnz, ids=xp.zeros(nnz, dtype=xp.int64)), xp.zeros((0, 1), dtype=xp.int64)
    table = None
    if len(kept) == 1:
        keys = indices[kept[0]]  # a view: no linear index to build
    else:  # linear indices, or lexicographic ranks where they would overflow int64
        (keys,), table = C.joint_keys(be, [indices[list(kept)]], ksizes)
    if sorted_prefix:  # coalesced and kept == leading dims: equal keys are consecutive
        if nnz == 0:
            return Segments(0, 0, starts=xp.zeros(0, xp.int64)), xp.zeros((len(kept), 0), xp.int64)
        starts = run_starts(be, keys, _prod(ksizes) if table is None else table.shape[1])
        return Segments(starts.shape[0], nnz, starts=starts), indices[:, starts][list(kept)]
    k = _prod(ksizes) if table is None else table.shape[1]
    if k <= 4 * nnz + 65536:  # a dense count per key: O(nnz + k), no sort
        present = xp.bincount(keys, minlength=k) > 0
        uk = xp.flatnonzero(present)
        remap = xp.cumsum(present) - 1
        ids = remap[keys]
    else:
        uk, ids = xp.unique(keys, return_inverse=True)
        ids = ids.reshape(-1)
    return Segments(uk.shape[0], nnz, ids=ids), C.decode_keys(be, uk, ksizes, table)


# ---- sum / mean / amax over COO and CSR ----

def _reduce_sparse(x, axes, keepdim, kind):
    """``kind``: 'sum' or 'amax'/'amin' over ``axes`` (None: all) of sparse ``x``; see the module
    docstring for the result layouts."""
    nd = x.ndim
    axes = tuple(range(nd)) if axes is None else tuple(axes)
    shape = tuple(x.shape)
    csr = x.layout is sparse_csr
    if csr:
        if len(axes) == 1 and nd == 2:
            return _reduce_csr(x, axes[0], keepdim, kind)
        x = to_sparse_coo(x)
    x, v = stored(x, linear=kind == "sum")  # max is not linear: duplicates are summed first
    be = backend_of(x)
    p = x._data
    sd = p.sparse_dim
    s_axes = [a for a in axes if a < sd]
    d_axes = tuple(a - sd + 1 for a in axes if a >= sd)
    if d_axes:
        v = v.sum(d_axes, keepdim) if kind == "sum" else getattr(v, kind)(d_axes, keepdim)
    kept = [d for d in range(sd) if d not in s_axes]
    dense_shape = tuple(v.shape[1:])
    if not s_axes:  # only dense dims reduced: the same pattern
        out_shape = shape[:sd] + dense_shape
        return with_values(wrap(COO(p.indices, v._data, out_shape, p.coalesced), v.dtype, x.device,
                                sparse_coo), v)
    seg, gidx = _group(be, p.indices, shape, kept, p.coalesced and kept == list(range(len(kept))))
    if kind == "sum":
        rv = segment_sum(v, seg)
    else:
        implicit = _prod(shape[a] for a in s_axes) - seg.counts(be)
        rv = segment_max(v, seg, kind == "amax", implicit)
    if not kept:  # every sparse dim reduced: a dense result
        r = rv.reshape(dense_shape)
        if keepdim:
            r = r.reshape(tuple(1 if i in axes else s for i, s in enumerate(shape)))
        return r
    if keepdim:
        full = be.xp.zeros((sd, gidx.shape[1]), dtype=be.xp.int64)
        full[kept] = gidx
        gidx, out_sparse = full, tuple(1 if d in s_axes else shape[d] for d in range(sd))
    else:
        out_sparse = tuple(shape[d] for d in kept)
    pattern = wrap(COO(gidx, rv._data, out_sparse + dense_shape, True), rv.dtype, x.device, sparse_coo)
    return with_values(pattern, rv)


def _reduce_csr(x, dim, keepdim, kind):
    """One dim of a 2-D CSR: a dense result, or (keepdim) a CSR with the nonempty rows/cols."""
    be = backend_of(x)
    xp = be.xp
    p = x._data
    m, n = p.shape
    v = values(x)
    if dim == 1:
        nz = xp.flatnonzero(xp.diff(p.crow))
        starts = p.crow[nz].astype(xp.int64, copy=False)
        seg = Segments(nz.shape[0], p.nnz, starts=starts) if keepdim else Segments(
            m, p.nnz, starts=starts, slots=nz)
        other = n
    elif keepdim:
        present = xp.bincount(p.col, minlength=n) > 0 if p.nnz else xp.zeros(n, dtype=bool)
        nz = xp.flatnonzero(present)
        seg = Segments(nz.shape[0], p.nnz, ids=(xp.cumsum(present) - 1)[p.col])
        other = m
    else:
        seg = Segments(n, p.nnz, ids=p.col.astype(xp.int64, copy=False))
        other = m
    if kind == "sum":
        rv = segment_sum(v, seg)
    else:
        rv = segment_max(v, seg, kind == "amax", other - seg.counts(be))
    if not keepdim:
        return rv
    g = nz.shape[0]
    idt = p.crow.dtype
    if dim == 1:
        crow = xp.zeros(m + 1, dtype=idt)
        xp.cumsum(xp.diff(p.crow) > 0, out=crow[1:])
        pat = CSR(crow, xp.zeros(g, dtype=idt), rv._data, (m, 1))
    else:
        pat = CSR(xp.asarray([0, g], dtype=idt), nz.astype(idt), rv._data, (1, n))
    return with_values(wrap(pat, rv.dtype, x.device, sparse_csr), rv)


def _sum_entry(x, axes, keepdim, shape):
    return _reduce_sparse(x, axes, keepdim, "sum")


def _mean_entry(x, axes, keepdim, shape):
    n = _prod(shape) if axes is None else _prod(shape[a] for a in axes)
    r = _reduce_sparse(x, axes, keepdim, "sum")
    return r / n if n else r / float("nan")


SUM_KERNELS = {O: composite(_sum_entry), R: composite(_sum_entry)}
MEAN_KERNELS = {O: composite(_mean_entry), R: composite(_mean_entry)}
AMAX_KERNELS = {O: composite(lambda x, axes, keepdim: _reduce_sparse(x, axes, keepdim, "amax")),
                R: composite(lambda x, axes, keepdim: _reduce_sparse(x, axes, keepdim, "amax"))}
AMIN_KERNELS = {O: composite(lambda x, axes, keepdim: _reduce_sparse(x, axes, keepdim, "amin")),
                R: composite(lambda x, axes, keepdim: _reduce_sparse(x, axes, keepdim, "amin"))}


# ---- torch.sparse.sum ----

def sparse_sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: the sum over ``dim`` (all dims if None).

    All dims -> a dense 0-d tensor; some dims of a COO tensor -> COO (dense once only dense
    dims remain); one dim of a CSR tensor -> dense (torch raises there). Uncoalesced input is
    fine (duplicates sum). The gradient has the input's pattern.
    """
    check_tensor(input, "sparse.sum")
    return input.sum(dim, False, dtype=dtype)  # reduction.sum (declared above this module)


# ---- torch.sparse.softmax / log_softmax ----

def _max_no_grad(be, v, seg):
    # the raw slice max, as the dense computation: a +inf entry (inf - inf) or an all -inf slice
    # (-inf - -inf) gives NaN for the whole slice, as torch.softmax of the stored values does
    return _segment_max_kernel(be, v, seg, True, None).astype(v.dtype, copy=False)


def _softmax_values(v, seg, log):
    """Softmax of the stored values ``v`` ([nnz, ...]) within each group of ``seg``."""
    be = backend_of(v)
    ids = seg.ids_tensor(v)
    # the shift is a constant for the gradient (softmax does not depend on it)
    shift = wrap(_max_no_grad(be, v._data, seg), v.dtype, v.device, strided).index_select(0, ids)
    with quiet(be):
        z = v - shift
        e = z.exp()
        s = segment_sum(e, seg).index_select(0, ids)
        return z - s.log() if log else e / s


def _softmax(input, dim, dtype, log):
    fname = "sparse.log_softmax" if log else "sparse.softmax"
    check_tensor(input, fname)
    if input.layout is strided:  # statistics.softmax / log_softmax, by their methods
        return (input.log_softmax if log else input.softmax)(dim, dtype)
    x = input if dtype is None or dtype is input.dtype else input.to(dtype)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"{fname}(): expected a floating point tensor, got {x.dtype.name}")
    d = norm_dim(dim, x.ndim, fname)
    csr = x.layout is sparse_csr
    if csr and x.ndim != 2:
        return to_sparse_csr(_softmax(to_sparse_coo(x), d, None, log))
    be = backend_of(x)
    xp = be.xp
    if csr:
        p = x._data
        if d == 1:
            nz = xp.flatnonzero(xp.diff(p.crow))
            seg = Segments(nz.shape[0], p.nnz, starts=p.crow[nz].astype(xp.int64, copy=False))
        else:
            seg, _ = _group(be, p.col.astype(xp.int64).reshape(1, -1), (p.shape[1],), [0], False)
        return with_values(x, _softmax_values(values(x), seg, log))
    x = coalesce(x)
    p = x._data
    sd = p.sparse_dim
    v = values(x)
    if d >= sd:  # a dense dim: an ordinary softmax of the stored slices
        return with_values(x, (v.log_softmax if log else v.softmax)(d - sd + 1))
    kept = [k for k in range(sd) if k != d]
    seg, _ = _group(be, p.indices, p.shape, kept, kept == list(range(len(kept))))
    return with_values(x, _softmax_values(v, seg, log))


def sparse_softmax(input, dim, dtype=None):
    """``torch.sparse.softmax``: softmax over ``dim`` where unspecified entries count as -inf.

    The result has ``input``'s pattern (COO coalesced, or CSR); a slice with no stored entry
    stays empty; stable for values of any magnitude (the slice max is subtracted first).
    ``dtype``: the input is cast to it first.
    """
    return _softmax(input, dim, dtype, False)


def sparse_log_softmax(input, dim, dtype=None):
    """``torch.sparse.log_softmax``: log of :func:`sparse_softmax`, computed stably."""
    return _softmax(input, dim, dtype, True)

