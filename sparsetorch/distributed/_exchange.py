"""Differentiable pieces of the sharded embedding's exchange: moving rows between ranks with
``all_to_all_single`` (backward: the reverse exchange) and carrying, in max mode, which partial
rows won the bag's max back to their owners (see ``_maxpool``).
"""

from .. import _dispatch
from .. import _dtype as D
from .._layout import strided
from ..autograd.function import Function
from ._alltoall import all_to_all_single

__all__ = ["ExchangeRows", "int64", "new_tensor", "scatter_ufunc"]


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
    """``ExchangeRows.apply(x, anchor, send_counts, recv_counts, group, scale, links)``: rows of ``x``
    go to the ranks in order (``send_counts[r]`` rows to rank ``r``); the result holds the rows
    received. Backward sends the gradient rows back the same way (times ``scale``).

    ``anchor`` is a leaf that requires grad on every rank, so that every rank records the node
    and runs the reverse exchange in its backward (a collective), even a rank that owns no rows
    or whose rows are frozen.
    """

    @staticmethod
    def forward(ctx, x, anchor, send_counts, recv_counts, group, scale, links=None):
        ctx.counts = (list(send_counts), list(recv_counts))
        ctx.group = group
        ctx.scale = scale
        ctx.links = links
        return _exchange(x, send_counts, recv_counts, group)

    @staticmethod
    def backward(ctx, grad):
        send_counts, recv_counts = ctx.counts
        if grad.layout is not strided:
            grad = grad.to_dense()
        links = ctx.links
        if links is not None:  # max: the won-mask of each partial row travels with its grad
            xp = _dispatch.get_backend(grad.device).xp
            won = links.won_req if links.won_req is not None else grad._data != 0
            won = won.astype(grad._data.dtype)
            both = new_tensor(xp.concatenate([grad._data, won], 1), grad.dtype, grad.device)
            g = _exchange(both, recv_counts, send_counts, ctx.group)
            d = grad.shape[1]
            links.won_own = g._data[:, d:] > 0
            g = new_tensor(xp.ascontiguousarray(g._data[:, :d]), grad.dtype, grad.device)
        else:
            g = _exchange(grad, recv_counts, send_counts, ctx.group)
        if ctx.scale != 1:
            g._data *= g._data.dtype.type(ctx.scale)
        return g, None, None, None, None, None, None


def int64(arr, device):
    return new_tensor(arr, D.int64, device)
