"""nn.init: in-place parameter initializers (torch.nn.init). All run under no_grad."""

import math
import warnings

from .. import _ops
from .._backend import get_backend as _get_backend
from .._dispatch import wrap as _wrap
from ..autograd import grad_mode as _gm

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]


def calculate_gain(nonlinearity, param=None):
    r"""The recommended gain for a nonlinearity (``relu``: sqrt(2), ``tanh``: 5/3, ...)."""
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    r"""Fill ``tensor`` with values drawn from U(a, b)."""
    with _gm.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    r"""Fill ``tensor`` with values drawn from N(mean, std^2)."""
    with _gm.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    r"""Fill ``tensor`` from N(mean, std^2) truncated to ``[a, b]``, by rejection as torch 2.13:
    normal draws redrawn while out of ``[a, b]`` when the interval holds more than 30% of the mass,
    otherwise uniform proposals on ``[a, b]`` accepted with the density relative to its peak (the
    same draws in the same order, so a seed gives torch's numbers)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with _gm.no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            lo = _ops.tensor(a, dtype=tensor.dtype).item()  # the bounds as the dtype holds them
            hi = _ops.tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                out = (result < lo) | (result > hi)
                if not bool(out.any()):
                    break
                redraw = _ops.empty_like(result).normal_(mean, std, generator=generator)
                result = _ops.where(out, redraw, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        cand = _ops.empty_like(tensor)
        buf = _ops.empty_like(tensor)

        def log_density(x):  # relative to the peak, in place on ``x``
            return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

        tensor.uniform_(a, b, generator=generator)
        cand.copy_(tensor)
        pending = buf.uniform_(generator=generator).log_().gt(log_density(cand))
        result = tensor
        while bool(pending.any()):
            cand.uniform_(a, b, generator=generator)
            result = _ops.where(pending, cand, result)
            log_density(cand)
            pending = _ops.where(pending, buf.uniform_(generator=generator).log_().gt(cand), pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``."""
    with _gm.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill ``tensor`` with ones (no gradient recorded)."""
    with _gm.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros (no gradient recorded)."""
    with _gm.no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill the 2-D ``tensor`` with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _gm.no_grad():
        tensor.copy_(_ops.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype,
                              device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """Fill the {3,4,5}-D ``tensor`` with the Dirac delta (identity convolution)."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with _gm.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                idx = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[idx] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    r"""Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    r"""Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""He uniform: U(-bound, bound), ``bound = gain * sqrt(3 / fan_mode)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""He normal: N(0, std^2), ``std = gain / sqrt(fan_mode)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    r"""Fill with a (semi-)orthogonal matrix from the QR of a Gaussian matrix (sign-fixed)."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _ops.empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(
        0, 1, generator=generator)
    if rows < cols:
        flat = flat.t()
    xp = _get_backend(tensor.device).xp
    q, r = xp.linalg.qr(flat._data)
    q = q * xp.sign(xp.diagonal(r))  # unique decomposition: make diag(r) positive
    if rows < cols:
        q = q.T
    q = _wrap(xp.ascontiguousarray(q.astype(tensor.dtype.np)), tensor.dtype, tensor.device,
             flat.layout)
    with _gm.no_grad():
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill the 2-D ``tensor`` from N(0, std^2) and zero a ``sparsity`` fraction per column."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with _gm.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            perm = _ops.randperm(rows, generator=generator)
            zero_idx = perm[:num_zeros]
            tensor[zero_idx, col] = 0
    return tensor


def _deprecated(fn):
    def dep(*args, **kwargs):
        warnings.warn(f"`nn.init.{fn.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{fn.__name__}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    dep.__name__ = fn.__name__[:-1]
    dep.__doc__ = fn.__doc__
    return dep


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
