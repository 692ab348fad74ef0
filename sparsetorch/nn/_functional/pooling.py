"""Pooling: max/avg pooling (1-D, 2-D) and adaptive average/max pooling.

Max pooling finds the winning positions in a kernel (integers, no gradient) and gathers them,
so its gradient is a scatter-add into those positions: overlapping windows and ties behave as in
torch (the first maximum in window order wins; NaN wins). Average pooling is one op (window
sums over strided views divided by a per-window count) whose backward is its adjoint op (each
window's share added back), and the adjoint's backward is the pooling again. Both record torch's
node names (``MaxPool2DWithIndicesBackward0``, ``AvgPool2DBackward0``; 1-D pooling is the 2-D
node then ``squeeze(-2)``, as torch). Adaptive average pooling multiplies by per-dimension
averaging matrices.
"""

import itertools
import math

from ... import _ops as _st
from ... import _dtype as _D

from ..._dispatch import call, defop, wrap
from ..._dtype import is_float_np
from ..._layout import strided
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .conv import _conv_op, pad

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "max_pool1d",
    "max_pool2d",
]


# ---- shared geometry ----

def _tuple(v, n, name):
    if isinstance(v, (list, tuple)):
        v = tuple(int(x) for x in v)
        if len(v) == 1:
            v = v * n
        if len(v) != n:
            raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
        return v
    return (int(v),) * n


def _geometry(fname, input, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """Normalised (k, stride, padding, dilation, out, extra right padding) for a pooling call."""
    if input.ndim not in (nd + 1, nd + 2) or input.numel() == 0:
        raise RuntimeError(f"{fname}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for "
                           f"input, but got: {list(input.shape)}")
    k = _tuple(kernel_size, nd, "kernel_size")
    stride = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    dilation = _tuple(dilation, nd, "dilation")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    one_d = fname == "max_pool1d"  # torch's 1-d max pooling words its checks its own way
    if any(s < 0 for s in stride):
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {stride[0]}"
                           if one_d else "stride should be greater than zero, but got dH: "
                           f"{stride[-2] if nd == 2 else 1} dW: {stride[-1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation[0]}"
                           if one_d else "dilation should be greater than zero, but got "
                           f"dilationH: {dilation[-2] if nd == 2 else 1} dilationW: {dilation[-1]}")
    if any(x <= 0 for x in k):
        raise RuntimeError("kernel_size must be greater than zero")
    for i in range(nd):
        if padding[i] > (dilation[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={padding[i]}, "
                f"kernel_size={k[i]} and dilation={dilation[i]}")
    sp = input.shape[-nd:]
    out, extra = [], []
    for i in range(nd):
        span = sp[i] + 2 * padding[i] - dilation[i] * (k[i] - 1) - 1
        o = (span + (stride[i] - 1 if ceil_mode else 0)) // stride[i] + 1
        if ceil_mode and (o - 1) * stride[i] >= sp[i] + padding[i]:
            o -= 1  # the last window must start inside the input or its left padding
        out.append(o)
        extra.append(max(0, (o - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1
                         - sp[i] - 2 * padding[i]))
    if any(o <= 0 for o in out):
        c = input.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + tuple(sp)))}). "
                           f"Calculated output size: ({'x'.join(map(str, [c] + out))}). "
                           f"Output size is too small")
    return k, stride, padding, dilation, tuple(out), tuple(extra)


def _take_kernel(be, x, idx, nd, shape, in_shape):
    flat = x.reshape(x.shape[:-nd] + (-1,))
    return be.xp.take_along_axis(flat, idx, -1).reshape(shape)


def _take_backward(grad, idx, nd, in_shape):
    lead = in_shape[:-nd]
    i = wrap(idx, _D.int64, grad.device, strided)
    z = grad.new_zeros(lead + (math.prod(in_shape[-nd:]),))
    return z.scatter_add(-1, i, grad.reshape(lead + (-1,))).reshape(in_shape)


# the pooled values: one node with torch's name (its gradient a scatter-add into the winners)
_TAKE = dict(kernels={(strided,): _take_kernel}, params=("idx", "nd", "shape", "in_shape"),
             grads={"input": lambda grad, idx, nd, in_shape:
                    _take_backward(grad, idx, nd, in_shape)})
_max_pool_take_op = defop("max_pool2d_with_indices", node_name="MaxPool2DWithIndicesBackward0",
                          **_TAKE)
_adaptive_max_take_op = defop("adaptive_max_pool2d", node_name="AdaptiveMaxPool2DBackward0",
                              **_TAKE)


def _flat_gather(op, input, idx, nd):
    """input (*lead, *S) at the flat spatial indices idx (*lead, *O), as torch records it: a 2-D
    pooling node; 1-D pooling is torch's 2-D one over (*lead, 1, L), then squeezed (dim -2)."""
    shape = tuple(idx.shape)
    lead = shape[:-nd]
    if nd == 1:
        shape = lead + (1,) + shape[-1:]
    y = call(op, (input,), (idx._data.reshape(lead + (-1,)), nd, shape, tuple(input.shape)))
    return y.squeeze(-2) if nd == 1 else y


# ---- max pooling ----

def _max_pool_indices_kernel(be, x, k, stride, padding, dilation, extra):
    xp = be.xp
    nd = len(k)
    sp = x.shape[2:]
    low = -xp.inf if is_float_np(x.dtype) else xp.iinfo(x.dtype).min
    xpd = x
    if any(padding) or any(extra):
        xpd = xp.pad(x, ((0, 0), (0, 0)) + tuple((p, p + e) for p, e in zip(padding, extra)),
                     constant_values=low)
    psp = xpd.shape[2:]
    out = tuple((psp[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd))
    st = xpd.strides
    win = xp.lib.stride_tricks.as_strided(
        xpd, x.shape[:2] + out + k,
        st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd))
        + tuple(st[2 + i] * dilation[i] for i in range(nd)))
    a = xp.argmax(win.reshape(x.shape[:2] + out + (-1,)), axis=-1)
    flat = xp.zeros(a.shape, dtype=xp.int64)
    rem = a
    for i in range(nd):  # window offset -> input position, row-major over the input dims
        kk = math.prod(k[i + 1:])
        off, rem = rem // kk, rem % kk
        o = xp.arange(out[i]).reshape((-1,) + (1,) * (nd - 1 - i))
        pos = o * stride[i] - padding[i] + off * dilation[i]
        flat = flat * sp[i] + pos
    return flat


_max_pool_indices_op = defop(
    "max_pool_indices", {(strided,): _max_pool_indices_kernel},
    params=("k", "stride", "padding", "dilation", "extra"))


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    fname = f"max_pool{nd}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    k, stride, padding, dilation, _, extra = _geometry(
        fname, input, nd, kernel_size, stride, padding, dilation, ceil_mode)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    idx = call(_max_pool_indices_op, (x.detach(),), (k, stride, padding, dilation, extra),
               _D.int64)
    if unbatched:
        idx = idx.squeeze(0)
    y = _flat_gather(_max_pool_take_op, input, idx, nd)
    return (y, idx) if return_indices else y


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 1D max pooling over an input signal composed of several input planes."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 2D max pooling over an input signal composed of several input planes."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


# ---- average pooling ----

def _avg_kernel(be, x, k, stride, padding, extra, cnt, in_shape, out_shape):
    """Window means: (*lead, *S) -> out_shape (zero padding; ``cnt``: the divisor per window)."""
    xp = be.xp
    nd = len(k)
    sp = x.shape[x.ndim - nd:]
    xf = x.reshape((-1,) + sp)
    if any(padding) or any(extra):
        xf = xp.pad(xf, ((0, 0),) + tuple((p, p + e) for p, e in zip(padding, extra)))
    out = cnt.shape
    st = xf.strides
    win = xp.lib.stride_tricks.as_strided(
        xf, xf.shape[:1] + out + k,
        st[:1] + tuple(st[1 + i] * stride[i] for i in range(nd)) + st[1:])
    s = win.sum(tuple(range(1 + nd, 1 + 2 * nd)))
    return xp.asarray((s / cnt).astype(x.dtype, copy=False)).reshape(out_shape)


def _avg_adjoint_kernel(be, g, k, stride, padding, extra, cnt, in_shape, out_shape):
    """The adjoint of ``_avg_kernel``: each window's ``g / cnt`` added back over the window."""
    xp = be.xp
    nd = len(k)
    out = cnt.shape
    gd = (g.reshape((-1,) + out) / cnt).astype(g.dtype, copy=False)
    sp = in_shape[len(in_shape) - nd:]
    gp = xp.zeros(gd.shape[:1] + tuple(sp[i] + 2 * padding[i] + extra[i] for i in range(nd)),
                  g.dtype)
    for off in itertools.product(*(range(n) for n in k)):
        key = tuple(slice(off[i], off[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                    for i in range(nd))
        gp[(slice(None),) + key] += gd
    crop = tuple(slice(padding[i], padding[i] + sp[i]) for i in range(nd))
    return xp.ascontiguousarray(gp[(slice(None),) + crop]).reshape(in_shape)


_AVG_PARAMS = ("k", "stride", "padding", "extra", "cnt", "in_shape", "out_shape")
_avg_pool_op = defop(  # one node, torch's AvgPool2DBackward0 (its backward the adjoint op)
    "avg_pool2d", {(strided,): _avg_kernel}, params=_AVG_PARAMS, node_name="AvgPool2DBackward0",
    grads={"input": lambda grad, k, stride, padding, extra, cnt, in_shape, out_shape: call(
        _avg_adjoint_op, (grad,), (k, stride, padding, extra, cnt, in_shape, out_shape))})
_avg_adjoint_op = defop(
    "avg_pool2d_backward", {(strided,): _avg_adjoint_kernel}, params=_AVG_PARAMS,
    grads={"input": lambda grad, k, stride, padding, extra, cnt, in_shape, out_shape: call(
        _avg_pool_op, (grad,), (k, stride, padding, extra, cnt, in_shape, out_shape))})


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    fname = f"avg_pool{nd}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    k, stride, padding, _, out, extra = _geometry(fname, input, nd, kernel_size, stride, padding,
                                                  1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sp = tuple(input.shape[-nd:])
    lead = tuple(input.shape[:-nd])
    if divisor_override is not None:
        cnt = _st.full(out, divisor_override, dtype=input.dtype, device=input.device)
    else:
        widths = []
        for i in reversed(range(nd)):
            widths += [padding[i], padding[i] + extra[i]]
        w = _st.ones((1, 1) + k, dtype=input.dtype, device=input.device)
        conv = (stride, (0,) * nd, (1,) * nd, 1)
        with no_grad():
            ones = _st.ones((1, 1) + sp, dtype=input.dtype, device=input.device)
            if count_include_pad:  # padding counts, the ceil-mode overhang does not
                m = pad(pad(ones, [p for i in reversed(range(nd)) for p in (padding[i],) * 2],
                            value=1), [e for i in reversed(range(nd)) for e in (0, extra[i])])
            else:
                m = pad(ones, widths)
            cnt = call(_conv_op, (m, w), conv + (tuple(m.shape), tuple(w.shape)), input.dtype)
        cnt = cnt.view(out)
    # torch's 1-D pooling is its 2-D pooling over (*lead, 1, L), then squeeze(-2)
    shape = lead + ((1,) + out if nd == 1 else out)
    y = call(_avg_pool_op, (input,),
             (k, stride, padding, extra, cnt._data, tuple(input.shape), shape))
    return y.squeeze(-2) if nd == 1 else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Applies a 1D average pooling over an input signal composed of several input planes."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Applies 2D average-pooling operation in kH x kW regions by step size sH x sW steps."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ---- adaptive pooling ----

def _adaptive_sizes(fname, input, nd, output_size):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    sp = tuple(input.shape[-nd:])
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * nd
    if len(output_size) != nd:
        raise RuntimeError(f"{fname}: output_size must be {nd}")
    out = tuple(sp[i] if o is None else int(o) for i, o in enumerate(output_size))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{fname}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(map(str, out))}}}")
    return sp, out


def _bounds(n, o):
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _avg_matrix(n, o, dtype, device):
    rows = []
    for a, b in _bounds(n, o):
        rows.append([1.0 / (b - a) if a <= j < b else 0.0 for j in range(n)])
    return _st.tensor(rows, dtype=dtype, device=device)


def _adaptive_avg(nd, fname, input, output_size):
    sp, out = _adaptive_sizes(fname, input, nd, output_size)
    y = input
    for i in range(nd):  # average along each spatial dim with an (o, n) matrix
        if out[i] == sp[i]:
            continue
        m = _avg_matrix(sp[i], out[i], input.dtype, input.device)
        y = _st.matmul(y.movedim(input.ndim - nd + i, -1), m.t()).movedim(-1, input.ndim - nd + i)
    return y if y is not input else input.clone()


def adaptive_avg_pool1d(input, output_size):
    """Applies a 1D adaptive average pooling over an input signal."""
    return _adaptive_avg(1, "adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Applies a 2D adaptive average pooling over an input signal."""
    return _adaptive_avg(2, "adaptive_avg_pool2d", input, output_size)


def _adaptive_max_indices_kernel(be, x, out):
    xp = be.xp
    nd = len(out)
    sp = x.shape[2:]
    idx = xp.zeros(x.shape[:2] + out, dtype=xp.int64)
    bounds = [_bounds(sp[i], out[i]) for i in range(nd)]
    for cell in itertools.product(*(range(o) for o in out)):
        box = [bounds[i][cell[i]] for i in range(nd)]
        sl = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in box)]
        a = xp.argmax(sl.reshape(x.shape[:2] + (-1,)), axis=-1)
        flat = xp.zeros(a.shape, dtype=xp.int64)
        for i in range(nd):
            w = box[i][1] - box[i][0]
            kk = math.prod(b - a_ for a_, b in box[i + 1:])
            flat = flat * sp[i] + box[i][0] + (a // kk) % w
        idx[(slice(None), slice(None)) + cell] = flat
    return idx


_adaptive_max_indices_op = defop("adaptive_max_pool_indices",
                                 {(strided,): _adaptive_max_indices_kernel}, params=("out",))


def _adaptive_max(nd, fname, input, output_size, return_indices):
    _, out = _adaptive_sizes(fname, input, nd, output_size)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    idx = call(_adaptive_max_indices_op, (x.detach(),), (out,), _D.int64)
    if unbatched:
        idx = idx.squeeze(0)
    y = _flat_gather(_adaptive_max_take_op, input, idx, nd)
    return (y, idx) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Applies a 1D adaptive max pooling over an input signal."""
    return _adaptive_max(1, "adaptive_max_pool1d", input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Applies a 2D adaptive max pooling over an input signal."""
    return _adaptive_max(2, "adaptive_max_pool2d", input, output_size, return_indices)
