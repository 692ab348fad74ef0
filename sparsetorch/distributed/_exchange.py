"""Differentiable pieces of the sharded embedding's exchange: moving rows between ranks with
``all_to_all_single`` (backward: the reverse exchange) and combining a bag's per-owner partial
rows at the requesting rank (sum, or max with the gradient routed to the winning partial).
"""

from .. import _dispatch
from .. import _dtype as D
from .._layout import strided
from ..autograd.function import Function
from ._alltoall import all_to_all_single

__all__ = ["ExchangeRows", "MaxCombine", "new_tensor", "scatter_ufunc"]


def new_tensor(arr, dtype, device):
    """A dense tensor around the array ``arr`` (no copy)."""
    return _dispatch.wrap(arr, dtype, device, strided)


def scatter_ufunc(xp, op, target, idx, vals):
    """``target[idx] op= vals`` with repeated ``idx`` (NumPy ``ufunc.at``; cupyx's scatter_*)."""
    if xp.__name__ == "numpy":
        getattr(xp, op).at(target, idx, vals)
        return
    import cupyx

    {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max,
     "minimum": cupyx.scatter_min}[op](target, idx, vals)


def _exchange(x, send_counts, recv_counts, group):
    xp = _dispatch.get_backend(x.device).xp
    out = xp.empty((int(sum(recv_counts)),) + tuple(x.shape[1:]), dtype=x._data.dtype)
    t = new_tensor(out, x.dtype, x.device)
    all_to_all_single(t, x.detach(), list(recv_counts), list(send_counts), group=group)
    return t


class ExchangeRows(Function):
    """``ExchangeRows.apply(x, anchor, send_counts, recv_counts, group, scale)``: rows of ``x``
    go to the ranks in order (``send_counts[r]`` rows to rank ``r``); the result holds the rows
    received. Backward sends the gradient rows back the same way (times ``scale``).

    ``anchor`` is a leaf that requires grad on every rank, so that every rank records the node
    and runs the reverse exchange in its backward (a collective), even a rank that owns no rows
    or whose rows are frozen.
    """

    @staticmethod
    def forward(ctx, x, anchor, send_counts, recv_counts, group, scale):
        ctx.counts = (list(send_counts), list(recv_counts))
        ctx.group = group
        ctx.scale = scale
        return _exchange(x, send_counts, recv_counts, group)

    @staticmethod
    def backward(ctx, grad):
        send_counts, recv_counts = ctx.counts
        if grad.layout is not strided:
            grad = grad.to_dense()
        g = _exchange(grad, recv_counts, send_counts, ctx.group)
        if ctx.scale != 1:
            g._data *= g._data.dtype.type(ctx.scale)
        return g, None, None, None, None, None


class MaxCombine(Function):
    """``MaxCombine.apply(rows, bag, nbags)``: out[b] = the column-wise max of the rows whose
    ``bag`` is b (zeros for a bag with no row). The gradient of out[b, j] goes to the first row
    that holds the max, as embedding_bag's max routes it to one id."""

    @staticmethod
    def forward(ctx, rows, bag, nbags):
        xp = _dispatch.get_backend(rows.device).xp
        r = rows._data
        b = bag._data
        m, d = r.shape
        out = xp.full((nbags, d), -xp.inf, dtype=r.dtype)
        scatter_ufunc(xp, "maximum", out, b, r)
        win = xp.where(r == out[b], xp.arange(m, dtype=xp.int64)[:, None], m)
        first = xp.full((nbags, d), m, dtype=xp.int64)
        scatter_ufunc(xp, "minimum", first, b, win)
        out[first == m] = 0  # empty bags (and all -inf columns, as embedding_bag gives)
        ctx.first = first
        ctx.shape = (m, d)
        return new_tensor(out, rows.dtype, rows.device)

    @staticmethod
    def backward(ctx, grad):
        xp = _dispatch.get_backend(grad.device).xp
        g = grad.to_dense()._data if grad.layout is not strided else grad._data
        m, d = ctx.shape
        gr = xp.zeros((m + 1, d), dtype=g.dtype)  # row m: the sink of empty bags
        cols = xp.broadcast_to(xp.arange(d), ctx.first.shape)
        gr[ctx.first, cols] = g
        return new_tensor(xp.ascontiguousarray(gr[:m]), grad.dtype, grad.device), None, None


def int64(arr, device):
    return new_tensor(arr, D.int64, device)
