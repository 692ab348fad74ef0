"""Slicing ops on sparse tensors: narrow, select, index_select (the sparse entries of those
ops, in ``_slicing.py`` and ``_index_ops.py``), ``x[key]`` (``indexing.py``), and the in-place ``sparse_resize_`` / ``sparse_resize_and_clear_``.

Slicing keeps a subset of the stored entries (``src``, from ``sparse/_structure.py``) and gathers
their values differentiably (the dense steps of ``x[key]`` by Tensor methods: those ops are declared
above this module), so gradients are masked to the input's pattern. Kept entries keep
their order, so a coalesced input gives a coalesced result (index_select: when the index is
increasing). A CSR row range is a slice of ``crow`` sharing the column and value buffers.
"""

import numbers

from .. import _dispatch
from .. import _dtype as D
from .._dispatch import wrap
from .._layout import sparse_coo, strided
from .._tensor import Tensor
from .._variants import method
from ..sparse import _structure as K
from ..sparse._payload import COO
from ._join import cat
from ._util import check_tensor
from .creation import tensor, zeros
from .sparse_shape import (
    _alias,
    _be,
    _coo,
    _csr,
    _gather,
    _grad_enabled,
    _index_tensor,
    _prep,
    _vals,
    _via_coo,
)

__all__ = ["sparse_resize_", "sparse_resize_and_clear_"]


# ---- narrow / select / index_select ----

def _key_dim(key, tail):
    """The dim a narrow/select payload key acts on (``tail`` items follow it)."""
    return len(key) - tail


def coo_narrow(x, key, in_shape):
    x = _prep(x)
    d = _key_dim(key, 1)
    start, stop = key[-1].start, key[-1].stop
    p = x._data
    sd = p.indices.shape[0]
    shape = p.shape[:d] + (stop - start,) + p.shape[d + 1:]
    v = _vals(x)
    if d >= sd:
        return _coo(x, p.indices, v.narrow(d - sd + 1, start, stop - start), shape, p.coalesced)
    be = _be(x)
    src = K.coo_row_filter(be, p.indices[d], start, stop)
    if src.shape[0] == p.indices.shape[1]:  # every entry kept
        src = None
        idx = p.indices.copy() if start else p.indices
    else:
        idx = be.xp.take(p.indices, src, axis=1)
    if start:
        idx[d] -= start
    return _coo(x, idx, _gather(v, src), shape, p.coalesced)  # order kept: still sorted


def csr_narrow(x, key, in_shape):
    d = _key_dim(key, 1)
    start, stop = key[-1].start, key[-1].stop
    p = x._data
    shape = p.shape[:d] + (stop - start,) + p.shape[d + 1:]
    v = _vals(x)
    if p.crow.ndim == 2:
        if d == 0:  # whole batches
            v = v.narrow(0, start, stop - start)
            return _csr(x, p.crow[start:stop], p.col[start:stop], v, shape)
        return _via_coo(x, coo_narrow, key, in_shape)
    be = _be(x)
    if d == 0:  # a row range: slice crow, share the column and value buffers
        a, b = int(p.crow[start]), int(p.crow[stop])
        crow = p.crow[start:stop + 1] - p.crow[start]
        return _csr(x, crow, p.col[a:b], v.narrow(0, a, b - a), shape)
    crow, col, src = K.csr_filter_cols(be, p.crow, p.col, start, stop)
    return _csr(x, crow, col, _gather(v, src), shape)


def coo_select(x, key, in_shape):
    x = _prep(x)
    d = _key_dim(key, 2)
    i = key[-2]
    p = x._data
    sd = p.indices.shape[0]
    shape = p.shape[:d] + p.shape[d + 1:]
    v = _vals(x)
    if d >= sd:
        return _coo(x, p.indices, v.select(d - sd + 1, i), shape, p.coalesced)
    be = _be(x)
    src = K.coo_row_filter(be, p.indices[d], i, i + 1)
    if sd == 1:  # no sparse dim left: the dense answer (duplicates sum), as torch
        return _gather(v, src).sum(0, dtype=v.dtype)
    rows = [r for r in range(sd) if r != d]
    idx = be.xp.take(be.xp.take(p.indices, rows, axis=0), src, axis=1)
    return _coo(x, idx, _gather(v, src), shape, p.coalesced)


def csr_select(x, key, in_shape):
    d = _key_dim(key, 2)
    i = key[-2]
    p = x._data
    v = _vals(x)
    if p.crow.ndim == 2:
        if d == 0:  # one batch: a 2-D CSR
            return _csr(x, p.crow[i], p.col[i], v.select(0, i), p.shape[1:])
        return _via_coo(x, coo_select, key, in_shape, back=False)
    xp = _be(x).xp
    if d == 0:  # row i -> a 1-D COO (as torch)
        a, b = int(p.crow[i]), int(p.crow[i + 1])
        idx = p.col[a:b].astype(xp.int64)[None]
        return _coo(x, idx, v.narrow(0, a, b - a), (p.shape[1],), True)
    src = xp.flatnonzero(p.col == i)
    rows = xp.searchsorted(p.crow, src, "right").astype(xp.int64) - 1
    return _coo(x, rows[None], _gather(v, src), (p.shape[0],), True)


def coo_index_select(x, index, dim, in_shape):
    x = _prep(x)
    p = x._data
    sd = p.indices.shape[0]
    k = index.shape[0] if index.ndim else 1
    shape = p.shape[:dim] + (k,) + p.shape[dim + 1:]
    v = _vals(x)
    if dim >= sd:
        return _coo(x, p.indices, v.index_select(dim - sd + 1, index), shape, p.coalesced)
    be = _be(x)
    ix = index._data.reshape(-1)
    src, new = K.index_map(be, p.indices[dim], ix, p.shape[dim])
    idx = be.xp.take(p.indices, src, axis=1)
    idx[dim] = new
    # an increasing map keeps the sorted order; repeats or a shuffle do not
    return _coo(x, idx, _gather(v, src), shape, p.coalesced and K.strictly_increasing(be, ix))


def csr_index_select(x, index, dim, in_shape):
    p = x._data
    be = _be(x)
    ix = index._data.reshape(-1).astype(be.xp.int64, copy=False)
    shape = p.shape[:dim] + (ix.shape[0],) + p.shape[dim + 1:]
    v = _vals(x)
    if p.crow.ndim == 2:
        if dim == 0:
            xp = be.xp
            return _csr(x, xp.take(p.crow, ix, axis=0), xp.take(p.col, ix, axis=0),
                        v.index_select(0, index), shape)
        return _via_coo(x, coo_index_select, index, dim, in_shape)
    if dim == 0:  # rows, in any order, repeats allowed: still canonical
        crow, src = K.csr_gather_rows(be, p.crow, ix)
        return _csr(x, crow, be.xp.take(p.col, src), _gather(v, src), shape)
    if K.strictly_increasing(be, ix):
        crow, col, src = K.csr_map_cols(be, p.crow, p.col, ix, p.shape[1])
        return _csr(x, crow, col, _gather(v, src), shape)
    return _via_coo(x, coo_index_select, index, dim, in_shape)  # rows need re-sorting


# ---- x[key] ----

_INT_DTYPES = (D.int64, D.int32, D.int16, D.int8, D.uint8)


def _index_arg(k, x):
    """An index tensor/list for ``x[k]``: a 1-D int64 payload, or NotImplementedError."""
    if not isinstance(k, Tensor):
        if not isinstance(k, (list, tuple)):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})"
            )
        k = tensor(list(k), dtype=D.int64, device=x.device) if len(k) else \
            zeros(0, dtype=D.int64, device=x.device)
    if k.dtype is D.bool or k.dtype not in _INT_DTYPES or k.ndim != 1 or k.layout is not strided:
        raise NotImplementedError(
            f"indexing a {x.layout.name} tensor supports ints, slices, None, ... and one 1-D "
            "integer "
            f"index tensor (got a {k.ndim}-D {k.dtype.name} index); for masks or several index "
            "tensors convert with .to_dense() first"
        )
    return k


def sparse_getitem(x, key):
    """``x[key]`` for a sparse ``x``: ints (select), slices (narrow; steps via index_select),
    ``None`` (unsqueeze), ``...`` and one 1-D integer index tensor (index_select)."""
    check_tensor(x, "getitem")  # the steps below are Tensor methods: only our tensors get here
    if key.__class__ is not tuple:
        key = (key,)
    items = []
    used = 0
    n_adv = 0
    for k in key:
        if k is None:
            items.append(("n", None))
        elif k is Ellipsis:
            if any(kind == "e" for kind, _ in items):
                raise IndexError("an index can only have a single ellipsis ('...')")
            items.append(("e", None))
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            items.append(("i", int(k)))
            used += 1
        elif isinstance(k, slice):
            items.append(("s", k))
            used += 1
        elif isinstance(k, Tensor) and k.ndim == 0 and k.dtype in _INT_DTYPES:
            items.append(("i", int(k.item())))
            used += 1
        else:
            items.append(("a", _index_arg(k, x)))
            used += 1
            n_adv += 1
    if n_adv > 1:
        raise NotImplementedError(
            f"indexing a {x.layout.name} tensor with several index tensors is not supported; "
            "convert with .to_dense() first"
        )
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    t = x
    d = 0
    for kind, k in items:
        if kind == "e":
            d += x.ndim - used
        elif kind == "n":
            t = t.unsqueeze(d)
            d += 1
        elif kind == "i":
            size = t.shape[d]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {size}")
            t = t.select(d, k % size)
        elif kind == "s":
            if k.step is not None and k.step <= 0:
                raise ValueError(
                    "slice step cannot be zero" if k.step == 0 else "step must be greater than zero"
                )
            start, stop, step = k.indices(t.shape[d])
            if step == 1:
                if (start, stop) != (0, t.shape[d]):
                    t = t.narrow(d, start, max(stop - start, 0))
            else:
                xp = _be(x).xp
                ix = _index_tensor(xp.arange(start, stop, step, dtype=xp.int64), x)
                t = t.index_select(d, ix)
            d += 1
        else:
            size = t.shape[d]
            ix = k._data.astype(_be(x).xp.int64, copy=False)
            if ix.size and (int(ix.max()) >= size or int(ix.min()) < -size):
                bad = int(ix.max()) if int(ix.max()) >= size else int(ix.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
            if ix.size and int(ix.min()) < 0:
                ix = ix % size
            t = t.index_select(d, _index_tensor(ix, x))
            d += 1
    return _alias(t) if t is x else t


# ---- sparse_resize_ ----

_RESIZE_HINT = (
    "\nYou could try the following options:\n1. If you need an empty sparse tensor of this size, "
    "call `x = torch.sparse_coo_tensor(size)`.\n2. If you need to resize this tensor, you have "
    "the following options:\n    1. For both sparse and dense dimensions, keep the number of "
    "them constant and the size of them non-shrinking, and then try the same call again.\n    2. "
    "Or, create a new sparse tensor with the correct indices and values from this sparse tensor."
)


def _resize_args(input, size, sparse_dim, dense_dim, fname):
    check_tensor(input, fname)
    if input.layout is not sparse_coo:
        raise NotImplementedError(
            f"{fname}: only sparse COO tensors can be resized (got {input.layout.name})"
        )
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(
            f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
            f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}"
        )
    if any(s < 0 for s in size) and input._data.nnz == 0:
        raise RuntimeError(f"{fname}: size must be non-negative, got {list(size)}")
    return size


def _resize_into(self, build, fname):
    """``self`` becomes ``build(self)`` in place: new payload and, under autograd, its history.

    Under autograd ``build`` runs on a snapshot (``self``'s autograd identity, a private copy of
    its payload), so the nodes that saved ``self`` keep the version they saw."""
    recording = _grad_enabled() and self._rg
    if recording:
        _dispatch.check_inplace_allowed(self, fname)
        r = build(_dispatch.snapshot(self))
    else:
        r = build(self)
    self._data = r._data
    _dispatch.bump_version(self)
    if recording:
        if r.grad_fn is not None:
            _dispatch.take_history(self, r)
        else:  # cleared: nothing left to differentiate
            self.grad_fn = None
            self._rg = False
    return self


@method
def sparse_resize_(input, size, sparse_dim, dense_dim):
    """Resize a COO tensor in place. A non-empty tensor keeps its number of sparse and dense dims
    and can only grow (new dense positions are zero); an empty one may take any shape."""
    size = _resize_args(input, size, sparse_dim, dense_dim, "sparse_resize_")
    p = input._data
    xp = _be(input).xp
    if p.nnz == 0:
        idx = xp.zeros((sparse_dim, 0), dtype=xp.int64)
        v = zeros((0,) + size[sparse_dim:], dtype=input.dtype, device=input.device)
        return _resize_into(input, lambda x: _coo(x, idx, v, size, True), "sparse_resize_")
    sd, dd = p.sparse_dim, p.dense_dim
    for what, a, b in (("sparse", sd, sparse_dim), ("dense", dd, dense_dim)):
        if a != b:
            raise RuntimeError(
                f"changing the number of {what} dimensions (from {a} to {b}) on a non-empty sparse "
                "tensor is not supported." + _RESIZE_HINT
            )
    for what, old, new in (("sparse", p.shape[:sd], size[:sd]), ("dense", p.shape[sd:], size[sd:])):
        if any(n < o for o, n in zip(old, new)):
            raise RuntimeError(
                f"shrinking the size of {what} dimensions (from {list(old)} to {list(new)}) on a "
                "non-empty sparse tensor is not supported." + _RESIZE_HINT
            )

    def build(x):
        x = _prep(x)
        v = _vals(x)
        if size[sd:] != p.shape[sd:]:  # grown dense dims: zero-padded values
            v = _pad_vals(v, [(0, 0)] + [(0, n - o) for o, n in zip(p.shape[sd:], size[sd:])])
        return _coo(x, x._data.indices, v, size, x._data.coalesced)

    return _resize_into(input, build, "sparse_resize_")


def _pad_vals(v, pad):
    for ax, (_, extra) in enumerate(pad):
        if extra:
            z = v.new_zeros(tuple(v.shape[:ax]) + (extra,) + tuple(v.shape[ax + 1:]))
            v = cat([v, z], ax)
    return v


@method
def sparse_resize_and_clear_(input, size, sparse_dim, dense_dim):
    """Remove all specified elements of a COO tensor and resize it (any shape)."""
    size = _resize_args(input, size, sparse_dim, dense_dim, "sparse_resize_and_clear_")
    xp = _be(input).xp
    p = COO(xp.zeros((sparse_dim, 0), dtype=xp.int64),
            xp.zeros((0,) + size[sparse_dim:], dtype=input.dtype.np), size, True)
    return _resize_into(input, lambda x: wrap(p, x.dtype, x.device, sparse_coo),
                        "sparse_resize_and_clear_")
