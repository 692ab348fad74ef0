"""Loss functions of nn.functional: composites of sparsetorch ops, written in their stable forms
(cross_entropy through log_softmax, BCE-with-logits through logsigmoid)."""

import warnings

from ... import _autocast as _ac
from ... import _ops, _torch_warnings
from ..._dispatch import call
from ..._dtype import bfloat16, float16, float32, int64, promote_types
from ..._ops._util import check_tensor
from ..._tensor import Tensor
from ...autograd import profiler as _profiler
from ...autograd.grad_mode import is_grad_enabled
from . import _fused_loss as _fl
from .activation import log_softmax, logsigmoid

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction):
    """torch's ``_Reduction.legacy_get_string``: the deprecated size_average/reduce pair."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _same_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def _fused(op, inputs, params, dt=None):
    """Run a fused loss op: float32 opmath for half inputs (one rounding at the end, as torch),
    the promoted dtype of the floating inputs otherwise."""
    if dt is None:
        dt = inputs[0].dtype
        for t in inputs[1:]:
            if t is not None and t.dtype.is_floating_point:
                dt = promote_types(dt, t.dtype)
    if not dt.is_floating_point:
        return call(op, inputs, params, dt, dt)
    cdt = float32 if dt is float16 or dt is bfloat16 else dt
    return call(op, inputs, params, dt, cdt)


def _not_differentiable(fname, **tensors):
    if is_grad_enabled():
        for name, t in tensors.items():
            if t is not None and t.requires_grad:
                raise RuntimeError(
                    f"The function '{fname}' is not differentiable with respect to argument "
                    f"'{name}'. This input cannot have requires_grad True.")


# ---- regression ----

@_ac.policy(_ac.FP32)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean squared error ``(x - y)^2``, reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _same_size(input, target)
    if weight is not None:  # torch's Python path: sum(w d^2) / sum(w) for the mean
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        d = input - target
        loss = d * d * weight
        if reduction == "mean":
            return loss.sum() / weight.sum()
        return _reduce(loss, reduction)
    check_tensor(input, "mse_loss")
    check_tensor(target, "mse_loss", "target")
    return _fused(_fl.mse_op, (input, target), (reduction,))  # sparse operands: mse_op's composite


@_ac.policy(_ac.FP32)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean absolute error ``|x - y|``, reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _same_size(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_ac.policy(_ac.FP32)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    r"""``0.5 d^2 / beta`` where ``|d| < beta`` else ``|d| - 0.5 beta`` (L1 when ``beta == 0``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _same_size(input, target)
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = _ops.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


@_ac.policy(_ac.FP32)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    r"""``0.5 d^2`` where ``|d| < delta`` else ``delta (|d| - 0.5 delta)``."""
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _same_size(input, target)
    d = (input - target).abs()
    loss = _ops.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---- classification ----

def _check_batch(input, target):
    if input.ndim >= 2 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
        tb = target.shape[0] if target.ndim else 1
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({tb}).")


def _class_weights(weight, safe_t, shape):
    return weight.index_select(0, safe_t.reshape(-1)).reshape(shape)


@_ac.policy(_ac.FP32)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    r"""Negative log likelihood: ``-w[y_n] * input[n, y_n]`` (``input`` holds log-probabilities,
    classes on dim 1, or dim 0 for an unbatched ``(C,)`` input)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    check_tensor(input, "nll_loss")
    check_tensor(target, "nll_loss", "target")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if target.dtype is not int64:
        raise RuntimeError(
            f"expected scalar type Long but found {target.dtype.name}; class-index targets must "
            "be int64 (use target.long())")
    unbatched = input.ndim == 1
    if unbatched:
        if target.ndim != 0:
            raise ValueError(f"Expected target of shape () for 1-D input, got {tuple(target.shape)}")
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    _check_batch(input, target)
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(
            f"Expected target size {tuple(input.shape[:1]) + tuple(input.shape[2:])}, got "
            f"{tuple(target.shape)}")
    c = input.shape[1]
    t = target._data
    if t.size:
        bad = (t < 0) | (t >= c)
        if bad.any():
            bad &= t != ignore_index
            if bad.any():
                raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != c:
            raise RuntimeError(
                f"weight tensor should be defined either for all {c} classes or no classes but "
                f"got weight tensor of shape: {list(weight.shape)}")
        _not_differentiable("nll_loss_forward", weight=weight)
    op = _fl.nll2d_op if input.ndim >= 3 else _fl.nll_op
    lead = None
    if input.ndim not in (2, 4):  # torch runs (N, C, d1, d2, ...) as a 2-D loss over a view
        lead = tuple(target.shape)
        input = input.reshape(input.shape[0], c, -1, 1)
        target = target.reshape(target.shape[0], -1, 1)
    loss = call(op, (input, target, weight), (reduction, ignore_index))
    if reduction == "none":
        if lead is not None:
            loss = loss.reshape(lead)
        return loss.squeeze(0) if unbatched else loss
    return loss


@_ac.policy(_ac.FP32)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    r"""Cross entropy between logits ``input`` (classes on dim 1) and ``target``: class indices
    (int64, with ``ignore_index``) or class probabilities (float, same shape as ``input``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    check_tensor(input, "cross_entropy")
    check_tensor(target, "cross_entropy", "target")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dtype is float16:  # sums of -log p (1e4 each at large logits) overflow float16
        return cross_entropy(input.float(), target.float() if target.dtype is float16 else target,
                             None if weight is None else weight.float(), None, ignore_index, None,
                             reduction, label_smoothing).to(float16)
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            _check_batch(input, target)
            raise RuntimeError(
                f"Expected target of the same shape as input {tuple(input.shape)} for class "
                f"probabilities, got {tuple(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        if weight is not None:
            logp = logp * weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
        prod = logp * target
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum() / (input.numel() // c)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target == ignore_index
    wshape = (c,) + (1,) * (input.ndim - cdim - 1)
    lp = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -lp.sum(cdim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            safe_t = _ops.where(ignore, 0, target)
            tw = _class_weights(weight, safe_t, safe_t.shape).masked_fill(ignore, 0.0)
            ret = smooth.sum() / tw.sum()
        else:
            ret = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


@_ac.policy(_ac.FP32)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r"""``-w (y log x + (1 - y) log(1 - x))`` on probabilities; the logs are clamped at -100."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if input.numel() and (bool((input < 0).any()) or bool((input > 1).any())):
        raise RuntimeError("all elements of input should be between 0 and 1")
    _bcast_weight(weight, input, "bce")
    _not_differentiable("binary_cross_entropy", weight=weight)
    return _fused(_fl.bce_op, (input, target, weight), (reduction,))


def _bcast_weight(w, input, name):
    """torch's errors for a ``weight`` / ``pos_weight`` that does not broadcast to ``input``."""
    if w is None:
        return
    a, b = tuple(w.shape), tuple(input.shape)
    if len(a) > len(b):
        raise RuntimeError(f"output with shape {list(b)} doesn't match the broadcast shape "
                           f"{list(a[:len(a) - len(b)]) + list(b)}")
    for i in range(1, len(a) + 1):
        if a[-i] not in (1, b[-i]):
            if name == "bce":
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {a[-i]} at -{i}! Mismatching "
                    f"argument at index 1 had torch.Size({list(a)}); but expected shape should be "
                    f"broadcastable to {list(b)}")
            x, y = (b[-i], a[-i]) if name == "weight" else (a[-i], b[-i])
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {len(b) - i}")


@_ac.policy(_ac.FP32)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    r"""BCE on logits, stable: ``(1 - y) x - (1 + (p - 1) y) logsigmoid(x)``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if weight is None and pos_weight is None and input.__class__ is Tensor \
            and target.__class__ is Tensor and _profiler.ACTIVE is None:
        r = _fl.lean_bce_logits(input, target, reduction)  # (issue 14: no dispatcher)
        if r is not None:
            return r
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _bcast_weight(weight, input, "weight")
    _bcast_weight(pos_weight, input, "pos_weight")
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _fused(_fl.bce_logits_op, (input, target, weight, pos_weight), (reduction,),
                  promote_types(input.dtype, target.dtype))


@_ac.policy(_ac.FP32)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    r"""``max(0, -y (x1 - x2) + margin)``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, reduction)


@_ac.policy(_ac.FP32)
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    r"""``1 - cos(x1, x2)`` where ``y == 1``, ``max(0, cos(x1, x2) - margin)`` where ``y == -1``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim not in (1, 2) or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(
            "cosine_embedding_loss(): expected 1-D or 2-D inputs of the same shape, got "
            f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    d = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    zeros = cos * 0
    pos = _ops.where(target == 1, 1 - cos, zeros)
    neg = _ops.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


@_ac.policy(_ac.FP32)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    r"""KL divergence with ``input`` in log space: ``y (log y - x)``."""
    if reduction == "mean" and size_average is None and reduce is None:
        _torch_warnings.kl_div_mean()
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


@_ac.policy(_ac.FP32)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-y x))``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(-logsigmoid(target * input), reduction)


@_ac.policy(_ac.FP32)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zeros = input * 0
    pos = _ops.where(target == 1, input, zeros)
    neg = _ops.where(target == -1, (margin - input).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)
