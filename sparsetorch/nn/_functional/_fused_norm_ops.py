"""layer_norm and batch_norm as table ops with torch's node names (``NativeLayerNormBackward0``,
``NativeBatchNormBackward0``).

Forward: a few NumPy / CuPy passes (row means as one GEMV for layer_norm) instead of ~10 ops and
their nodes. Derivatives: the closed forms, ``rstd (g - mean(g) - x^ mean(g x^))`` with
``g = grad * weight``; in a plain backward (no create_graph) on float32/float64 they run on the
payloads, otherwise they are written with sparsetorch ops of the input (so double backward is
exact, as torch's ``NativeLayerNormBackwardBackward0``).
"""

import threading
import weakref

from ... import _jit
from ..._backend import get_backend
from ..._dispatch import defop, wrap
from ..._layout import strided
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import layer_norm as _kln

__all__ = ["batch_norm_op", "layer_norm_op"]

S3 = (strided, strided, strided)


_FAST = ("float32", "float64")


def _plain(*ts):
    if is_grad_enabled():
        return False
    for t in ts:
        if t is not None and (t.layout is not strided or t.dtype.name not in _FAST):
            return False
    return True


def _rows(a, k):
    d = 1
    for s in a.shape[a.ndim - k:]:
        d *= s
    return a.reshape(-1, d)


# ---- layer_norm over the last k dims ----

def _ln_stats(xp, a2, eps):
    """x-hat and rstd of the rows of ``a2`` (biased variance)."""
    d = a2.shape[1]
    inv = xp.full((d, 1), 1.0 / d, dtype=a2.dtype) if d else xp.zeros((0, 1), a2.dtype)
    xc = a2 - xp.matmul(a2, inv)
    var = xp.matmul(xc * xc, inv)
    var += a2.dtype.type(eps)
    rstd = 1.0 / xp.sqrt(var)
    xc *= rstd
    return xc, rstd


# ---- the numba row kernels (nn/_kernels/layer_norm.py): CPU, float32/float64 ----

class _Last(threading.local):
    """Per thread, one slot: (grad, input) payloads (weak references) and (k, eps) -> the weight
    and bias gradients (which depend on nothing else) left by a node's input formula."""

    def __init__(self):
        self.slot = [None, None, None, None, None]


_LAST = _Last()


def _numba(be, x, *others):
    if be.name != "cpu" or x.dtype.name not in _FAST or x.size == 0:
        return None
    for o in others:
        if o is not None and o.dtype != x.dtype:
            return None
    return _kln.kernels(be)


def _affine(xp, w, b, d, dt):
    w = xp.ones(d, dt) if w is None else xp.ascontiguousarray(w.reshape(-1))
    b = xp.zeros(d, dt) if b is None else xp.ascontiguousarray(b.reshape(-1))
    return w, b


def _cst(xp, d, eps, dt):
    return xp.array([1.0 / d, eps, 1.0], dtype=dt)


def _ln_numba(kern, be, x, w, b, k, eps):
    xp = be.xp
    x2 = xp.ascontiguousarray(_rows(x, k))
    rows, d = x2.shape
    w, b = _affine(xp, w, b, d, x2.dtype)
    y = xp.empty_like(x2)
    with _jit.limit(rows * d * 4):
        kern[0](x2, w, b, _cst(xp, d, eps, x2.dtype), y)
    return y.reshape(x.shape)


def _ln_numba_grads(kern, be, g, x, w, k, eps):
    """(gx, gw, gb) payloads in one pass; gw / gb also left in ``_LAST`` for the weight and bias
    formulas of the same node, which run next."""
    xp = be.xp
    x2 = xp.ascontiguousarray(_rows(x, k))
    g2 = xp.ascontiguousarray(_rows(g, k))
    rows, d = x2.shape
    w1, _ = _affine(xp, w, None, d, x2.dtype)
    gx = xp.empty_like(x2)
    with _jit.limit(rows * d * 8) as n:
        chunks = max(1, min(n, rows))
        pw = xp.zeros((chunks, d), x2.dtype)
        pb = xp.zeros((chunks, d), x2.dtype)
        kern[1](x2, g2, w1, _cst(xp, d, eps, x2.dtype), gx, pw, pb, chunks)
    gw, gb = pw.sum(0), pb.sum(0)
    _LAST.slot = [weakref.ref(g), weakref.ref(x), (k, eps), gw, gb]
    return gx.reshape(x.shape), gw, gb


def _take_last(g, x, key, i):
    """The weight (i = 3) or bias (4) gradient left by the input formula for these payloads and
    ``key`` = (k, eps) (for the bias ``x`` is None and ``key`` the int k: it depends on ``g``
    and k only)."""
    last = _LAST.slot
    if last[0] is not None and last[0]() is g and (x is None or last[1]() is x) and \
            (last[2] == key or (x is None and last[2][0] == key)) and last[i] is not None:
        r = last[i]
        last[i] = None
        if last[3] is None and last[4] is None:
            _LAST.slot = [None, None, None, None, None]
        return r
    return None


def _ln_kernel(be, x, w, b, k, eps):
    kern = _numba(be, x, w, b)
    if kern is not None:
        return _ln_numba(kern, be, x, w, b, k, eps)
    xhat, _ = _ln_stats(be.xp, _rows(x, k), eps)
    y = xhat
    if w is not None:
        y = y * w.reshape(-1).astype(x.dtype, copy=False)
    if b is not None:
        y += b.reshape(-1).astype(x.dtype, copy=False)
    return y.reshape(x.shape)


def _ln_composite(input, k, eps):
    dims = tuple(range(input.ndim - k, input.ndim))
    xc = input - input.mean(dims, keepdim=True)
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xc * rstd, rstd, dims


def _ln_grad_input(grad, input, weight, k, eps):
    if _plain(grad, input, weight):
        be = get_backend(input.device)
        kern = _numba(be, input._data, grad._data, None if weight is None else weight._data)
        if kern is not None:
            gx, _, _ = _ln_numba_grads(kern, be, grad._data, input._data,
                                       None if weight is None else weight._data, k, eps)
            return wrap(gx, input.dtype, input.device, strided)
        xp = be.xp
        xhat, rstd = _ln_stats(xp, _rows(input._data, k), eps)
        g = _rows(grad._data, k)
        gh = g * weight._data.reshape(-1) if weight is not None else g.copy()
        d = gh.shape[1]
        inv = xp.full((d, 1), 1.0 / d, dtype=gh.dtype)
        m1 = xp.matmul(gh, inv)
        m2 = xp.matmul(gh * xhat, inv)
        gh -= m1
        gh -= xhat * m2
        gh *= rstd
        return wrap(gh.reshape(input._data.shape), input.dtype, input.device, strided)
    xhat, rstd, dims = _ln_composite(input, k, eps)
    gh = grad * weight if weight is not None else grad
    return rstd * (gh - gh.mean(dims, keepdim=True) - xhat * (gh * xhat).mean(dims, keepdim=True))


def _ln_grad_weight(grad, input, weight, k, eps):
    if _plain(grad, input, weight):
        gw = _take_last(grad._data, input._data, (k, eps), 3)
        if gw is None:
            be = get_backend(input.device)
            kern = _numba(be, input._data, grad._data, weight._data)
            if kern is not None:
                _, gw, _ = _ln_numba_grads(kern, be, grad._data, input._data, weight._data, k,
                                           eps)
        if gw is not None:
            return wrap(gw.reshape(weight._data.shape), weight.dtype, weight.device, strided)
        xhat, _ = _ln_stats(get_backend(input.device).xp, _rows(input._data, k), eps)
        gw = (_rows(grad._data, k) * xhat).sum(0).reshape(weight._data.shape)
        return wrap(gw, weight.dtype, weight.device, strided)
    xhat, _, _ = _ln_composite(input, k, eps)
    lead = tuple(range(input.ndim - k))
    return (grad * xhat).sum(lead) if lead else grad * xhat


def _ln_grad_bias(grad, k):
    if _plain(grad):
        gb = _take_last(grad._data, None, k, 4)
        if gb is not None:
            return wrap(gb.reshape(grad._data.shape[grad.ndim - k:]), grad.dtype, grad.device,
                        strided)
    lead = tuple(range(grad.ndim - k))
    return grad.sum(lead) if lead else grad


layer_norm_op = defop(
    "native_layer_norm", {S3: _ln_kernel}, inputs=("input", "weight", "bias"),
    params=("k", "eps"),
    grads={"input": _ln_grad_input, "weight": _ln_grad_weight, "bias": _ln_grad_bias})


# ---- batch_norm over every dim but 1 ----

def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_shape(ndim, c):
    return (1, c) + (1,) * (ndim - 2)


def batch_stats(xp, x):
    """Per-channel mean and biased variance of ``x`` (channels on dim 1), in x's dtype."""
    axes = _bn_axes(x.ndim)
    mu = x.mean(axes, dtype=x.dtype)
    xc = x - mu.reshape(_bn_shape(x.ndim, x.shape[1]))
    var = (xc * xc).mean(axes, dtype=x.dtype)
    return mu, var


def _bn_kernel(be, x, w, b, training, eps, mean, var):
    xp = be.xp
    shape = _bn_shape(x.ndim, x.shape[1])
    rstd = 1.0 / xp.sqrt(var.astype(x.dtype, copy=False) + x.dtype.type(eps))
    y = x - mean.astype(x.dtype, copy=False).reshape(shape)
    if w is not None:
        rstd = rstd * w.astype(x.dtype, copy=False)
    y *= rstd.reshape(shape)
    if b is not None:
        y += b.astype(x.dtype, copy=False).reshape(shape)
    return y


def _bn_hat(input, training, eps, mean, var):
    """(x-hat, rstd) as tensors: from the input's own statistics when training (differentiable),
    from the given (running) statistics otherwise (constants)."""
    shape = _bn_shape(input.ndim, input.shape[1])
    if training:
        dims = _bn_axes(input.ndim)
        xc = input - input.mean(dims, keepdim=True)
        rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
        return xc * rstd, rstd
    xp = get_backend(input.device).xp
    dt = input.dtype.np
    r = 1.0 / xp.sqrt(var.astype(dt) + dt.type(eps))
    rstd = wrap(r.reshape(shape), input.dtype, input.device, strided)
    m = wrap(mean.astype(dt).reshape(shape), input.dtype, input.device, strided)
    return (input - m) * rstd, rstd


def _bn_plain_hat(xp, x, mean, var, eps):
    shape = _bn_shape(x.ndim, x.shape[1])
    dt = x.dtype
    rstd = (1.0 / xp.sqrt(var.astype(dt) + dt.type(eps))).reshape(shape)
    return (x - mean.astype(dt).reshape(shape)) * rstd, rstd


def _bn_grad_input(grad, input, weight, training, eps, mean, var):
    shape = _bn_shape(input.ndim, input.shape[1])
    if _plain(grad, input, weight):
        x = input._data
        g = grad._data
        xhat, rstd = _bn_plain_hat(get_backend(input.device).xp, x, mean, var, eps)
        gh = g * weight._data.reshape(shape) if weight is not None else g
        if not training:
            return wrap(gh * rstd, input.dtype, input.device, strided)
        axes = _bn_axes(x.ndim)
        m1 = gh.mean(axes, dtype=x.dtype).reshape(shape)
        m2 = (gh * xhat).mean(axes, dtype=x.dtype).reshape(shape)
        gx = gh - m1
        gx -= xhat * m2
        gx *= rstd
        return wrap(gx, input.dtype, input.device, strided)
    xhat, rstd = _bn_hat(input, training, eps, mean, var)
    gh = grad * weight.reshape(shape) if weight is not None else grad
    if not training:
        return gh * rstd
    dims = _bn_axes(input.ndim)
    return rstd * (gh - gh.mean(dims, keepdim=True) - xhat * (gh * xhat).mean(dims, keepdim=True))


def _bn_grad_weight(grad, input, weight, training, eps, mean, var):
    if _plain(grad, input, weight):
        xhat, _ = _bn_plain_hat(get_backend(input.device).xp, input._data, mean, var, eps)
        gw = (grad._data * xhat).sum(_bn_axes(input.ndim), dtype=input.dtype.np)
        return wrap(gw.astype(weight.dtype.np, copy=False), weight.dtype, weight.device, strided)
    xhat, _ = _bn_hat(input, training, eps, mean, var)
    return (grad * xhat).sum(_bn_axes(input.ndim))


def _bn_grad_bias(grad):
    return grad.sum(_bn_axes(grad.ndim))


batch_norm_op = defop(
    "native_batch_norm", {S3: _bn_kernel}, inputs=("input", "weight", "bias"),
    params=("training", "eps", "mean", "var"),
    grads={"input": _bn_grad_input, "weight": _bn_grad_weight, "bias": _bn_grad_bias})
