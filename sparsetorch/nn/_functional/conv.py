"""Convolution and pooling: conv1d/2d/3d, max/avg/adaptive pooling, pad.

Convolution is three bilinear table ops that are each other's derivatives, so every order of
gradient is closed over them: ``_conv`` (y = x * w, im2col through a strided view + one batched
matmul), ``_conv_input_grad`` (the transposed product, a col2im over kernel offsets) and
``_conv_weight_grad`` (grad_output x im2col). Non-zero padding modes, 'same' padding and bias
are composites on top. Pooling reuses the same machinery: average pooling is a convolution with
a ones kernel on ``(N*C, 1, ...)``; max pooling computes the argmax indices in a kernel (no
gradient needed) and gathers, so its gradient is a scatter-add into the winning positions
(torch's choice among ties: the first maximum in window order).
"""

import itertools
import math

from ... import _ops as _st
from ... import _dtype as _D

from ..._dispatch import call, defop
from ... import _autocast as _ac
from ..._layout import strided
from ..._tensor import Tensor

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "fold",
    "pad",
    "unfold",
]

SS = (strided, strided)
_PARAMS = ("stride", "padding", "dilation", "groups", "in_shape", "w_shape")


# ---- the three convolution ops ----

def _out_size(sp, k, stride, padding, dilation):
    return tuple((sp[i] + 2 * padding[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
                 for i in range(len(sp)))


def _im2col(xp, x, k, stride, padding, dilation, groups):
    """(N, C, *S) -> (N, G, C/G * prod(k), prod(out)) copy of every receptive field."""
    if any(padding):
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    n, c = x.shape[:2]
    sp = x.shape[2:]
    nd = len(sp)
    out = tuple((sp[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd))
    st = x.strides
    win = xp.lib.stride_tricks.as_strided(
        x, (n, c) + k + out,
        st[:2] + tuple(st[2 + i] * dilation[i] for i in range(nd))
        + tuple(st[2 + i] * stride[i] for i in range(nd)))
    return win.reshape(n, groups, (c // groups) * math.prod(k), math.prod(out)), out


def _conv_kernel(be, x, w, stride, padding, dilation, groups, in_shape, w_shape):
    k = w.shape[2:]
    cols, out = _im2col(be.xp, x, k, stride, padding, dilation, groups)
    w2 = w.reshape(groups, w.shape[0] // groups, -1)
    y = be.xp.matmul(w2, cols)  # (N, G, O/G, P)
    return y.reshape((x.shape[0], w.shape[0]) + out)


def _conv_input_grad_kernel(be, gy, w, stride, padding, dilation, groups, in_shape, w_shape):
    xp = be.xp
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    k = w.shape[2:]
    c = in_shape[1]
    w2 = w.reshape(groups, o // groups, -1)
    g2 = gy.reshape(n, groups, o // groups, -1)
    cols = xp.matmul(xp.swapaxes(w2, -1, -2), g2).reshape((n, c) + k + out)
    padded = tuple(s + 2 * p for s, p in zip(in_shape[2:], padding))
    gx = xp.zeros((n, c) + padded, dtype=cols.dtype)
    # col2im: one strided add per kernel offset (windows overlap, so no single scatter view)
    for off in itertools.product(*(range(ki) for ki in k)):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(len(k)))
        gx[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + off]
    if any(padding):
        gx = gx[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                                   zip(padding, in_shape[2:]))]
    return gx


def _conv_weight_grad_kernel(be, x, gy, stride, padding, dilation, groups, in_shape, w_shape):
    xp = be.xp
    k = tuple(w_shape[2:])
    cols, _ = _im2col(xp, x, k, stride, padding, dilation, groups)
    n, o = gy.shape[:2]
    # sum over the batch too: (G, O/G, N*P) @ (G, N*P, C/G*K)
    g2 = xp.moveaxis(gy.reshape(n, groups, o // groups, -1), 0, 2).reshape(groups, o // groups, -1)
    c2 = xp.moveaxis(cols, 0, 1)  # (G, N, CK, P)
    c2 = xp.swapaxes(c2, -1, -2).reshape(groups, -1, cols.shape[2])
    return xp.matmul(g2, c2).reshape(w_shape)


def _conv_fwd_input(grad, weight, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_input_grad_op, (grad, weight),
                (stride, padding, dilation, groups, in_shape, w_shape))


def _conv_fwd_weight(grad, input, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_weight_grad_op, (input, grad),
                (stride, padding, dilation, groups, in_shape, w_shape))


def _conv_ig_grad_output(grad, weight, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_op, (grad, weight), (stride, padding, dilation, groups, in_shape, w_shape))


def _conv_ig_weight(grad, grad_output, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_weight_grad_op, (grad, grad_output),
                (stride, padding, dilation, groups, in_shape, w_shape))


def _conv_wg_input(grad, grad_output, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_input_grad_op, (grad_output, grad),
                (stride, padding, dilation, groups, in_shape, w_shape))


def _conv_wg_grad_output(grad, input, stride, padding, dilation, groups, in_shape, w_shape):
    return call(_conv_op, (input, grad), (stride, padding, dilation, groups, in_shape, w_shape))


_conv_op = defop("convolution", {SS: _conv_kernel}, inputs=("input", "weight"), params=_PARAMS,
                 grads={"input": _conv_fwd_input, "weight": _conv_fwd_weight})
_conv_input_grad_op = defop(
    "convolution_backward_input", {SS: _conv_input_grad_kernel},
    inputs=("grad_output", "weight"), params=_PARAMS,
    grads={"grad_output": _conv_ig_grad_output, "weight": _conv_ig_weight})
_conv_weight_grad_op = defop(
    "convolution_backward_weight", {SS: _conv_weight_grad_kernel},
    inputs=("input", "grad_output"), params=_PARAMS,
    grads={"input": _conv_wg_input, "grad_output": _conv_wg_grad_output})


# ---- argument normalisation ----

def _tuple(v, n, name):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = tuple(v) * n
        if len(v) != n:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} values to match "
                f"the convolution dimensions, but got {name}={list(v)}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def check_conv_inputs(fname, nd, input, weight):
    """torch's checks of a convolution's ``input`` and ``weight``; the input batched (an
    unbatched ``[C, *spatial]`` input gets a leading batch dim) and whether it was unbatched."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"{fname}() received an invalid combination of arguments: input and "
                        f"weight must be Tensors")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions: expected {nd + 2}D "
                           f"weight for {fname}, but got weight of size {list(weight.shape)}")
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} "
                           f"but found {weight.dtype.scalar_name}")
    return input, unbatched


def _convnd(nd, input, weight, bias, stride, padding, dilation, groups):
    fname = f"conv{nd}d"
    input, unbatched = check_conv_inputs(fname, nd, input, weight)
    c = input.shape[1]
    o = weight.shape[0]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[1] * groups != c or o % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} "
            f"channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {o} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (k[i] - 1) for i in range(nd)]
            if any(t % 2 for t in total):  # asymmetric: pad the extra element on the right
                widths = []
                for t in reversed(total):
                    widths += [t // 2, t - t // 2]
                input = pad(input, widths)
                padding = (0,) * nd
            else:
                padding = tuple(t // 2 for t in total)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             f"{{'valid', 'same'}}")
    else:
        padding = _tuple(padding, nd, "padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    sp = tuple(input.shape[2:])
    eff = tuple(sp[i] + 2 * padding[i] for i in range(nd))
    if any(eff[i] < dilation[i] * (k[i] - 1) + 1 for i in range(nd)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, eff))}). Kernel "
            f"size: ({' x '.join(str(dilation[i] * (k[i] - 1) + 1) for i in range(nd))}). "
            f"Kernel size can't be greater than actual input size")
    y = call(_conv_op, (input, weight),
             (stride, padding, dilation, groups, tuple(input.shape), tuple(weight.shape)),
             input.dtype)
    if bias is not None:
        y = y + bias.view((o,) + (1,) * nd)
    return y.squeeze(0) if unbatched else y


@_ac.policy(_ac.LOWER)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1D convolution over an input signal composed of several input planes."""
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


@_ac.policy(_ac.LOWER)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2D convolution over an input image composed of several input planes."""
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


@_ac.policy(_ac.LOWER)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3D convolution over an input image composed of several input planes."""
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups)


# ---- pad ----

def _pad_kernel(be, x, widths, value):
    return be.xp.pad(x, widths, constant_values=value)


def _pad_backward(grad, widths, value):
    return grad[tuple(slice(lo, grad.shape[i] - hi) for i, (lo, hi) in enumerate(widths))]


_pad_op = defop("constant_pad_nd", {(strided,): _pad_kernel}, params=("widths", "value"),
                grads={"input": _pad_backward})


def _pad_index(n, lo, hi, mode):
    idx = []
    for j in range(-lo, n + hi):
        if mode == "reflect":
            m = 2 * (n - 1)
            j = j % m if m else 0
            j = m - j if j >= n else j
        elif mode == "replicate":
            j = min(max(j, 0), n - 1)
        else:  # circular
            j = j % n
        idx.append(j)
    return idx


def pad(input, pad, mode="constant", value=None):
    """Pads tensor. ``pad`` lists (left, right) widths starting from the last dimension."""
    if _ac.active() and (mode == "reflect" or mode == "replicate"):  # autocast's float32 list
        return _ac.run(_pad, _ac.FP32, (input, pad, mode, value), None)  # (pad: the widths)
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    npad = len(pad) // 2
    pairs = [(0, 0)] * (input.ndim - npad) + [
        (pad[2 * (npad - 1 - i)], pad[2 * (npad - 1 - i) + 1]) for i in range(npad)]
    if mode == "constant":
        # negative widths crop first
        if any(lo < 0 or hi < 0 for lo, hi in pairs):
            input = input[tuple(slice(max(-lo, 0), input.shape[i] - max(-hi, 0))
                                for i, (lo, hi) in enumerate(pairs))]
            pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
        return call(_pad_op, (input,), (tuple(pairs), 0 if value is None else value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value not in (None, 0, 0.0):
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    out = input
    for d in range(input.ndim - npad, input.ndim):
        lo, hi = pairs[d]
        if lo == 0 and hi == 0:
            continue
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                               f"of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = _st.tensor(_pad_index(n, lo, hi, mode), dtype=_D.int64, device=input.device)
        out = out.index_select(d, idx)
    return out


# ---- unfold / fold (im2col / col2im) ----

def _eye_kernel(k, dtype, device):
    """(prod(k), 1, *k) weight whose convolution copies out each kernel offset: im2col."""
    n = math.prod(k)
    return _st.eye(n, dtype=dtype, device=device).view((n, 1) + k)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks from a batched input: (N, C, H, W) -> (N, C*kH*kW, L)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unfold(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (3, 4):
        raise RuntimeError("Input Error: Only 3D or 4D input Tensors are supported "
                           f"(got {input.ndim}D)")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[:2]
    k = _tuple(kernel_size, 2, "kernel_size")
    y = conv2d(x.reshape((n * c, 1) + tuple(x.shape[2:])), _eye_kernel(k, x.dtype, x.device),
               None, stride, padding, dilation)
    y = y.reshape(n, c * math.prod(k), -1)
    return y.squeeze(0) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines an array of sliding local blocks into a large containing tensor (sums overlaps)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fold(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (2, 3):
        raise RuntimeError("Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.ndim}D)")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    size = _tuple(output_size, 2, "output_size")
    k = _tuple(kernel_size, 2, "kernel_size")
    stride, padding, dilation = (_tuple(stride, 2, "stride"), _tuple(padding, 2, "padding"),
                                 _tuple(dilation, 2, "dilation"))
    kk = math.prod(k)
    out = _out_size(size, k, stride, padding, dilation)
    n, ck, blocks = x.shape
    if ck % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size={k}")
    if blocks != math.prod(out):
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's "
                           "dimension 2 to match the calculated number of sliding blocks "
                           f"{' * '.join(map(str, out))} = {math.prod(out)}, but got "
                           f"input.size(2)={blocks}.")
    c = ck // kk
    w = _eye_kernel(k, x.dtype, x.device)
    y = call(_conv_input_grad_op, (x.reshape((n * c, kk) + out), w),
             (stride, padding, dilation, 1, (n * c, 1) + size, tuple(w.shape)), x.dtype)
    y = y.reshape((n, c) + size)
    return y.squeeze(0) if unbatched else y


_pad = pad  # the function, for the body of pad, where the name is the widths
