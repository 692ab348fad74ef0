"""conv_transpose1d/2d/3d: the transposed convolution is the input-gradient op of the convolution
(``convolution_backward_input``), so it reuses that table op and its closed derivatives: the
gradient of a transposed convolution is a convolution, at every order."""

from ... import _autocast as _ac
from ..._dispatch import call
from .conv import _conv_input_grad_op, _tuple, check_conv_inputs

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]

_HW = ("height", "width")


def _op_names(nd):
    return _HW if nd == 2 else (("depth",) + _HW if nd == 3 else ("width",))


def _conv_transposend(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    fname = f"conv_transpose{nd}d"
    input, unbatched = check_conv_inputs(fname, nd, input, weight)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c = input.shape[1]
    if weight.shape[0] != c or c % groups:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[0]} channels, but got {c} channels "
            "instead")
    o = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"bias to be 1-dimensional with {o} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    stride = _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    output_padding = _tuple(output_padding, nd, "output_padding")
    dilation = _tuple(dilation, nd, "dilation")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = _op_names(nd)
        parts = ([f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                 + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                 + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got {' '.join(parts)}")
    k = tuple(weight.shape[2:])
    sp = tuple(input.shape[2:])
    out = tuple((sp[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1)
                + output_padding[i] + 1 for i in range(nd))
    if any(s <= 0 for s in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sp))}). "
                           f"Calculated output size per channel: ({' x '.join(map(str, out))}). "
                           "Output size is too small")
    n = input.shape[0]
    y = call(_conv_input_grad_op, (input, weight),
             (stride, padding, dilation, groups, (n, o) + out, tuple(weight.shape)), input.dtype)
    if bias is not None:
        y = y + bias.view((o,) + (1,) * nd)
    return y.squeeze(0) if unbatched else y


@_ac.policy(_ac.LOWER)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 1D transposed convolution operator over an input signal composed of several
    input planes; ``weight (in_channels, out_channels / groups, kW)``."""
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


@_ac.policy(_ac.LOWER)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 2D transposed convolution operator over an input image composed of several
    input planes; ``weight (in_channels, out_channels / groups, kH, kW)``."""
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


@_ac.policy(_ac.LOWER)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 3D transposed convolution operator over an input image composed of several
    input planes; ``weight (in_channels, out_channels / groups, kT, kH, kW)``."""
    return _conv_transposend(3, input, weight, bias, stride, padding, output_padding, groups,
                             dilation)
