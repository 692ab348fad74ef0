"""The dense attention core ``softmax(Q K^T * scale + bias) V`` as one custom Function: forward
keeps the weights ``P`` in place in the score buffer (one (…, L, S) array, no temporaries), and
backward computes dQ, dK, dV from ``P`` at once (``dS = P * (dP - rowsum(dP * P))``).

With ``create_graph=True`` backward recomputes the same with differentiable sparsetorch ops, so
higher derivatives stay exact. Used by scaled_dot_product_attention when query, key and value
share their batch shape, dropout is off and the mask does not require grad (else the composite).
"""

from ... import _jit, _ops
from ..._backend import get_backend
from ..._dispatch import wrap
from ..._layout import strided
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import softmax as _ksm
from .fused_dropout import draw_into, undrop_

__all__ = ["attention_core"]


def _fits(small, big):
    """``small`` broadcasts to ``big`` (so ``big += small`` works in place)."""
    if len(small) > len(big):
        return False
    return all(a in (1, b) for a, b in zip(small[::-1], big[::-1]))


def _t(xp, a):
    """``a``'s last two dims swapped, laid out contiguous: NumPy's matmul sends a transposed
    second operand of a stacked product through its slow loop (q @ k^T, (256, 64, 32):
    1.15 ms; with this copy 0.19 + 0.50 ms)."""
    return xp.ascontiguousarray(xp.swapaxes(a, -1, -2))


def _scores(xp, q, k, bias, scale):
    s = xp.matmul(q, _t(xp, k))
    s *= s.dtype.type(scale)
    if bias is not None:
        if _fits(bias.shape, s.shape):
            s += bias
        else:
            s = s + bias
    return s


def _probs(xp, q, k, bias, keep, scale, nan_rows=False, kern=None):
    """softmax over the last dim in place (float32 without a bias, with the numba kernels
    ``kern``: one kernel, ``softmax_shifted_``). The shift is the global max (one fast reduction; any
    shift per row gives the same softmax) unless some row's sum then falls below sqrt(tiny): that
    row would lose precision to underflow, and the per-row max is used instead."""
    if kern is not None and q.dtype == xp.float32 and bias is None and scale > 0:
        s = xp.matmul(q, _t(xp, k))
        top = s.max() * s.dtype.type(scale)
        if s.size and s.flags.c_contiguous and bool(xp.isfinite(top)):
            with _jit.limit(s.size * 8):  # scale, shift, exp, row sums, division: one kernel
                zmin = kern[1](s.reshape(-1, s.shape[-1]), xp.array([scale, top], s.dtype))
            if zmin >= xp.finfo(s.dtype).tiny ** 0.5:
                if keep is not None:
                    s *= keep
                return s
    s = _scores(xp, q, k, bias, scale)
    ones = xp.ones((s.shape[-1], 1), dtype=s.dtype)  # row sums as one GEMV
    top = s.max()
    if bool(xp.isfinite(top)):
        s -= top
        xp.exp(s, out=s)
        z = xp.matmul(s, ones)
        if bool(z.min() >= xp.finfo(s.dtype).tiny ** 0.5):
            s /= z
            if keep is not None:
                s *= keep
            return s
        s = _scores(xp, q, k, bias, scale)
    m = s.max(-1, keepdims=True)
    if not nan_rows:  # else a row of -inf stays NaN, as an explicit softmax gives
        m[~xp.isfinite(m)] = 0
    s -= m
    xp.exp(s, out=s)
    z = xp.matmul(s, ones)
    if not nan_rows:
        z[z == 0] = 1
    s /= z
    if keep is not None:
        s *= keep
    return s


class _AttentionCore(Function):
    @staticmethod
    def forward(ctx, q, k, v, bias, keep, scale, need_probs, nan_rows, dropout_p, heads):
        be = get_backend(q.device)
        xp = be.xp
        p = _probs(xp, q._data, k._data, None if bias is None else bias._data,
                   None if keep is None else keep._data, scale, nan_rows, _ksm.kernels(be))
        ctx.drop = None
        if dropout_p:  # torch's dropout of the weights (its stream, in their order), one pass
            pd = xp.empty_like(p)
            ctx.drop = draw_into(be, p, pd, dropout_p)
            ctx.pd = pd
        out = xp.matmul(p if ctx.drop is None else pd, v._data)
        ctx.scale = scale
        ctx.p = p
        ctx.save_for_backward(q, k, v, bias, keep)
        out = wrap(out, q.dtype, q.device, strided)
        ctx.heads = heads
        if not need_probs:
            return out
        ctx.set_materialize_grads(False)
        if heads:  # the weights averaged over heads, straight from the buffer (no copy of it)
            w = p.reshape((-1, heads) + p.shape[-2:]).mean(1)
        else:
            w = p.copy()
        return out, wrap(w, q.dtype, q.device, strided)

    @staticmethod
    def backward(ctx, grad, grad_p=None):
        q, k, v, bias, keep = ctx.saved_tensors
        scale = ctx.scale
        drop = ctx.drop
        nones = (None,) * 7
        if grad is None and grad_p is None:
            return (None, None, None) + nones
        heads = ctx.heads
        if is_grad_enabled():  # create_graph: differentiable recomputation
            s = _ops.matmul(q, k.transpose(-2, -1)) * scale
            if bias is not None:
                s = s + bias
            p = _ops.softmax(s, -1)
            if keep is not None:
                p = p * keep
            pd = mt = p
            if drop is not None:
                mt = wrap(drop.keep.astype(drop.scale.dtype) * drop.scale, q.dtype, q.device,
                          strided)
                pd = p * mt
            gv = None if grad is None else _ops.matmul(pd.transpose(-2, -1), grad)
            gp = None if grad is None else _ops.matmul(grad, v.transpose(-2, -1))
            if gp is not None and drop is not None:
                gp = gp * mt
            if grad_p is not None:
                if heads:  # mean's backward: grad / heads, broadcast over the heads
                    gpp = (grad_p / heads).unsqueeze(1).expand(
                        (grad_p.shape[0], heads) + tuple(grad_p.shape[1:])).reshape(p.shape)
                else:
                    gpp = grad_p
                gp = gpp if gp is None else gp + gpp
            gs = p * (gp - (gp * p).sum(-1, keepdim=True))
            return (_ops.matmul(gs, k) * scale, _ops.matmul(gs.transpose(-2, -1), q) * scale,
                    gv) + nones
        xp = get_backend(q.device).xp
        p = ctx.p
        dt, dev = q.dtype, q.device
        gv = None
        if grad is not None:
            g = grad._data
            pd = p if drop is None else ctx.pd
            gv = wrap(xp.matmul(xp.swapaxes(pd, -1, -2), g), dt, dev, strided)
            gs = xp.matmul(g, _t(xp, v._data))
            if drop is not None:
                undrop_(get_backend(dev), gs, drop)
            if grad_p is not None:
                _add_probs_grad(xp, gs, grad_p._data, heads)
        else:
            gs = xp.zeros_like(p)
            _add_probs_grad(xp, gs, grad_p._data, heads)
        be = get_backend(dev)
        kern = _ksm.kernels(be)
        if kern is not None and gs.shape == p.shape and gs.dtype == p.dtype and gs.size and \
                gs.flags.c_contiguous and p.flags.c_contiguous:
            n = gs.shape[-1]
            with _jit.limit(gs.size * 4):  # one pass per row, the scale folded in
                kern[0](gs.reshape(-1, n), p.reshape(-1, n), xp.array([scale], dtype=gs.dtype))
            gq = xp.matmul(gs, k._data)
            gk = xp.matmul(xp.swapaxes(gs, -1, -2), q._data)
        else:
            gs -= xp.einsum("...ij,...ij->...i", gs, p)[..., None]
            gs *= p
            gq = xp.matmul(gs, k._data)
            gq *= gq.dtype.type(scale)
            gk = xp.matmul(xp.swapaxes(gs, -1, -2), q._data)
            gk *= gk.dtype.type(scale)
        return (wrap(gq, dt, dev, strided), wrap(gk, dt, dev, strided), gv) + nones


def _add_probs_grad(xp, gs, gp, heads):
    """``gs += gradient of the weights`` (per head, or of their mean over ``heads``)."""
    if heads:
        g4 = gs.reshape((-1, heads) + gs.shape[-2:])
        g4 += (gp / gp.dtype.type(heads))[:, None]
    else:
        gs += gp


def attention_core(q, k, v, bias, keep, scale, need_probs=False, nan_rows=False, dropout_p=0.0,
                   heads=0):
    """``softmax(q k^T * scale + bias) * keep @ v``; ``bias`` float (broadcast to the scores) or
    None, ``keep`` a 0/1 float multiplier of the weights (fully masked rows) or None. Neither
    ``bias`` nor ``keep`` gets a gradient (the caller checks they do not require one).
    ``need_probs``: also return the weights (differentiable). ``nan_rows``: a row whose scores
    are all -inf gives NaN weights (an explicit softmax's result) instead of zeros.
    ``dropout_p``: dropout of the weights before the product with ``v`` (not with
    ``need_probs``; ``fused_dropout.usable`` must hold). ``heads``: the weights returned are
    their mean over groups of ``heads`` consecutive batch entries (``(N * heads, L, S)`` ->
    ``(N, L, S)``, MultiheadAttention's ``average_attn_weights``), 0: per entry."""
    return _AttentionCore.apply(q, k, v, bias, keep, scale, need_probs, nan_rows, dropout_p,
                                heads)
