"""Reductions: sums and means, products, extrema, statistics, norms, logic, cumulative ops, softmax.

Each op is one ``defop`` (kernels keyed by layout tuple: only the strided kernels exist so far;
sparse kernels are later new dict entries). dtype rules follow torch: ``sum``/``prod``/``cumsum``
turn integer and bool input into int64, ``mean``/``std``/``var`` accept floating/complex input
only, ``norm``/``std``/``var`` of complex input are real. Reduced ``dim`` arguments are normalized
once into ``axes`` (a sorted tuple, or ``None`` for all dims) before the kernel is called.
Sorting, selection and cumulative extrema live in ``sorting.py`` and are re-exported here.
"""

import builtins
import contextlib
import math

from .. import _dtype as D
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, defop, record, wrap
from .._layout import strided
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD_ENABLED
from . import sorting as _sorting
from ._util import check_tensor, norm_dim, norm_dims, with_out
from .sorting import (  # noqa: F401 - re-exported public ops
    argsort, cummax, cummin, kthvalue, median, sort, topk,
)
from .sorting import _take_along, return_type

S = (strided,)
_grad_enabled = GRAD_ENABLED.get
_inf = float("inf")

TORCH_NAME = {  # torch's ScalarType names, used in messages ("Got: Long")
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def _is_float(dt):
    return dt.is_floating_point or dt.is_complex


def quiet(be):
    """Silence NumPy's floating-point warnings (log(0), 0/0) where torch is silent."""
    errstate = getattr(be.xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def _be(t):
    return CPU if t.device is CPU_DEVICE else get_backend(t.device)


# ---- dim handling ----

def reduce_axes(input, dim, fname):
    """``dim`` (None / int / tuple / list; empty means all) -> sorted axes tuple, or None for all."""
    nd = input.ndim
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        axes = norm_dims(dim, nd, fname)
    else:
        axes = (norm_dim(dim, nd, fname),)
    if nd == 0 or len(axes) == nd:
        return None
    return axes


def keep_shape(shape, axes):
    """``shape`` with the reduced ``axes`` set to 1 (what ``keepdim=True`` gives)."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def reduced_count(shape, axes):
    n = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            n *= s
    return n


def _check_nonempty(input, axes, fname, explicit_dim):
    """torch's errors for max-like reductions (no identity) over empty input."""
    shape = input.shape
    if input.numel() != 0:
        return
    if not explicit_dim:
        raise RuntimeError(
            f"{fname}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for i, s in enumerate(shape):
        if s == 0 and (axes is None or i in axes):
            raise IndexError(f"{fname}(): Expected reduction dim {i} to have non-zero size.")


# ---- private helpers used by derivative formulas ----

_reshape_op = defop(
    "_reshape_alias", {S: lambda be, x, shape, src_shape: x.reshape(shape)},
    params=("shape", "src_shape"),
    grads={"input": lambda grad, src_shape: reshape_to(grad, src_shape)},
)


def reshape_to(x, shape):
    """``x`` reshaped to ``shape`` (internal; used by formulas so it needs no shape module)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    return call(_reshape_op, (x,), (shape, tuple(x.shape)))


def keepdims(grad, shape, axes, keepdim):
    """A reduced gradient with its reduced dims restored as size 1 (broadcastable to ``shape``)."""
    if keepdim:
        return grad
    return reshape_to(grad, keep_shape(shape, axes))


def _expand_kernel(be, g, shape, axes, keepdim):
    if not keepdim and axes is not None:
        g = g.reshape(keep_shape(shape, axes))
    out = be.xp.empty(shape, g.dtype)
    out[...] = g  # a fresh array: the engine can hand it to .grad without a copy
    return out


_expand_op = defop(
    "_expand_reduced", {S: _expand_kernel}, params=("shape", "axes", "keepdim"),
    grads={"input": lambda grad, axes, keepdim: sum_axes(grad, axes, keepdim)},
)


def expand_reduced(grad, shape, axes, keepdim):
    """The gradient of a sum: ``grad`` broadcast back over the reduced ``axes`` of ``shape``."""
    if grad._rg and _grad_enabled() or grad.layout is not strided:
        return call(_expand_op, (grad,), (shape, axes, keepdim))
    return wrap(_expand_kernel(_be(grad), grad._data, shape, axes, keepdim), grad.dtype,
                grad.device, strided)


# ---- sum, nansum, mean, nanmean ----

def _sum_kernel(be, x, axes, keepdim, shape):
    return be.xp.asarray(x.sum(axes, None, None, keepdim))


_sum_op = defop(
    "sum", {S: _sum_kernel}, params=("axes", "keepdim", "shape"),
    grads={"input": lambda grad, shape, axes, keepdim: expand_reduced(grad, shape, axes, keepdim)},
    zero_preserving=True,
)


def sum_dtype(dt, dtype):
    """torch's accumulate dtype: ``dtype`` if given, else floats keep theirs, ints/bool -> int64."""
    if dtype is not None:
        return dtype
    return dt if (dt.is_floating_point or dt.is_complex) else D.int64


def sum_axes(x, axes, keepdim=False):
    """``sum`` over already-normalized ``axes`` (None: all), as the formulas need it."""
    dt = sum_dtype(x.dtype, None)
    return call(_sum_op, (x,), (axes, keepdim, tuple(x.shape)), dt, dt)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001 - torch's name
    """Sum of ``input`` over ``dim`` (all dims if None); integer and bool input sum to int64."""
    if dim is None and dtype is None and out is None and input.__class__ is Tensor:
        dt = input.dtype
        if dt.is_floating_point and input.layout is strided:  # the hot path: loss = x.sum()
            dev = input.device
            be = CPU if dev is CPU_DEVICE else get_backend(dev)
            data = input._data
            t = wrap(be.xp.asarray(data.sum()), dt, dev, strided)
            if input._rg and _grad_enabled():
                record(_sum_op, t, (input,), (None, False, data.shape))
            return t
    check_tensor(input, "sum")
    axes = reduce_axes(input, dim, "sum")
    dt = sum_dtype(input.dtype, dtype)
    r = call(_sum_op, (input,), (axes, bool(keepdim), tuple(input.shape)), dt, dt)
    return with_out(r, out, "sum")


_nansum_op = defop(
    "nansum", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.nansum(x, axes, keepdims=keepdim))},
    params=("axes", "keepdim"),
    grads={"input": lambda grad, input, axes, keepdim:
           expand_reduced(grad, tuple(input.shape), axes, keepdim) * input.isnan().logical_not()},
    zero_preserving=True,
)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero."""
    check_tensor(input, "nansum")
    axes = reduce_axes(input, dim, "nansum")
    dt = sum_dtype(input.dtype, dtype)
    return with_out(call(_nansum_op, (input,), (axes, bool(keepdim)), dt, dt), out, "nansum")


def _mean_kernel(be, x, axes, keepdim, shape):
    n = reduced_count(x.shape, axes)
    s = be.xp.asarray(x.sum(axes, None, None, keepdim))
    if n == 0:
        return be.xp.full(s.shape, float("nan"), s.dtype)
    return be.xp.asarray(s / n)


_mean_op = defop(
    "mean", {S: _mean_kernel}, params=("axes", "keepdim", "shape"),
    grads={"input": lambda grad, shape, axes, keepdim:
           expand_reduced(grad, shape, axes, keepdim) / builtins.max(reduced_count(shape, axes), 1)},
)


def _need_float(input, dtype, fname):
    dt = dtype or input.dtype
    if not _is_float(dt):
        raise RuntimeError(
            f"{fname}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {TORCH_NAME[dt.name]}"
        )
    return dt


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of ``input`` over ``dim``; floating or complex input (or ``dtype=``) only."""
    check_tensor(input, "mean")
    dt = _need_float(input, dtype, "mean")
    axes = reduce_axes(input, dim, "mean")
    r = call(_mean_op, (input,), (axes, bool(keepdim), tuple(input.shape)), dt, dt)
    return with_out(r, out, "mean")


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over the non-NaN elements (NaN where all are NaN)."""
    check_tensor(input, "nanmean")
    if not _is_float(input.dtype):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{TORCH_NAME[input.dtype.name]}"
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
    "amax", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.amax(x, axes, keepdims=keepdim))},
    params=("axes", "keepdim"), grads={"input": _amax_backward},
)
_amin_op = defop(
    "amin", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.amin(x, axes, keepdims=keepdim))},
    params=("axes", "keepdim"), grads={"input": _amax_backward},
)


def _extreme(op, input, dim, keepdim, fname, explicit):
    axes = reduce_axes(input, dim, fname)
    _check_nonempty(input, axes, fname, explicit)
    return call(op, (input,), (axes, bool(keepdim)))


def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims by default); ties share the gradient evenly."""
    check_tensor(input, "amax")
    explicit = dim is not None and dim != () and dim != []
    return with_out(_extreme(_amax_op, input, dim, keepdim, "amax", explicit), out, "amax")


def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims by default); ties share the gradient evenly."""
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
    d = norm_dim(dim, input.ndim, fname)
    _check_nonempty(input, (d,), fname, True)
    idx = _sorting.arg_extreme(input, d, True, is_max)
    values = _take_along(input, idx, d, not keepdim)
    indices = wrap(idx if keepdim or input.ndim == 0 else idx.squeeze(d), D.int64, input.device, strided)
    r = (max_return if is_max else min_return)((values, indices))
    return _sorting.write_tuple_out(r, out, fname)


def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """``max(input)``: the largest value; ``max(input, dim, keepdim)``: (values, indices) along
    ``dim`` (the gradient goes to the one element at ``indices``); ``max(input, other)``:
    elementwise maximum."""
    return _max_min(input, dim, keepdim, out, "max", _amax_op, True)


def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """``min(input)``, ``min(input, dim, keepdim)`` -> (values, indices), or ``min(input, other)``."""
    return _max_min(input, dim, keepdim, out, "min", _amin_op, False)


def argmax(input, dim=None, keepdim=False):
    """Index of the (first) largest value, over the flattened input if ``dim`` is None."""
    return _sorting.argextreme_public(input, dim, keepdim, "argmax", True)


def argmin(input, dim=None, keepdim=False):
    """Index of the (first) smallest value, over the flattened input if ``dim`` is None."""
    return _sorting.argextreme_public(input, dim, keepdim, "argmin", False)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) of ``input`` over ``dim`` (all dims if None)."""
    check_tensor(input, "aminmax")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    axes = reduce_axes(input, dim, "aminmax")
    if input.numel() == 0 and (dim is None or input.shape[norm_dim(dim, input.ndim)] == 0 if input.ndim else True):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    r = aminmax_return((call(_amin_op, (input,), (axes, bool(keepdim))),
                        call(_amax_op, (input,), (axes, bool(keepdim)))))
    return _sorting.write_tuple_out(r, out, "aminmax")


# ---- statistics: var, std ----

def _var_kernel(be, x, axes, keepdim, correction, take_sqrt):
    xp = be.xp
    n = reduced_count(x.shape, axes)
    with quiet(be):
        m = x.sum(axes, None, None, True) / builtins.max(n, 1)
        d = x - m
        sq = (d.real * d.real + d.imag * d.imag) if d.dtype.kind == "c" else d * d
        s = xp.asarray(sq.sum(axes, None, None, keepdim))
        denom = builtins.max(n - correction, 0)
        if denom == 0:  # torch: sum / 0 (nan for 0/0, inf otherwise), with a warning
            r = xp.where(s == 0, float("nan"), _inf).astype(s.dtype)
        else:
            r = xp.asarray(s / denom)
        return xp.asarray(xp.sqrt(r)) if take_sqrt else r


def _var_backward(grad, input, axes, keepdim, correction):
    shape = tuple(input.shape)
    n = reduced_count(shape, axes)
    denom = n - correction
    scale = 2.0 / denom if denom > 0 else float("nan")
    centered = input - mean(input, axes if axes is not None else None, True)
    return keepdims(grad, shape, axes, keepdim) * scale * centered


def _std_backward(grad, input, result, axes, keepdim, correction):
    """d std = d var / (2 std), and 0 where std == 0 (as torch masks it)."""
    from .pointwise import where

    safe = where(result == 0, _inf, result)
    return _var_backward(grad / (2 * safe), input, axes, keepdim, correction)


_var_op = defop(
    "var", {S: lambda be, x, axes, keepdim, correction: _var_kernel(be, x, axes, keepdim, correction, False)},
    params=("axes", "keepdim", "correction"), grads={"input": _var_backward},
)
_std_op = defop(
    "std", {S: lambda be, x, axes, keepdim, correction: _var_kernel(be, x, axes, keepdim, correction, True)},
    params=("axes", "keepdim", "correction"), grads={"input": _std_backward},
)


def _correction(dim, unbiased, correction, fname):
    if isinstance(dim, bool):  # std(input, unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fname}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _var_std(op, input, dim, unbiased, keepdim, correction, fname):
    check_tensor(input, fname)
    if not _is_float(input.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dim, correction = _correction(dim, unbiased, correction, fname)
    axes = reduce_axes(input, dim, fname)
    dt = input.dtype.to_real()
    return call(op, (input,), (axes, bool(keepdim), correction), dt, None)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means 0)."""
    return with_out(_var_std(_var_op, input, dim, unbiased, keepdim, correction, "var"), out, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over ``dim`` (see :func:`var`); its gradient is 0 where it is 0."""
    return with_out(_var_std(_std_op, input, dim, unbiased, keepdim, correction, "std"), out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over ``dim``."""
    v = var(input, dim, unbiased, keepdim, correction=correction)
    d = None if isinstance(dim, bool) else dim
    return v, mean(input, d, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over ``dim``."""
    s = std(input, dim, unbiased, keepdim, correction=correction)
    d = None if isinstance(dim, bool) else dim
    return s, mean(input, d, keepdim)


# ---- norms ----

def _norm_kernel(be, x, p, axes, keepdim):
    xp = be.xp
    a = xp.abs(x)
    if p == 2:
        return xp.asarray(xp.sqrt((a * a).sum(axes, None, None, keepdim)))
    if p == 1:
        return xp.asarray(a.sum(axes, None, None, keepdim))
    if p == _inf:
        return xp.asarray(xp.amax(a, axes, keepdims=keepdim))
    if p == -_inf:
        return xp.asarray(xp.amin(a, axes, keepdims=keepdim))
    if p == 0:
        return xp.asarray((a != 0).sum(axes, keepdims=keepdim)).astype(a.dtype)
    with quiet(be):
        return xp.asarray(xp.asarray((a ** p).sum(axes, None, None, keepdim)) ** (1.0 / p))


def _norm_backward(grad, input, result, p, axes, keepdim):
    from .pointwise import where

    shape = tuple(input.shape)
    g = keepdims(grad, shape, axes, keepdim)
    r = keepdims(result, shape, axes, keepdim)
    if p == 0:
        return input * 0
    if p == 1:
        return g * input.sgn()
    if p == 2:  # x / |x|, and 0 at the origin (torch's subgradient)
        return g * input / where(r == 0, _inf, r)
    if p == _inf or p == -_inf:
        mask = input.abs() == r
        return g * input.sgn() * mask / sum_axes(mask, axes, True)
    a = input.abs()
    safe_r = where(r == 0, 1.0, r)
    d = input * where(input == 0, 0.0, a) ** (p - 2) / safe_r ** (p - 1)
    return g * where(r == 0, 0.0, where(input == 0, 0.0, d))


_norm_op = defop("norm", {S: _norm_kernel}, params=("p", "axes", "keepdim"),
                 grads={"input": _norm_backward})


def _nuc_kernel(be, x, axes, keepdim):
    xp = be.xp
    d1, d2 = axes
    rest = [i for i in range(x.ndim) if i not in axes]
    m = xp.transpose(x, rest + [d1, d2])
    r = xp.linalg.svd(m, compute_uv=False).sum(-1)
    if keepdim:
        r = r.reshape(keep_shape(x.shape, axes))
    return xp.asarray(r)


def _nuc_backward(grad):
    raise RuntimeError("norm(): the derivative for p='nuc' is not implemented; use p='fro' or 2")


_nuc_op = defop("norm_nuc", {S: _nuc_kernel}, params=("axes", "keepdim"),
                grads={"input": _nuc_backward})


def vector_norm(input, p, axes, keepdim, fname="linalg.vector_norm"):
    if (p == _inf or p == -_inf) and input.numel() == 0:
        for i, s in enumerate(input.shape):
            if s == 0 and (axes is None or i in axes):
                raise RuntimeError(
                    f"{fname} cannot compute the {p} norm on the dimension {i} because this "
                    "dimension is empty and the operation does not have an identity"
                )
    return call(_norm_op, (input,), (p, axes, bool(keepdim)), input.dtype.to_real(), None)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """Vector p-norm over ``dim`` (all dims if None), or a matrix norm for ``p='fro'``/``'nuc'``.

    ``p``: 'fro' (2-norm of the selected elements), 'nuc' (sum of singular values of the
    matrices over a 2-tuple ``dim``), or a number: inf / -inf (max / min of ``|x|``), 0 (count
    of nonzeros), or any other ``p`` as ``sum(|x|**p) ** (1/p)``. The 2-norm has gradient 0 at 0.
    """
    check_tensor(input, "norm")
    x = input if dtype is None else input.to(dtype)
    if not _is_float(x.dtype):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{TORCH_NAME[x.dtype.name]}"
        )
    dims = dim if isinstance(dim, (tuple, list)) or dim is None else (dim,)
    if isinstance(p, str):
        if p == "fro":
            if dims is not None and len(dims) > 2:
                raise RuntimeError(
                    f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}"
                )
            p = 2
        elif p == "nuc":
            if dims is None and x.ndim == 2:
                dims = (0, 1)
            if dims is None or len(dims) != 2:
                got = " ".join(map(str, dims)) if dims is not None else ""
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
            d = tuple(norm_dim(i, x.ndim, "norm") for i in dims)
            r = call(_nuc_op, (x,), (d, bool(keepdim)), x.dtype.to_real(), None)
            return with_out(r, out, "norm")
        else:
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro'/'nuc', not {type(p).__name__}")
    axes = reduce_axes(x, dims, "norm")
    return with_out(vector_norm(x, float(p), axes, keepdim), out, "norm")


def dist(input, other, p=2):
    """p-norm of ``input - other`` (broadcasting)."""
    check_tensor(input, "dist")
    check_tensor(other, "dist", "other")
    for t in (input, other):
        if not _is_float(t.dtype):
            raise RuntimeError(
                "norm(): input dtype should be either floating point or complex. Got "
                f"{TORCH_NAME[t.dtype.name]} instead."
            )
    return norm(input - other, float(p))


# ---- logsumexp ----

def _logsumexp_kernel(be, x, axes, keepdim):
    xp = be.xp
    if x.size == 0:
        shape = keep_shape(x.shape, axes) if keepdim else tuple(
            s for i, s in enumerate(x.shape) if axes is not None and i not in axes)
        return xp.full(shape, -_inf, x.dtype)
    m = xp.amax(x, axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # rows of -inf (or inf) must not give inf - inf
    with quiet(be):
        r = xp.log(xp.exp(x - m).sum(axes, None, None, True)) + m
    if not keepdim:
        r = r.reshape([s for i, s in enumerate(r.shape) if axes is not None and i not in axes])
    return xp.asarray(r)


_logsumexp_op = defop(
    "logsumexp", {S: _logsumexp_kernel}, params=("axes", "keepdim"),
    grads={"input": lambda grad, input, result, axes, keepdim:
           keepdims(grad, tuple(input.shape), axes, keepdim)
           * (input - keepdims(result, tuple(input.shape), axes, keepdim)).exp()},
)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (the max is subtracted first)."""
    check_tensor(input, "logsumexp")
    dt = input.dtype if _is_float(input.dtype) else D.get_default_dtype()
    axes = reduce_axes(input, dim, "logsumexp")
    return with_out(call(_logsumexp_op, (input,), (axes, bool(keepdim)), dt, dt), out, "logsumexp")


# ---- logic: all, any, count_nonzero ----

_all_op = defop("all", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.all(x, axes, keepdims=keepdim))},
                params=("axes", "keepdim"))
_any_op = defop("any", {S: lambda be, x, axes, keepdim: be.xp.asarray(be.xp.any(x, axes, keepdims=keepdim))},
                params=("axes", "keepdim"), zero_preserving=True)


def all(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """True if every element (over ``dim``) is nonzero; uint8 input gives uint8, as in torch."""
    check_tensor(input, "all")
    dt = D.uint8 if input.dtype is D.uint8 else D.bool
    r = call(_all_op, (input,), (reduce_axes(input, dim, "all"), bool(keepdim)), dt, None)
    return with_out(r, out, "all")


def any(input, dim=None, keepdim=False, *, out=None):  # noqa: A001 - torch's name
    """True if any element (over ``dim``) is nonzero; uint8 input gives uint8, as in torch."""
    check_tensor(input, "any")
    dt = D.uint8 if input.dtype is D.uint8 else D.bool
    r = call(_any_op, (input,), (reduce_axes(input, dim, "any"), bool(keepdim)), dt, None)
    return with_out(r, out, "any")


_count_nonzero_op = defop(
    "count_nonzero", {S: lambda be, x, axes: be.xp.asarray((x != 0).sum(axes))}, params=("axes",))


def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (int64)."""
    check_tensor(input, "count_nonzero")
    axes = reduce_axes(input, dim, "count_nonzero")
    return call(_count_nonzero_op, (input,), (axes,), D.int64, None)


# ---- cumulative sum and product ----

def _cum_kernel(fn):
    def kernel(be, x, dim):
        if x.ndim == 0:
            return x.copy()
        return getattr(be.xp, fn)(x, axis=dim)
    return kernel


def _rev_cumsum_kernel(be, g, dim):
    xp = be.xp
    if g.ndim == 0:
        return g.copy()
    return xp.flip(xp.cumsum(xp.flip(g, dim), axis=dim), dim)


_rev_cumsum_op = defop("_reverse_cumsum", {S: _rev_cumsum_kernel}, params=("dim",),
                       grads={"input": lambda grad, dim: call(_cumsum_op, (grad,), (dim,))})
_cumsum_op = defop("cumsum", {S: _cum_kernel("cumsum")}, params=("dim",),
                   grads={"input": lambda grad, dim: call(_rev_cumsum_op, (grad,), (dim,))},
                   zero_preserving=True)


def _cumprod_backward(grad, input, result, dim):
    """Exact with zeros: a position before the slice's first zero gets
    revcumsum(grad * result) / x; the first zero gets sum_j>=z grad_j * prod_{i<=j, i!=z} x_i;
    later positions get 0. Inputs without zeros use the differentiable formula; with zeros the
    gradient is computed by a kernel (so a second derivative through a zero is not available)."""
    if not bool((input == 0).any()):
        return call(_rev_cumsum_op, (grad * result,), (dim,)) / input
    return call(_cumprod_grad_op, (grad, input, result), (dim,))


def _cumprod_grad_kernel(be, g, x, res, dim):
    xp = be.xp
    if x.ndim == 0:
        return g.copy()
    g, x, res = (xp.moveaxis(a, dim, -1) for a in (g, x, res))
    n = x.shape[-1]
    zero = x == 0
    has = zero.any(-1, keepdims=True)
    z = xp.argmax(zero, -1)[..., None]  # first zero (0 when there is none)
    pos = xp.arange(n)
    before = (pos < z) | ~has
    rev = xp.flip(xp.cumsum(xp.flip(g * res, -1), -1), -1)
    part1 = xp.where(before, rev / xp.where(before, x, 1), 0)
    cp = xp.cumprod(xp.where(pos == z, 1, x), -1)  # prod_{i<=j, i != z} x_i
    tail = xp.flip(xp.cumsum(xp.flip(xp.where(pos >= z, g * cp, 0), -1), -1), -1)
    out = part1 + xp.where(has & (pos == z), tail, 0)
    return xp.moveaxis(out.astype(x.dtype), -1, dim)


_cumprod_grad_op = defop("_cumprod_backward", {(strided,) * 3: _cumprod_grad_kernel},
                         inputs=("grad", "input", "result"), params=("dim",))
_cumprod_op = defop("cumprod", {S: _cum_kernel("cumprod")}, params=("dim",),
                    grads={"input": _cumprod_backward})


def _cum(op, input, dim, dtype, out, fname):
    check_tensor(input, fname)
    d = norm_dim(dim, input.ndim, fname)
    dt = sum_dtype(input.dtype, dtype)
    return with_out(call(op, (input,), (d,), dt, dt), out, fname)


def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim`` (integer and bool input give int64)."""
    return _cum(_cumsum_op, input, dim, dtype, out, "cumsum")


def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; the gradient is exact where the input has zeros."""
    return _cum(_cumprod_op, input, dim, dtype, out, "cumprod")


# ---- softmax, log_softmax ----

def _softmax_kernel(be, x, dim, log):
    xp = be.xp
    if x.size == 0:
        return x.copy()
    shape = x.shape
    if x.ndim == 0:
        x = x.reshape(1)
    m = xp.amax(x, dim, keepdims=True)
    z = x - xp.where(xp.isfinite(m), m, 0)
    with quiet(be):
        if log:
            r = z - xp.log(xp.exp(z).sum(dim, keepdims=True))
        else:
            e = xp.exp(z)
            r = e / e.sum(dim, keepdims=True)
    return r.reshape(shape)


def _softmax_backward(grad, result, dim):
    return result * (grad - sum_axes(grad * result, _axes1(result, dim), True))


def _log_softmax_backward(grad, result, dim):
    return grad - result.exp() * sum_axes(grad, _axes1(result, dim), True)


def _axes1(t, dim):
    return None if t.ndim <= 1 else (dim,)


_softmax_op = defop("softmax", {S: lambda be, x, dim: _softmax_kernel(be, x, dim, False)},
                    params=("dim",), grads={"input": _softmax_backward})
_log_softmax_op = defop("log_softmax", {S: lambda be, x, dim: _softmax_kernel(be, x, dim, True)},
                        params=("dim",), grads={"input": _log_softmax_backward})


def _softmax_like(op, input, dim, dtype, fname):
    check_tensor(input, fname)
    if dim is None or not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fname}(): argument 'dim' must be int, not {type(dim).__name__}")
    x = input if dtype is None else input.to(dtype)
    if not _is_float(x.dtype):
        raise NotImplementedError(
            f'"{fname}_kernel_impl" not implemented for \'{TORCH_NAME[x.dtype.name]}\'; '
            "pass dtype=sparsetorch.float32 or convert with .float() first"
        )
    return call(op, (x,), (norm_dim(dim, x.ndim, fname),))


def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably; ``dtype`` casts the input first."""
    return _softmax_like(_softmax_op, input, dim, dtype, "softmax")


def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed stably; ``dtype`` casts the input first."""
    return _softmax_like(_log_softmax_op, input, dim, dtype, "log_softmax")


__all__ = [
    "sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
    "aminmax", "var", "std", "var_mean", "std_mean", "norm", "dist", "logsumexp", "all", "any",
    "count_nonzero", "cumsum", "cumprod", "softmax", "log_softmax",
    "median", "sort", "argsort", "topk", "kthvalue", "cummax", "cummin",
]
