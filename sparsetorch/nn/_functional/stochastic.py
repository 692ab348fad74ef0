"""Channel-wise dropout, gumbel_softmax and rrelu of nn.functional.

Every random number is drawn the way torch's CPU kernels draw it (``bernoulli_`` on a
``(N, C, 1, ...)`` noise tensor, ``exponential_`` on an ``empty_like``, one 53-bit double per
non-positive element for rrelu), so a seed gives torch's masks and slopes.
"""

import math
import warnings

from ... import _ops
from ..._dtype import float16
from ..._ops import _sampling as _SM
from ..._ops._util import check_tensor
from ..._ops.random import check_generator
from ...autograd import grad_mode as _gm
from .activation import leaky_relu, leaky_relu_

__all__ = [
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    "gumbel_softmax",
    "rrelu",
    "rrelu_",
]

_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace, alpha, batched=True):
    """ATen's feature (alpha) dropout: one draw per (sample, channel); ``batched=False`` draws as
    for ``input.unsqueeze(0)`` and applies the mask to ``input`` itself."""
    check_tensor(input, "feature_dropout")
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        z = _ops.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(z) if inplace else input * z
    shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise_shape = shape[:2] + (1,) * (len(shape) - 2)
    with _gm.no_grad():
        noise = _ops.empty(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
            b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
            noise.mul_(a)
        elif noise.dtype is float16:  # torch divides half by a number in float32: one rounding
            noise = noise.float().div_(1.0 - p).to(float16)
        else:
            noise.div_(1 - p)
        if not batched:
            noise = noise.squeeze(0)
            if alpha:
                b = b.squeeze(0)
    if inplace:
        out = input.mul_(noise)
        return out.add_(b) if alpha else out
    out = input * noise
    return out + b if alpha else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    r"""Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, False, batched=inp_dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    r"""Zero whole channels of ``(N, C, H, W)`` input; a 3-D input is taken as ``(N, C, L)``
    (torch's historical behaviour, with its warning)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    r"""Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace, False, batched=inp_dim == 5)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (keeps SELU's zero mean / unit variance)."""
    _check_p(p)
    return _feature_dropout(input, p, training, inplace, True)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    r"""Sample from the Gumbel-softmax distribution; ``hard=True`` gives one-hot samples with the
    soft sample's gradient (straight-through)."""
    check_tensor(logits, "gumbel_softmax", "logits")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _ops.empty(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    gumbels = -noise.exponential_().log()  # ~Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _ops.zeros(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    y_hard = y_hard.scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _rrelu_noise(input, lower, upper, generator=None):
    """torch's ``rrelu_with_noise`` draws: for each non-positive element in order, one
    ``uniform_real_distribution<double>(lower, upper)`` number, then rounded to the op's math
    type; other elements get slope 1."""
    dt = input.dtype
    if not dt.is_floating_point or dt is float16:  # torch's CPU kernel has no Half either
        raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for '
                                  f"'{dt.scalar_name}'")
    x = input.detach().cpu()
    x = (x if dt.itemsize >= 4 else x.float()).contiguous().numpy()
    xp = x.dtype.type
    low, up = (float(lower), float(upper)) if dt.itemsize == 8 else (
        float(_SM.f32(lower)), float(_SM.f32(upper)))
    neg = x <= 0
    n = int(neg.sum())
    r = _SM._u53(check_generator(generator, "rrelu"), n) * (up - low) + low
    if dt.itemsize != 8:
        r = r.astype(_SM.f32)
    noise = x.copy()
    noise[...] = 1
    noise[neg] = r.astype(xp)
    return _ops.from_numpy(noise).to(input.device)


def _check_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    r"""Randomized leaky ReLU: in training each non-positive element gets a slope drawn from
    ``U(lower, upper)``; in evaluation the slope is ``(lower + upper) / 2``."""
    check_tensor(input, "rrelu")
    _check_bounds(lower, upper)
    if not training:
        slope = (lower + upper) / 2
        return leaky_relu_(input, slope) if inplace else leaky_relu(input, slope)
    with _gm.no_grad():
        noise = _rrelu_noise(input, lower, upper)  # float32 for bfloat16 (torch's math type)
    if noise.dtype is not input.dtype:  # bfloat16: the product in float32, rounded once
        r = (input.float() * noise).to(input.dtype)
        return input.copy_(r) if inplace else r
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)
