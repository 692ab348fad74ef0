"""Masked ops and nonzero of the indexing family (above :mod:`.indexing`):
masked_fill, masked_select, masked_scatter (with broadcasting of input and mask), nonzero,
argwhere."""

from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from ._util import check_tensor, with_out
from .indexing import _value_for, put_key
from ..dense.indexing import (  # noqa: F401 - the strided kernels of these ops
    _masked_select_kernel, _masked_scatter_kernel,
)
from .._variants import method

__all__ = [
    "argwhere", "masked_fill", "masked_scatter", "masked_select",
    "nonzero",
]

S = (strided,)
SS = (strided, strided)


# ---- masked ops ----

def _check_mask(mask, fname):
    check_tensor(mask, fname, "mask")
    if mask.dtype is not D.bool:
        raise RuntimeError(
            f"{fname} only supports boolean masks, but got mask with dtype {mask.dtype.name}"
        )


_masked_fill_op = defop(
    "masked_fill", {SS: lambda be, x, m, value: be.xp.where(m, value, x)}, inputs=("input", "mask"),
    params=("value",), grads={"input": lambda grad, mask: grad.masked_fill(mask, 0)},
)
_masked_fill_t_op = defop(
    "masked_fill", {(strided,) * 3: lambda be, x, m, v: be.xp.where(m, v.astype(x.dtype), x)},
    inputs=("input", "mask", "value"),
    grads={"input": lambda grad, mask: grad.masked_fill(mask, 0),
           "value": lambda grad, mask: _where(mask, grad, 0.0).sum()},
)


def _where(c, a, b):
    from .pointwise import where

    return where(c, a, b)


@method(inplace=True)
def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or 0-d tensor) where the bool ``mask`` is True."""
    check_tensor(input, "masked_fill")
    _check_mask(mask, "masked_fill_")
    dt = input.dtype
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        return call(_masked_fill_t_op, (input, mask, value), (), dt)
    value = _value_for(input, value, "masked_fill")
    return call(_masked_fill_op, (input, mask), (value,), dt)


def _masked_select_backward(grad, mask, bshape):
    return grad.new_zeros(bshape).masked_scatter(mask, grad)


_masked_select_op = defop(
    "masked_select", {SS: _masked_select_kernel}, inputs=("input", "mask"), params=("bshape",),
    grads={"input": _masked_select_backward},
)


def _bshape(a, b):
    from ._join import broadcast_shapes

    return tuple(broadcast_shapes(tuple(a.shape), tuple(b.shape)))


@method
def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (both broadcast)."""
    check_tensor(input, "masked_select")
    check_tensor(mask, "masked_select", "mask")
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    r = call(_masked_select_op, (input, mask), (_bshape(input, mask),))
    return with_out(r, out, "masked_select")


def _masked_scatter_source_backward(grad, mask, source_shape):
    """Source element i went to the i-th True of the mask; the unused tail gets zeros."""
    g = grad.masked_select(mask)
    numel = 1
    for s in source_shape:
        numel *= s
    full = put_key(grad.new_zeros((numel,)), (slice(0, g.numel()),), g, False, True)
    return full.reshape(source_shape)


_masked_scatter_op = defop(
    "masked_scatter", {(strided,) * 3: _masked_scatter_kernel}, inputs=("input", "mask", "source"),
    params=("source_shape",),
    grads={"input": lambda grad, mask: grad.masked_fill(mask, 0),
           "source": _masked_scatter_source_backward},
)


@method(inplace=True)
def masked_scatter(input, mask, source):
    """``input`` with the True positions of ``mask`` filled, in order, from ``source``."""
    check_tensor(input, "masked_scatter")
    check_tensor(source, "masked_scatter", "source")
    _check_mask(mask, "masked_scatter_")
    if source.dtype is not input.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got "
            f"{input.dtype.name} and {source.dtype.name}"
        )
    return call(_masked_scatter_op, (input, mask, source), (tuple(source.shape),))


# ---- nonzero ----

_nonzero_op = defop("nonzero", {S: lambda be, x: be.xp.argwhere(x).astype(D.int64.np, copy=False)})


@method
def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the nonzero elements: an ``[n, ndim]`` int64 tensor, or a tuple of 1-D ones."""
    check_tensor(input, "nonzero")
    r = call(_nonzero_op, (input,), (), D.int64)
    if not as_tuple:
        return with_out(r, out, "nonzero")
    if input.ndim == 0:
        return (_first_col(r),)
    return tuple(r[:, i] for i in range(input.ndim))


def _first_col(r):
    """as_tuple for a 0-d input: ``(tensor([0]),)`` if it is nonzero, else an empty index."""
    from .creation import zeros

    return zeros((r.shape[0],), dtype=D.int64, device=r.device)


@method
def argwhere(input):
    """Indices of the nonzero elements as an ``[n, ndim]`` tensor (same as ``nonzero``)."""
    return nonzero(input)
