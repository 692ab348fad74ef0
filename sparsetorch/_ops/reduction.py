"""Reductions: sum, nansum, mean, nanmean, prod, extrema (amax/amin/max/min/argmax/argmin/
aminmax), and logic (all/any/count_nonzero).

Each op is one ``defop`` (kernels keyed by layout tuple: ``sum``, ``mean``, ``amax`` and ``amin``
also have COO and CSR entries, from ``sparse_reduction.py``; the others are strided only, and a
sparse input gets the dispatcher's NotImplementedError). dtype rules follow torch: ``sum``/``prod`` turn
integer and bool input into int64; ``mean`` accepts floating/complex input only. Reduced ``dim``
arguments are normalized once into ``axes`` (a sorted tuple, or ``None`` for all dims) before
the kernel is called (``_reduce.py``). Statistics, norms, cumulative ops and softmax live in
``statistics.py`` (above this module); sorting, selection and cumulative extrema in
``sorting.py`` (below it).
"""

import builtins

from .. import _dtype as D
from .. import _autocast as _ac
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, defop, record_if_grad, wrap
from .._layout import strided
from .._tensor import Tensor
from ..autograd import profiler as _profiler
from .._variants import method
from ..dense import _par_pointwise as _par
from . import sorting as _sorting
from . import sparse_reduction as _sparse
from ._reduce import (
    _sum_dim_op, _sum_op, check_nonempty, expand_reduced, is_float, keepdims, reduce_axes,
    reduced_count, sum_axes, sum_dtype,
)
from ._util import check_tensor, norm_dim, with_out
from .sorting import _take_along, return_type

S = (strided,)
_PAR_MIN = _par.SUM_MIN_SIZE
_add_reduce, _asarray = CPU.xp.add.reduce, CPU.xp.asarray


# ---- sum, nansum, mean, nanmean ----

@method
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001 - torch's name
    """Sum of ``input`` over ``dim`` (all dims if None); integer and bool input sum to int64.
    COO and CSR input: summing some dims of a COO tensor gives a COO tensor; all dims, or a CSR
    input, give a strided result."""
    if dim is None and dtype is None and out is None and input.__class__ is Tensor \
            and _profiler.ACTIVE is None:  # profiling: via call(), which times the op
        dt = input.dtype
        if dt.is_floating_point and input.layout is strided and dt.itemsize != 2:  # hot path (not float16/bfloat16)
            dev = input.device
            data = input._data
            # a large CPU array: on the thread policy's count, NumPy's value (issue 14)
            if dev is not CPU_DEVICE:
                r = get_backend(dev).xp.asarray(data.sum())
            elif data.size < _PAR_MIN or (r := _par.total(data)) is None:
                r = _asarray(_add_reduce(data, None))  # data.sum()'s value without its Python frame
            t = wrap(r, dt, dev, strided)
            if input._rg:
                record_if_grad(_sum_op, t, (input,), (None, False, data.shape))
            return t
    check_tensor(input, "sum")
    axes = reduce_axes(input, dim, "sum")
    dt = sum_dtype(input.dtype, dtype)
    if input.layout is not strided and dt is not input.dtype:
        input = input.to(dt)  # sparse kernels are composites: they reduce in the input's dtype
    op = _sum_op if dim is None else _sum_dim_op
    r = call(op, (input,), (axes, bool(keepdim), tuple(input.shape)), dt, dt)
    return with_out(r, out, "sum")


def _nansum_kernel(be, x, axes, keepdim):
    if x.dtype in D.REDUCED_NP:  # float32 accumulator (as torch); NumPy's nansum sees no NaN
        return be.xp.asarray(be.xp.nansum(x.astype(be.xp.float32), axes, keepdims=keepdim)).astype(x.dtype)
    return be.xp.asarray(be.xp.nansum(x, axes, keepdims=keepdim))


_nansum_op = defop(
    "nansum", {S: _nansum_kernel},
    params=("axes", "keepdim"),
    grads={"input": lambda grad, input, axes, keepdim:
           expand_reduced(grad, tuple(input.shape), axes, keepdim) * input.isnan().logical_not()},
    zero_preserving=True,
)


@method
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero."""
    check_tensor(input, "nansum")
    axes = reduce_axes(input, dim, "nansum")
    dt = sum_dtype(input.dtype, dtype)
    return with_out(call(_nansum_op, (input,), (axes, bool(keepdim)), dt, dt), out, "nansum")


def _mean_kernel(be, x, axes, keepdim, shape):
    n = reduced_count(x.shape, axes)
    acc = be.xp.float32 if x.dtype in D.REDUCED_NP else None  # float32 accumulator, as torch
    s = be.xp.asarray(x.sum(axes, acc, None, keepdim))
    if n == 0:
        return be.xp.full(s.shape, float("nan"), x.dtype)
    return be.xp.asarray((s / n).astype(x.dtype, copy=False))


_MEAN = dict(
    kernels={S: _mean_kernel, **_sparse.MEAN_KERNELS}, params=("axes", "keepdim", "shape"),
    grads={"input": lambda grad, shape, axes, keepdim:
           expand_reduced(grad, shape, axes, keepdim) / builtins.max(reduced_count(shape, axes), 1)},
)
_mean_op = defop("mean", **_MEAN)  # mean(): MeanBackward0
_mean_dim_op = defop("mean", node_name="MeanBackward1", **_MEAN)  # torch's mean(dim) overload


def _need_float(input, dtype, fname):
    dt = dtype or input.dtype
    if not is_float(dt):
        raise RuntimeError(
            f"{fname}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {dt.scalar_name}"
        )
    return dt


@method
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of ``input`` over ``dim``; floating or complex input (or ``dtype=``) only. COO and
    CSR input as :func:`sum` (the implicit zeros count)."""
    check_tensor(input, "mean")
    dt = _need_float(input, dtype, "mean")
    axes = reduce_axes(input, dim, "mean")
    if input.layout is not strided and dt is not input.dtype:
        input = input.to(dt)
    op = _mean_op if dim is None else _mean_dim_op
    r = call(op, (input,), (axes, bool(keepdim), tuple(input.shape)), dt, dt)
    return with_out(r, out, "mean")


@method
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over the non-NaN elements (NaN where all are NaN)."""
    check_tensor(input, "nanmean")
    if not is_float(input.dtype):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{input.dtype.scalar_name}"
        )
    x = input if dtype is None else input.to(dtype)
    count = sum(x.isnan().logical_not(), dim, keepdim)
    return with_out(nansum(x, dim, keepdim) / count, out, "nanmean")


# ---- prod ----

_prod_op = defop(
    "prod", {S: lambda be, x, axes, keepdim: be.xp.asarray(x.prod(axes, None, None, keepdim))},
    params=("axes", "keepdim"),
    grads={"input": lambda grad, input, axes, keepdim: _prod_backward(grad, input, axes, keepdim)},
)


def _prod_backward(grad, input, axes, keepdim):
    """d prod / d x_i = product of the others, computed without dividing by zero.

    Slices without zeros: prod / x_i. Slices with exactly one zero: only the zero gets a
    gradient (the product of the others). Slices with two or more zeros: all zero.
    """
    from .pointwise import where

    shape = tuple(input.shape)
    g = keepdims(grad, shape, axes, keepdim)
    is_zero = input == 0
    safe = where(is_zero, 1.0, input)
    p_safe = prod_axes(safe, axes, True)
    zeros = sum_axes(is_zero, axes, True)
    no_zero = p_safe / safe
    one_zero = where(is_zero, p_safe, 0.0)
    return g * where(zeros == 0, no_zero, where(zeros == 1, one_zero, 0.0))


def prod_axes(x, axes, keepdim):
    return call(_prod_op, (x,), (axes, keepdim))


@method
@_ac.policy(_ac.FP32)
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product of ``input`` (over one ``dim`` if given); integer and bool input give int64."""
    check_tensor(input, "prod")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    axes = reduce_axes(input, dim, "prod")
    dt = sum_dtype(input.dtype, dtype)
    return with_out(call(_prod_op, (input,), (axes, bool(keepdim)), dt, dt), out, "prod")


# ---- extrema ----

def _amax_backward(grad, input, result, axes, keepdim):
    """The gradient is split evenly among the elements equal to the extreme value (torch)."""
    shape = tuple(input.shape)
    mask = input == keepdims(result, shape, axes, keepdim)
    return keepdims(grad, shape, axes, keepdim) * mask / sum_axes(mask, axes, True)


_amax_op = defop(
    "amax", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.amax(x, axes, keepdims=keepdim)),
             **_sparse.AMAX_KERNELS},
    params=("axes", "keepdim"), grads={"input": _amax_backward},
)
_amin_op = defop(
    "amin", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.amin(x, axes, keepdims=keepdim)),
             **_sparse.AMIN_KERNELS},
    params=("axes", "keepdim"), grads={"input": _amax_backward},
)
# max() / min() over all elements: the same reduction (ties share the gradient, as torch's
# evenly distributed backward) under torch's names, MaxBackward1 / MinBackward1
_max_all_op = defop("max", _amax_op.kernels, params=("axes", "keepdim"),
                    grads={"input": _amax_backward}, node_name="MaxBackward1")
_min_all_op = defop("min", _amin_op.kernels, params=("axes", "keepdim"),
                    grads={"input": _amax_backward}, node_name="MinBackward1")


def _extreme(op, input, dim, keepdim, fname, explicit):
    axes = reduce_axes(input, dim, fname)
    check_nonempty(input, axes, fname, explicit)
    return call(op, (input,), (axes, bool(keepdim)))


@method
def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims by default); ties share the gradient evenly. COO and CSR
    input as :func:`sum` (the implicit zeros count)."""
    check_tensor(input, "amax")
    explicit = dim is not None and dim != () and dim != []
    return with_out(_extreme(_amax_op, input, dim, keepdim, "amax", explicit), out, "amax")


@method
def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims by default); ties share the gradient evenly. COO and CSR
    input as :func:`sum` (the implicit zeros count)."""
    check_tensor(input, "amin")
    explicit = dim is not None and dim != () and dim != []
    return with_out(_extreme(_amin_op, input, dim, keepdim, "amin", explicit), out, "amin")


max_return = return_type("max", ("values", "indices"))
min_return = return_type("min", ("values", "indices"))
aminmax_return = return_type("aminmax", ("min", "max"))


def _max_min(input, dim, keepdim, out, fname, op, is_max):
    check_tensor(input, fname)
    if isinstance(dim, Tensor):  # max(input, other): elementwise
        from . import pointwise

        return (pointwise.maximum if is_max else pointwise.minimum)(input, dim, out=out)
    if dim is None:
        if keepdim:
            raise TypeError(f"{fname}(): keepdim=True needs a 'dim' argument")
        return with_out(_extreme(op, input, None, False, fname, False), out, fname)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(
            f"{fname}(): argument 'dim' must be int (or 'other' a Tensor), not {type(dim).__name__}"
        )
    _no_sparse_indices(input, fname)
    d = norm_dim(dim, input.ndim, fname)
    check_nonempty(input, (d,), fname, True)
    idx = _sorting.arg_extreme(input, d, True, is_max)
    take = _sorting.TAKE_MAX if is_max else _sorting.TAKE_MIN  # MaxBackward0 / MinBackward0
    values = _take_along(input, idx, d, not keepdim, False, take)
    indices = wrap(idx if keepdim or input.ndim == 0 else idx.squeeze(d), D.int64, input.device, strided)
    r = (max_return if is_max else min_return)((values, indices))
    return _sorting.write_tuple_out(r, out, fname)


@method
def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """``max(input)``: the largest value; ``max(input, dim, keepdim)``: (values, indices) along
    ``dim`` (the gradient goes to the one element at ``indices``); ``max(input, other)``:
    elementwise maximum."""
    return _max_min(input, dim, keepdim, out, "max", _max_all_op, True)


@method
def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """``min(input)``, ``min(input, dim, keepdim)`` -> (values, indices), or ``min(input, other)``."""
    return _max_min(input, dim, keepdim, out, "min", _min_all_op, False)


def _no_sparse_indices(input, fname):
    if input.layout is not strided:
        raise NotImplementedError(
            f"{fname}: indices of the extreme values are not implemented for layout "
            f"{input.layout.name}; use amax/amin for the values (sparse), or call .to_dense() first"
        )


@method
def argmax(input, dim=None, keepdim=False):
    """Index of the (first) largest value, over the flattened input if ``dim`` is None."""
    check_tensor(input, "argmax")
    _no_sparse_indices(input, "argmax")
    return _sorting.argextreme_public(input, dim, keepdim, "argmax", True)


@method
def argmin(input, dim=None, keepdim=False):
    """Index of the (first) smallest value, over the flattened input if ``dim`` is None."""
    check_tensor(input, "argmin")
    _no_sparse_indices(input, "argmin")
    return _sorting.argextreme_public(input, dim, keepdim, "argmin", False)


@method
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) of ``input`` over ``dim`` (all dims if None)."""
    check_tensor(input, "aminmax")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    axes = reduce_axes(input, dim, "aminmax")
    reduced = range(input.ndim) if axes is None else axes
    if input.numel() == 0 and builtins.any(input.shape[d] == 0 for d in reduced):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    r = aminmax_return((call(_amin_op, (input,), (axes, bool(keepdim))),
                        call(_amax_op, (input,), (axes, bool(keepdim)))))
    return _sorting.write_tuple_out(r, out, "aminmax")


# ---- logic: all, any, count_nonzero ----

_all_op = defop("all", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.all(x, axes, keepdims=keepdim))},
                params=("axes", "keepdim"))
_any_op = defop("any", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.any(x, axes, keepdims=keepdim))},
                params=("axes", "keepdim"), zero_preserving=True)


@method
def all(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """True if every element (over ``dim``) is nonzero; uint8 input gives uint8, as in torch."""
    check_tensor(input, "all")
    dt = D.uint8 if input.dtype is D.uint8 else D.bool
    r = call(_all_op, (input,), (reduce_axes(input, dim, "all"), bool(keepdim)), dt, None)
    return with_out(r, out, "all")


@method
def any(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """True if any element (over ``dim``) is nonzero; uint8 input gives uint8, as in torch."""
    check_tensor(input, "any")
    dt = D.uint8 if input.dtype is D.uint8 else D.bool
    r = call(_any_op, (input,), (reduce_axes(input, dim, "any"), bool(keepdim)), dt, None)
    return with_out(r, out, "any")


_count_nonzero_op = defop(
    "count_nonzero", {S: lambda be, x, axes: be.xp.asarray((x != 0).sum(axes))}, params=("axes",))


@method
def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (int64)."""
    check_tensor(input, "count_nonzero")
    axes = reduce_axes(input, dim, "count_nonzero")
    return call(_count_nonzero_op, (input,), (axes,), D.int64, None)


__all__ = [
    "sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
    "aminmax", "all", "any", "count_nonzero",
]
