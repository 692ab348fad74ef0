"""``max`` pooling of a sharded table in two stages, with one-process gradients.

The owner takes the column-wise max of each (requester, bag) group of its ids
(:class:`OwnerMaxBag`); the requester takes the column-wise max of a bag's partial rows
(:class:`MaxCombine`). In backward the requester marks which partial row won each column
(``links.won_req``); :class:`~._exchange.ExchangeRows` carries the marks to the owners
(``links.won_own``), and the owner gives a gradient entry only to the id that won the bag's
max, so the gradient's rows are exactly those of one-process ``embedding_bag`` (its max mode
lists each (bag, column) winner, zero gradient included), which lazy optimizers rely on.
"""

from .. import _dispatch
from .._layout import sparse_coo, strided
from ..autograd.function import Function
from ..sparse._payload import COO
from ._exchange import new_tensor, scatter_ufunc

__all__ = ["Links", "MaxCombine", "OwnerMaxBag"]


class Links:
    """What one forward's max stages tell each other during backward."""

    __slots__ = ("won_own", "won_req")

    def __init__(self):
        self.won_req = None
        self.won_own = None


def _group_max(xp, rows, group, ngroups):
    """(column-wise max per group, first winning row per (group, column); ``len(rows)``
    where the group is empty)."""
    m, d = rows.shape
    out = xp.full((ngroups, d), -xp.inf, dtype=rows.dtype)
    scatter_ufunc(xp, "maximum", out, group, rows)
    win = xp.where(rows == out[group], xp.arange(m, dtype=xp.int64)[:, None], m)
    first = xp.full((ngroups, d), m, dtype=xp.int64)
    scatter_ufunc(xp, "minimum", first, group, win)
    out[first == m] = 0  # empty groups give zeros, as embedding_bag
    return out, first


def _dense_grad(grad):
    return grad.to_dense()._data if grad.layout is not strided else grad._data


class OwnerMaxBag(Function):
    """``OwnerMaxBag.apply(weight, ids, group, ngroups, links, sparse)``: per group, the
    column-wise max of ``weight[ids]``; backward: row-sparse (or dense) gradient of
    ``weight`` at the ids that won the bag's max (``links.won_own``)."""

    @staticmethod
    def forward(ctx, weight, ids, group, ngroups, links, sparse):
        xp = _dispatch.get_backend(weight.device).xp
        out, first = _group_max(xp, weight._data[ids], group, ngroups)
        ctx.save = (ids, first, weight.shape, links, sparse)
        return new_tensor(out, weight.dtype, weight.device)

    @staticmethod
    def backward(ctx, grad):
        ids, first, shape, links, sparse = ctx.save
        xp = _dispatch.get_backend(grad.device).xp
        g = _dense_grad(grad)
        ok = first < ids.size
        if links.won_own is not None:
            ok &= links.won_own
        b, col = xp.nonzero(ok)
        rows = ids[first[b, col]]
        if not sparse:
            out = xp.zeros(tuple(shape), g.dtype)
            scatter_ufunc(xp, "add", out, (rows, col), g[b, col])
            return new_tensor(out, grad.dtype, grad.device), None, None, None, None, None
        uniq, inv = xp.unique(rows, return_inverse=True)
        vals = xp.zeros((uniq.size, shape[1]), g.dtype)
        scatter_ufunc(xp, "add", vals, (inv.reshape(-1), col), g[b, col])
        p = COO(uniq.reshape(1, -1).astype(xp.int64), vals, tuple(shape), True)
        t = _dispatch.wrap(p, grad.dtype, grad.device, sparse_coo)
        return t, None, None, None, None, None


class MaxCombine(Function):
    """``MaxCombine.apply(rows, bag, nbags, links)``: out[b] = the column-wise max of the rows
    whose ``bag`` is b (zeros for a bag with no row). The gradient of out[b, j] goes to the
    first row holding the max; ``links.won_req`` records those (row, column) winners."""

    @staticmethod
    def forward(ctx, rows, bag, nbags, links):
        xp = _dispatch.get_backend(rows.device).xp
        out, first = _group_max(xp, rows._data, bag._data, nbags)
        ctx.first = first
        ctx.shape = tuple(rows.shape)
        ctx.links = links
        return new_tensor(out, rows.dtype, rows.device)

    @staticmethod
    def backward(ctx, grad):
        xp = _dispatch.get_backend(grad.device).xp
        g = _dense_grad(grad)
        m, d = ctx.shape
        gr = xp.zeros((m + 1, d), dtype=g.dtype)  # row m: the sink of empty bags
        won = xp.zeros((m + 1, d), dtype=bool)
        cols = xp.broadcast_to(xp.arange(d), ctx.first.shape)
        gr[ctx.first, cols] = g
        won[ctx.first, cols] = True
        ctx.links.won_req = won[:m]
        return new_tensor(xp.ascontiguousarray(gr[:m]), grad.dtype, grad.device), None, None, None
