"""Dropout in one pass (``nn/_kernels/dropout.py``): the mask drawn from torch's stream and
applied in the same loop, one node with torch's name (``MulBackward0``: torch's CPU dropout is
``input * noise``), the kept flags as uint8 for backward.

``dropout_fused(x, p)`` is ``F.dropout(x, p, True)`` value for value and draw for draw, where
``usable(x, p)``: a CPU float32 / float64 strided tensor, 0 < p < 1, numba on (callers fall back to
``F.dropout`` otherwise). ``order``: the dims of ``x`` in the memory order torch's tensor would
have (``(1, 0, 2)`` for the batch-first attention output, which torch holds as a transposed view
and draws for in memory order), else None (x's own order).
"""

import math

from ... import _ops
from ..._backend import get_backend
from ..._device import CPU as CPU_DEVICE
from ..._dispatch import call, defop, wrap
from ..._dtype import float32, float64
from ..._generator import default_generator
from ..._layout import strided
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import dropout as _kd

__all__ = ["draw_into", "dropout_fused", "undrop_", "usable"]

_SCALES = {}  # (dtype name, p) -> the scale torch's noise.div_(1 - p) gives, in that dtype
_PERMS = {}  # (shape, order) -> flat draw-order indices


class _Saved:
    """What the kernel leaves for the derivative: the kept flags and the scale."""

    __slots__ = ("keep", "scale")


def _scale(dt, p):
    s = _SCALES.get((dt.name, p))
    if s is None:  # the kept value of F.dropout's own steps: ones(1).div_(1 - p)
        s = _ops.ones(1, dtype=dt).div_(1.0 - p)._data[0]
        _SCALES[(dt.name, p)] = s
    return s


def _perm(xp, shape, order):
    key = (shape, order)
    pm = _PERMS.get(key)
    if pm is None:
        n = 1
        for s in shape:
            n *= s
        pm = xp.arange(n, dtype=xp.int64).reshape(shape).transpose(order).reshape(-1).copy()
        if len(_PERMS) > 8:
            _PERMS.clear()
        _PERMS[key] = pm
    return pm


def draw_into(be, x, out, p, order=None):
    """Payload level: ``out[...] = dropout(x, p)`` for a C-contiguous float32/float64 array ``x``
    (``out`` like it) from the default generator; returns the ``_Saved`` flags and scale."""
    xp = be.xp
    draw, _ = _kd.kernels(be)
    saved = _Saved()
    keep = xp.empty(x.shape, dtype=xp.uint8)
    scale = _scale(_DT[x.dtype.name], p)
    if order is None:
        perm, use = _NO_PERM[0], False
        if perm is None:
            perm = _NO_PERM[0] = xp.empty(0, dtype=xp.int64)
    else:
        perm, use = _perm(xp, x.shape, order), True
    t = math.ceil((1.0 - p) * 9007199254740992.0)  # u < 1 - p  <=>  k < ceil((1 - p) 2**53)
    draw(default_generator._engine_words(), x.reshape(-1), out.reshape(-1), keep.reshape(-1),
         t >> 32, t & 0xFFFFFFFF, scale, perm, use)
    saved.keep = keep
    saved.scale = scale
    return saved


def undrop_(be, g, saved):
    """Payload level, in place: ``g *= mask`` (C-contiguous ``g`` of the flags' shape)."""
    _kd.kernels(be)[1](g.reshape(-1), saved.keep.reshape(-1), saved.scale, g.reshape(-1))
    return g


def _forward(be, x, box, p, order):
    x = be.xp.ascontiguousarray(x)
    out = be.xp.empty_like(x)
    s = draw_into(be, x, out, p, order)
    box.keep, box.scale = s.keep, s.scale
    return out


_NO_PERM = [None]
_DT = {"float32": float32, "float64": float64}


def _grad(grad, saved):
    keep = saved.keep
    be = get_backend(grad.device)
    xp = be.xp
    if not is_grad_enabled() and grad.layout is strided and grad.dtype.np == saved.scale.dtype:
        _, backward = _kd.kernels(be)
        g = xp.ascontiguousarray(grad._data)
        out = xp.empty(g.shape, dtype=g.dtype)
        backward(g.reshape(-1), keep.reshape(-1), saved.scale, out.reshape(-1))
        return wrap(out.reshape(keep.shape), grad.dtype, grad.device, strided)
    m = keep.astype(saved.scale.dtype) * saved.scale  # create_graph: grad * noise, differentiable
    return grad * wrap(m, grad.dtype, grad.device, strided)


dropout_op = defop("dropout_fused", {(strided,): _forward}, inputs=("input",),
                   params=("saved", "p", "order"), grads={"input": _grad},
                   node_name="MulBackward0")


def usable(x, p):
    """True when ``dropout_fused`` gives ``F.dropout(x, p, True)``'s values and draws."""
    return (0.0 < p < 1.0 and x.device is CPU_DEVICE and x.layout is strided
            and (x.dtype is float32 or x.dtype is float64)
            and x._data.flags.c_contiguous  # else torch draws in the memory order: F.dropout
            and _kd.kernels(get_backend(x.device)) is not None)


def dropout_fused(x, p, order=None):
    """``F.dropout(x, p, training=True)`` in one pass (check ``usable(x, p)`` first)."""
    return call(dropout_op, (x,), (_Saved(), float(p), order))
