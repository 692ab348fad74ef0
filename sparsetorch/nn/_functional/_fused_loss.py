"""The loss functions as fused table ops, one node each with torch's name: ``MseLossBackward0``,
``NllLossBackward0`` / ``NllLoss2DBackward0``, ``BinaryCrossEntropyBackward0``,
``BinaryCrossEntropyWithLogitsBackward0``.

Each forward is one kernel (elementwise loss and reduction together); each derivative computes
the input's gradient directly (e.g. BCE-with-logits: ``(sigmoid(x) - y) w / n``) instead of
walking back through the ~6 nodes of the composite. Formulas are written with sparsetorch ops
(so double backward works, as in torch); where a plain backward (no ``create_graph``) can use a
fused kernel on float32/float64 CPU arrays it does (``_plain``). ``weight`` / ``pos_weight`` /
class weights are not differentiable, as in torch (the public functions refuse them).
"""

from ..._backend import CPU, get_backend
from ..._device import CPU as CPU_DEVICE
from ..._dispatch import composite, cpu_float_payloads, defop, record_if_grad, wrap
from ..._dtype import float32, float64
from ..._layout import sparse_coo, sparse_csr, strided
from ..._tensor import Tensor
from ...autograd import profiler as _profiler
from ...autograd._tape import OpNode as _OpNode, SavedTensor as _Saved
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import pointwise as _pk
from .activation import logsigmoid

__all__ = ["bce_logits_op", "bce_op", "lean_bce_logits", "mse_op", "nll2d_op", "nll_op",
           "reduction_scale"]

S3 = (strided, strided, strided)
_add_reduce = CPU.xp.add.reduce
_LAYOUTS = (strided, sparse_coo, sparse_csr)


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return xp.asarray(loss.mean(dtype=loss.dtype))
    if reduction == "sum":
        return xp.asarray(loss.sum(dtype=loss.dtype))
    return loss


def reduction_scale(grad, n, reduction):
    """The incoming gradient per element: ``grad / n`` for the mean, ``grad`` otherwise."""
    return grad / n if reduction == "mean" and n else grad


_FAST = ("float32", "float64")


def _plain(*ts):
    """True in a plain backward (no create_graph) over float32/float64 strided CPU/GPU tensors:
    the formula may then compute on payloads and wrap the result."""
    if is_grad_enabled():
        return False
    for t in ts:
        if t is not None and (t.layout is not strided or t.dtype.name not in _FAST):
            return False
    return True


def _broadcast(a, b):
    k = max(len(a), len(b))
    a = (1,) * (k - len(a)) + a
    b = (1,) * (k - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- mse_loss ----

def _mse_kernel(be, x, t, reduction):
    d = be.xp.asarray(x - t)
    d *= d
    return _reduce(be.xp, d, reduction)


def _mse_grad(grad, input, target, reduction):
    n = _numel(_broadcast(tuple(input.shape), tuple(target.shape)))
    return (input - target) * reduction_scale(grad * 2.0, n, reduction)


def _mse_composite(input, target, reduction):
    """A sparse operand: ``(input - target)^2`` by the sparse ops, then reduced (the gradient
    comes from the parts)."""
    d = input - target
    loss = d * d
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


_MSE_KERNELS = {(a, b): composite(_mse_composite) for a in _LAYOUTS for b in _LAYOUTS}
_MSE_KERNELS[strided, strided] = _mse_kernel
mse_op = defop("mse_loss", _MSE_KERNELS, inputs=("input", "target"), params=("reduction",),
               grads={"input": _mse_grad,
                      "target": lambda grad, input, target, reduction:
                      -_mse_grad(grad, input, target, reduction)})


# ---- nll_loss ----

def _nll_parts(xp, x, t, w, ignore_index):
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    wt = valid.astype(x.dtype) if w is None else w.astype(x.dtype, copy=False)[safe] * valid
    return safe, wt


def _nll_kernel(be, x, t, w, reduction, ignore_index):
    xp = be.xp
    safe, wt = _nll_parts(xp, x, t, w, ignore_index)
    if x.ndim == 2:
        picked = x[xp.arange(x.shape[0]), safe]
    else:
        picked = xp.take_along_axis(x, safe[:, None], axis=1)[:, 0]
    loss = picked * wt
    xp.negative(loss, out=loss)
    if reduction == "none":
        return loss
    s = loss.sum(dtype=loss.dtype)
    if reduction == "sum":
        return xp.asarray(s)
    return xp.asarray(s / wt.sum(dtype=wt.dtype))


def _nll_grad(grad, input, target, weight, reduction, ignore_index):
    """``grad`` times a constant: ``-w[y] / total_weight`` at each target position (linear in
    ``grad``, so it differentiates again)."""
    xp = get_backend(input.device).xp
    x = input._data
    safe, wt = _nll_parts(xp, x, target._data, None if weight is None else weight._data,
                          ignore_index)
    if reduction == "mean":
        wt = wt / wt.sum(dtype=wt.dtype)
    c = xp.zeros(x.shape, x.dtype)
    if x.ndim == 2:
        c[xp.arange(x.shape[0]), safe] = -wt
    else:
        xp.put_along_axis(c, safe[:, None], -wt[:, None], axis=1)
    coef = wrap(c, input.dtype, input.device, strided)
    if reduction == "none":
        return grad.unsqueeze(1) * coef
    return grad * coef


nll_op = defop("nll_loss", {S3: _nll_kernel}, inputs=("input", "target", "weight"),
               params=("reduction", "ignore_index"), grads={"input": _nll_grad})
nll2d_op = defop("nll_loss2d", {S3: _nll_kernel}, inputs=("input", "target", "weight"),
                 params=("reduction", "ignore_index"), grads={"input": _nll_grad},
                 node_name="NllLoss2DBackward0")


# ---- binary_cross_entropy (probabilities) ----

def _bce_kernel(be, x, t, w, reduction):
    xp = be.xp
    lo = x.dtype.type(-100)
    loss = (t - 1) * xp.maximum(xp.log1p(-x), lo) - t * xp.maximum(xp.log(x), lo)
    if w is not None:
        loss = loss * w.astype(x.dtype, copy=False)
    return _reduce(xp, loss, reduction)


def _bce_grad_input(grad, input, target, weight, reduction):
    # torch's derivative clamps the denominator at 1e-12 (finite where the input saturates)
    d = (input - target) / ((1 - input) * input).clamp_min(1e-12)
    if weight is not None:
        d = d * weight
    return d * reduction_scale(grad, _numel(input.shape), reduction)


def _bce_grad_target(grad, input, weight, reduction):
    d = (1 - input).log() - input.log()  # torch does not clamp here (inf at 0 and 1)
    if weight is not None:
        d = d * weight
    return d * reduction_scale(grad, _numel(input.shape), reduction)


bce_op = defop("binary_cross_entropy", {S3: _bce_kernel}, inputs=("input", "target", "weight"),
               params=("reduction",),
               grads={"input": _bce_grad_input, "target": _bce_grad_target})


# ---- binary_cross_entropy_with_logits ----

def _bcel_kernel(be, x, t, w, pw, reduction):
    if w is not None:
        w = w.astype(x.dtype, copy=False)
    if pw is not None:
        pw = pw.astype(x.dtype, copy=False)
    return _pk.bce_logits(be, x, t, w, pw, reduction)


def _bcel_grad_input(grad, input, target, weight, pos_weight, reduction):
    if _plain(grad, input, target, weight, pos_weight):
        be = get_backend(input.device)
        dt = input.dtype.np
        w = None if weight is None else weight._data.astype(dt, copy=False)
        pw = None if pos_weight is None else pos_weight._data.astype(dt, copy=False)
        g = grad._data.astype(dt, copy=False)
        r = _pk.bce_logits_backward(be, g, input._data, target._data.astype(dt, copy=False), w,
                                    pw, reduction)
        return wrap(r, input.dtype, input.device, strided)
    s = input.sigmoid()
    if pos_weight is not None:
        pt = pos_weight * target
        d = (pt + 1 - target) * s - pt
    else:
        d = s - target
    if weight is not None:
        d = d * weight
    return d * reduction_scale(grad, _numel(input.shape), reduction)


def _bcel_grad_target(grad, input, weight, pos_weight, reduction):
    if pos_weight is not None:
        d = logsigmoid(-input) - pos_weight * logsigmoid(input)
    else:
        d = -input
    if weight is not None:
        d = d * weight
    return d * reduction_scale(grad, _numel(input.shape), reduction)


bce_logits_op = defop(
    "binary_cross_entropy_with_logits", {(strided,) * 4: _bcel_kernel},
    inputs=("input", "target", "weight", "pos_weight"), params=("reduction",),
    grads={"input": _bcel_grad_input, "target": _bcel_grad_target})


def _bcel_apply(node, grad_outputs):
    """BinaryCrossEntropyWithLogitsBackward0 for the input alone, without weights, in a plain
    backward on float32/float64 CPU tensors of one dtype: ``_bcel_grad_input``'s kernel call
    without the formula's argument list and checks (issue 14). Otherwise the formulas run."""
    grad = grad_outputs[0]
    calls = node.calls
    c = calls[0]
    if node._released or grad is None or grad.__class__ is not Tensor or c is None \
            or calls[1] is not None or is_grad_enabled() or _profiler.ACTIVE is not None:
        return _OpNode.apply(node, grad_outputs)
    saved = node.saved
    _, i, j, k, m, r = c[1]
    xs, ts = saved[i - 1], saved[j - 1]
    if saved[k - 1] is not None or saved[m - 1] is not None or xs.__class__ is not _Saved \
            or ts.__class__ is not _Saved:
        return _OpNode.apply(node, grad_outputs)
    x, t = xs.unpack(node), ts.unpack(node)
    p = cpu_float_payloads(x, t, grad)
    if p is None:
        return _OpNode.apply(node, grad_outputs)
    d = _pk.bce_logits_backward(CPU, p[2], p[0], p[1], None, None, saved[r - 1])
    return [wrap(d, x.dtype, CPU_DEVICE, strided), None, None, None]


bce_logits_op.node_cls = type(bce_logits_op.node_cls.__name__, (bce_logits_op.node_cls,),
                              {"__slots__": (), "apply": _bcel_apply})


def lean_bce_logits(input, target, reduction):
    """``binary_cross_entropy_with_logits`` without weights on float32/float64 strided CPU
    input and target of one dtype and shape: the kernel and the node without the dispatcher, and
    below the fused kernels' size the mean/sum as one ``add.reduce`` (the value ``mean`` gives,
    without its Python) (issue 14). None for anything else (the checked path)."""
    dt = input.dtype
    if (dt is not float32 and dt is not float64) or target.dtype is not dt \
            or input.layout is not strided or target.layout is not strided \
            or input.device is not CPU_DEVICE or target.device is not CPU_DEVICE:
        return None
    x = input._data
    t = target._data
    if x.shape != t.shape:
        return None
    if x.size >= _pk.MIN_SIZE or reduction == "none":
        data = _bcel_kernel(CPU, x, t, None, None, reduction)
    else:
        s = _add_reduce(_pk.bce_logits(CPU, x, t, None, None, "none"), axis=None)
        data = CPU.xp.asarray(s / x.size if reduction == "mean" else s)
    r = wrap(data, dt, CPU_DEVICE, strided)
    if input._rg or target._rg:
        record_if_grad(bce_logits_op, r, (input, target, None, None), (reduction,))
    return r
