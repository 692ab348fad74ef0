"""linear, bilinear, dropout, normalization and small utilities of nn.functional (composites)."""

import math

from ... import _autocast as _ac
from ... import _ops
from ..._backend import get_backend
from ..._dispatch import call, wrap
from ..._dtype import bfloat16, float16, float32, int64
from ..._layout import strided
from ..._ops import distance as _dist
from ..._ops import random as _random
from ..._ops._util import check_tensor
from ...autograd import grad_mode as _gm
from ...autograd import profiler as _profiler
from . import _fused_linear as _fl
from . import _fused_norm_ops as _fn
from . import fused_dropout as _fd

__all__ = [
    "alpha_dropout",
    "batch_norm",
    "bilinear",
    "cosine_similarity",
    "dropout",
    "layer_norm",
    "linear",
    "normalize",
    "one_hot",
    "pairwise_distance",
]


def linear(input, weight, bias=None):
    r"""``y = x A^T + b``. ``input (*, in_features)``, ``weight (out_features, in_features)``."""
    if _ac.active():  # autocast: torch's lower-precision list (sparsetorch/_autocast.py)
        return _ac.run(linear, _ac.LOWER, (input, weight, bias), None)
    prof = _profiler.ACTIVE  # profiling: an aten::linear range around the ops below
    if prof is not None and prof.named(linear):
        return prof.run_named("aten::linear", linear, (input, weight, bias))
    if prof is None and bias is not None:  # float32/float64 CPU, 2-D: no dispatcher (issue 14)
        t = _fl.lean(input, weight, bias)
        if t is not None:
            return t
    check_tensor(input, "linear")
    check_tensor(weight, "linear", "weight")
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {weight.ndim}-D")
    if input.ndim == 0:
        raise RuntimeError("linear(): input must have at least 1 dimension, got a 0-D tensor")
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape2(input)} and "
            f"{weight.shape[-1]}x{weight.shape[0] if weight.ndim == 2 else 1})")
    if weight.ndim == 2 and input.layout is strided and weight.layout is strided \
            and input.dtype is weight.dtype and (bias is None or (
                bias.layout is strided and bias.dtype is input.dtype and bias.ndim == 1
                and bias.shape[0] == weight.shape[0])):
        return _fused_linear(input, weight, bias)
    wt = weight.t() if weight.ndim == 2 else weight
    out = _ops.matmul(input, wt)
    return out if bias is None else out + bias


def _fused_linear(input, weight, bias):
    """One addmm / mm node (torch's AddmmBackward0 / MmBackward0); other ranks are viewed as
    2-D around it, as torch does."""
    x = input if input.ndim == 2 else input.reshape(-1, input.shape[-1])
    if bias is None:  # torch's graph: MmBackward0 over TBackward0 (the one mm op)
        out = x.mm(weight.t())
    else:
        out = call(_fl.addmm_op, (x, weight, bias))
    if input.ndim != 2:
        out = out.reshape(tuple(input.shape[:-1]) + (weight.shape[0],))
    return out


def _shape2(x):
    lead = 1
    for s in x.shape[:-1]:
        lead *= s
    return f"{lead}x{x.shape[-1]}"


@_ac.policy(_ac.EXCLUDE)
def bilinear(input1, input2, weight, bias=None):
    r"""``y_k = x1^T A_k x2 + b_k``; ``weight (out, in1, in2)``."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            "bilinear(): input1 and input2 must have the same size except in the last dimension, "
            f"got {tuple(input1.shape)} and {tuple(input2.shape)}")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(
            f"bilinear(): weight of shape {tuple(weight.shape)} does not fit inputs of last sizes "
            f"{input1.shape[-1]} and {input2.shape[-1]}")
    out = _ops.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    r"""Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (training)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        r = input * 0
    elif not inplace and _fd.usable(input, p):
        return _fd.dropout_fused(input, p)  # the same draws and values in one pass
    else:
        with _gm.no_grad():
            mask = _random.empty_like_preserve(input).bernoulli_(1.0 - p)
            if mask.dtype is float16:  # torch divides half by a number in float32: one rounding
                mask = mask.float().div_(1.0 - p).to(float16)
            else:
                mask.div_(1.0 - p)
        r = input * mask
    return input.copy_(r) if inplace else r


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout keeping the self-normalizing property (for SELU networks)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    alpha = 1.7580993408473766
    if p == 1.0:
        return input * 0
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    with _gm.no_grad():  # torch's steps, so a seed gives torch's numbers
        noise = _random.empty_like_preserve(input).bernoulli_(1 - p)
        b = noise.add(-1).mul_(alpha * a).add_(alpha * a * p)
        noise.mul_(a)
    r = input * noise + b
    return input.copy_(r) if inplace else r


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    r"""Normalize over the trailing ``normalized_shape`` dims (biased variance), then affine."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != normalized_shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{input.shape}")
    if _fusable(input, weight, bias, normalized_shape):
        return call(_fn.layer_norm_op, (input, weight, bias), (k, eps), input.dtype,
                    _opmath(input.dtype))
    dims = tuple(range(input.ndim - k, input.ndim))
    mu = input.mean(dim=dims, keepdim=True)
    xc = input - mu
    var = (xc * xc).mean(dim=dims, keepdim=True)
    y = xc * (var + eps).rsqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    r"""Batch normalization over every dim but 1 (channels). In training mode the batch
    statistics are used and the running ones updated in place (unbiased variance)."""
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, c) + (1,) * (input.ndim - 2)
    if _fusable(input, weight, bias, (c,)) and (training or (
            running_mean is not None and running_var is not None)):
        return _batch_norm_fused(input, running_mean, running_var, weight, bias, training,
                                 momentum, eps)
    if training:
        n = input.numel() // c
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}")
        mu = input.mean(dim=dims, keepdim=True)
        xc = input - mu
        var = (xc * xc).mean(dim=dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with _gm.no_grad():
                m = momentum
                if running_mean is not None:
                    running_mean.mul_(1 - m).add_(mu.detach().reshape(c).to(running_mean.dtype) * m)
                if running_var is not None:
                    unbiased = var.detach().reshape(c) * (n / (n - 1))
                    running_var.mul_(1 - m).add_(unbiased.to(running_var.dtype) * m)
        y = xc * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm(): running_mean and running_var must be defined in "
                               "evaluation mode")
        y = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _opmath(dt):
    return float32 if dt is float16 or dt is bfloat16 else dt


def _fusable(input, weight, bias, wshape):
    """Dense floating input, and weight / bias (if given) dense of the input's dtype and shape."""
    if input.layout is not strided or not input.dtype.is_floating_point:
        return False
    for t in (weight, bias):
        if t is not None and (t.layout is not strided or t.dtype is not input.dtype
                              or tuple(t.shape) != tuple(wshape)):
            return False
    return True


def _batch_norm_fused(input, running_mean, running_var, weight, bias, training, momentum, eps):
    c = input.shape[1]
    cdt = _opmath(input.dtype)
    if training:
        n = input.numel() // c
        if n <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
        x = input._data if cdt is input.dtype else input._data.astype(cdt.np)
        mu, var = _fn.batch_stats(get_backend(input.device).xp, x)
        if running_mean is not None or running_var is not None:
            with _gm.no_grad():
                m = momentum
                if running_mean is not None:
                    bm = wrap(mu, cdt, input.device, strided)
                    running_mean.mul_(1 - m).add_(bm.to(running_mean.dtype) * m)
                if running_var is not None:
                    bv = wrap(var * (n / (n - 1)), cdt, input.device, strided)
                    running_var.mul_(1 - m).add_(bv.to(running_var.dtype) * m)
    else:
        mu, var = running_mean._data.copy(), running_var._data.copy()
    return call(_fn.batch_norm_op, (input, weight, bias), (training, eps, mu, var), input.dtype,
                cdt)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    r"""``v / max(||v||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    r = input / denom
    if out is not None:
        return out.copy_(r)
    return r


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape ``(*, num_classes)`` with a 1 at each index of ``tensor``."""
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min().item()) < 0):
        raise RuntimeError("Class values must be non-negative.")
    if tensor.numel() and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _ops.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(int64)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    r"""``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``."""
    return _dist.cosine_similarity_composite(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last dim."""
    return _dist.pairwise_distance_composite(x1, x2, p, eps, keepdim)

