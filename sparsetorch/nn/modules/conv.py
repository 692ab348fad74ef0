"""Convolution layers: Conv1d, Conv2d, Conv3d (thin modules over nn.functional.conv*d)."""

import math

from ... import _ops as _st

from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        v = tuple(v)
        return v * n if len(v) == 1 else v
    return (v,) * n


class _ConvNd(Module):
    """Shared state and init of the N-d convolutions (weight ``[out, in/groups, *kernel]``)."""

    _nd = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = (_ntuple(kernel_size, nd), _ntuple(stride, nd),
                                         _ntuple(dilation, nd))
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'same', 'valid'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, nd)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * nd
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad widths, last dim first, for the non-zero padding modes
        if isinstance(padding, str):
            widths = []
            if padding == "same":
                for d, k in zip(reversed(dilation), reversed(kernel_size)):
                    total = d * (k - 1)
                    widths += [total // 2, total - total // 2]
            else:
                widths = [0, 0] * nd
        else:
            widths = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = widths
        self.weight = Parameter(_st.empty((out_channels, in_channels // groups) + kernel_size,
                                          device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_st.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # torch: kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(fan_in), 1/sqrt(fan_in)); same for bias
        fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        with no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)

    def extra_repr(self):
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self.padding != (0,) * nd:
            p = self.padding
            s += f", padding={p}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias):
        fn = (None, F.conv1d, F.conv2d, F.conv3d)[self._nd]
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    r"""Applies a 1D convolution over an input signal composed of several input planes.

    Input ``(N, C_in, L)`` or ``(C_in, L)``; weight ``(C_out, C_in / groups, kernel_size)``.
    """

    _nd = 1


class Conv2d(_ConvNd):
    r"""Applies a 2D convolution over an input signal composed of several input planes.

    Input ``(N, C_in, H, W)`` or ``(C_in, H, W)``; weight ``(C_out, C_in / groups, kH, kW)``.
    """

    _nd = 2


class Conv3d(_ConvNd):
    r"""Applies a 3D convolution over an input signal composed of several input planes."""

    _nd = 3
