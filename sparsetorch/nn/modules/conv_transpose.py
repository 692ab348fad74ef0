"""Transposed convolution layers: ConvTranspose1d/2d/3d (weight ``[in, out/groups, *kernel]``),
thin modules over nn.functional.conv_transpose*d; ``forward(input, output_size=None)``."""

from ... import _ops
from .. import functional as F
from ..parameter import Parameter
from .conv import _ConvNd, _ntuple
from .module import Module

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvTransposeNd(_ConvNd):
    """Shared state of the transposed convolutions; init and repr as _ConvNd's (torch's too)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        Module.__init__(self)
        nd = self._nd
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.padding = _ntuple(padding, nd)
        self.dilation = _ntuple(dilation, nd)
        self.transposed = True
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                 for _ in range(2)]
        self.weight = Parameter(_ops.empty((in_channels, out_channels // groups)
                                           + self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_ops.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def extra_repr(self):
        s = super().extra_repr()
        if self.output_padding != (0,) * self._nd:
            head, sep, tail = s.partition(", groups=")
            if not sep:
                head, sep, tail = s.partition(", bias=")
            extra = f", output_padding={self.output_padding}"
            s = head + extra + sep + tail if sep else s + extra
        return s

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims,
                        dilation=None):
        if output_size is None:
            return _ntuple(self.output_padding, num_spatial_dims)
        has_batch = input.ndim == num_spatial_dims + 2
        output_size = list(output_size)
        if len(output_size) == num_spatial_dims + (2 if has_batch else 1):
            output_size = output_size[-num_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.ndim}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_spatial_dims + (2 if has_batch else 1)} elements (got "
                             f"{len(output_size)})")
        sp = input.shape[input.ndim - num_spatial_dims:]
        dilation = dilation if dilation is not None else (1,) * num_spatial_dims
        mins = [(sp[d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel_size[d] - 1) + 1
                for d in range(num_spatial_dims)]
        maxs = [mins[d] + stride[d] - 1 for d in range(num_spatial_dims)]
        for d in range(num_spatial_dims):
            if not mins[d] <= output_size[d] <= maxs[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {mins} to {maxs} (for an input of "
                                 f"{input.shape[input.ndim - num_spatial_dims:]})")
        return tuple(output_size[d] - mins[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        nd = self._nd
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, nd, self.dilation)
        fn = (None, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd]
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""Applies a 1D transposed convolution operator over an input image composed of several
    input planes."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    r"""Applies a 2D transposed convolution operator over an input image composed of several
    input planes."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    r"""Applies a 3D transposed convolution operator over an input image composed of several
    input planes."""

    _nd = 3
