"""The packed self-attention projection split into per-head q, k, v in one custom Function.

``split_heads(proj, ...)``: ``proj`` is the in-projection ``(N, T, 3 E)`` (batch first) or
``(T, N, 3 E)``; forward is one copy into a ``(3, N * H, T, head_dim)`` buffer whose three slices
are q, k and v. Backward writes the three gradients straight back into one ``(N * T, 3 E)`` array
(missing ones as zeros): one pass, where the composite (view, permute, reshape, three selects)
gave each select a zero-filled copy of the whole buffer and then summed the three (about 7 ms of
a 44 ms MultiheadAttention step at d_model 256, 32 x 64 tokens). Under ``create_graph`` backward
is written with sparsetorch ops (stack, permute, reshape), so higher derivatives stay exact.
On the CPU both copies are numba loops over rows (``nn/_kernels/heads.py``).
"""

from ... import _jit, _ops
from ..._backend import get_backend
from ..._dispatch import wrap
from ..._layout import strided
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import heads as _kh

__all__ = ["split_heads"]


def _layout(bsz, t, h, hd, bf):
    """(shape of proj as 5-D, the permutation to (3, N, H, T, hd), its inverse)."""
    if bf:
        return (bsz, t, 3, h, hd), (2, 0, 3, 1, 4), (1, 3, 0, 2, 4)
    return (t, bsz, 3, h, hd), (2, 1, 3, 0, 4), (3, 1, 0, 2, 4)


class _SplitHeads(Function):
    @staticmethod
    def forward(ctx, proj, bsz, t, h, hd, bf):
        be = get_backend(proj.device)
        xp = be.xp
        shape5, perm, _ = _layout(bsz, t, h, hd, bf)
        src = proj._data.reshape(shape5)
        kern = _kh.kernels(be)
        if kern is not None and src.flags.c_contiguous and src.size:
            qkv = xp.empty((3, bsz, h, t, hd), dtype=src.dtype)
            with _jit.limit(src.size):
                kern[0](src, qkv, bf)
        else:
            qkv = xp.ascontiguousarray(src.transpose(perm))
        qkv = qkv.reshape(3, bsz * h, t, hd)
        ctx.dims = (bsz, t, h, hd, bf)
        ctx.shape = tuple(proj.shape)
        ctx.set_materialize_grads(False)
        dt, dev = proj.dtype, proj.device
        return tuple(wrap(qkv[i], dt, dev, strided) for i in range(3))

    @staticmethod
    def backward(ctx, gq, gk, gv):
        bsz, t, h, hd, bf = ctx.dims
        shape5, _, inv = _layout(bsz, t, h, hd, bf)
        grads = (gq, gk, gv)
        nones = (None,) * 5
        if all(g is None for g in grads):
            return (None,) + nones
        ref = next(g for g in grads if g is not None)
        if is_grad_enabled():  # create_graph: differentiable
            full = [g if g is not None else _ops.zeros_like(ref) for g in grads]
            s = _ops.stack(full).reshape(3, bsz, h, t, hd).permute(*inv)
            return (s.reshape(ctx.shape),) + nones
        be = get_backend(ref.device)
        xp = be.xp
        out = xp.empty(shape5, dtype=ref._data.dtype)
        kern = _kh.kernels(be)
        if kern is not None and out.size:
            arrs = [None if g is None else xp.ascontiguousarray(g._data) for g in grads]
            dummy = next(a for a in arrs if a is not None)
            have = xp.array([a is not None for a in arrs], dtype=xp.uint8)
            a3 = [dummy if a is None else a for a in arrs]
            with _jit.limit(out.size):
                kern[1](a3[0], a3[1], a3[2], have, out, bf)
            return (wrap(out.reshape(ctx.shape), ref.dtype, ref.device, strided),) + nones
        view = out.transpose(_layout(bsz, t, h, hd, bf)[1])  # (3, N, H, T, hd) view of out
        for i, g in enumerate(grads):
            if g is None:
                view[i] = 0
            else:
                view[i] = g._data.reshape(bsz, h, t, hd)
        return (wrap(out.reshape(ctx.shape), ref.dtype, ref.device, strided),) + nones


def split_heads(proj, bsz, t, h, hd, bf):
    """q, k, v ``(N * H, T, hd)`` (contiguous) from the packed projection ``proj``."""
    return _SplitHeads.apply(proj, bsz, t, h, hd, bf)
