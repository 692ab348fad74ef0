"""gather/scatter/scatter_add/scatter_reduce of the indexing family (above :mod:`.indexing`).

Gradients follow torch's derivatives.yaml: gather <-> scatter_add, index_select <-> index_add,
index_copy/index_fill zero the written region of the input's gradient. Shapes come from params,
so a later in-place change of an input does not invalidate the graph.
"""

from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from ._util import check_tensor, norm_dim, with_out
from .indexing import _value_for, put_key, take_key
from ..dense.indexing import (  # noqa: F401 - the strided kernels of these ops
    _UFUNC, _IDENTITY, _coords, _scatter_into, _scatter_kernel, _scatter_value_kernel, _gather_kernel, _scatter_reduce_kernel,
)
from .._variants import method

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_reduce",
]

S2 = (strided, strided)
S3 = (strided, strided, strided)


# ---- checks ----

def _check_index(index, fname, dtypes, message, error=RuntimeError):
    check_tensor(index, fname, "index")
    if index.dtype not in dtypes:
        raise error(message.format(index.dtype.name))


def _check_bounds(idx, size, dim, negative=False, error=RuntimeError, prefix=""):
    """The first out-of-range value named in torch's words (negative ones allowed if asked)."""
    if idx.size == 0:
        return
    lo = int(idx.min())
    hi = int(idx.max())
    if hi >= size or lo < (-size if negative else 0):
        bad = hi if hi >= size else lo
        raise error(f"{prefix}index {bad} is out of bounds for dimension {dim} with size {size}")


def _dims_like(input, index, fname):
    if max(index.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {fname} tensor")


# ---- kernels: positions (..., index, ...) along dim ----


# ---- gather ----

def _gather_input_backward(grad, index, dim, in_shape):
    return grad.new_zeros(in_shape).scatter_add(dim, index, grad)


_gather_op = defop("gather", {S2: _gather_kernel}, inputs=("input", "index"), params=("dim", "in_shape"),
                   grads={"input": _gather_input_backward})


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim == 0`` (and so on)."""
    check_tensor(input, "gather")
    _check_index(index, "gather", (D.int64, D.int32), "gather(): Expected dtype int32/int64 for index")
    d = norm_dim(dim, input.ndim, "gather")
    _dims_like(input, index, "input")
    for k in range(index.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                f"larger than self {list(input.shape)} apart from dimension {d}"
            )
    _check_bounds(index._data, input.shape[d] if input.ndim else 1, d)
    r = call(_gather_op, (input, index), (d, tuple(input.shape)))
    return with_out(r, out, "gather")


# ---- scatter / scatter_add / scatter_reduce ----

def _pad_to(g, shape):
    """``g`` placed in the leading corner of zeros of ``shape`` (src may be larger than index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    region = tuple(slice(0, s) for s in g.shape) + (Ellipsis,)
    return put_key(g.new_zeros(shape), region, g, False, True)


def _no_grad_reduce(reduce):
    def formula(grad):
        raise RuntimeError(f"the derivative for 'scatter' with reduce='{reduce}' is not implemented")

    return formula


def _scatter_input_backward(grad, index, dim, reduce):
    if reduce is None:
        return grad.scatter(dim, index, 0)
    if reduce == "add":
        return grad
    return _no_grad_reduce(reduce)(grad)


def _scatter_src_backward(grad, index, dim, reduce, src_shape):
    if reduce is not None and reduce != "add":
        return _no_grad_reduce(reduce)(grad)
    return _pad_to(grad.gather(dim, index), src_shape)


_scatter_op = defop(
    "scatter", {S3: _scatter_kernel}, inputs=("input", "index", "src"),
    params=("dim", "reduce", "src_shape"),
    grads={"input": _scatter_input_backward, "src": _scatter_src_backward},
)
_scatter_value_op = defop(
    "scatter", {S2: _scatter_value_kernel}, inputs=("input", "index"), params=("dim", "value", "reduce"),
    grads={"input": _scatter_input_backward},
)
_scatter_add_op = defop(
    "scatter_add", {S3: lambda be, x, idx, src, dim, src_shape: _scatter_kernel(be, x, idx, src, dim, "add", None)},
    inputs=("input", "index", "src"), params=("dim", "src_shape"),
    grads={"input": lambda grad: grad,
           "src": lambda grad, index, dim, src_shape: _pad_to(grad.gather(dim, index), src_shape)},
)


def _scatter_checks(input, dim, index, src, fname):
    check_tensor(input, fname)
    _check_index(index, fname, (D.int64, D.int32), fname + "(): Expected dtype int32/int64 for index")
    d = norm_dim(dim, input.ndim, fname)
    _dims_like(input, index, "self")
    if src is not None:
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{fname}(): Expected self.dtype to be equal to src.dtype")
        if max(src.ndim, 1) != max(index.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for k in range(index.ndim):
        too_big = (k != d and index.shape[k] > input.shape[k]) or (
            src is not None and src.ndim and index.shape[k] > src.shape[k])
        if too_big:
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} "
                f"apart from dimension {d}"
                + (f" and to be no larger size than src {list(src.shape)}" if src is not None else "")
            )
    _check_bounds(index._data, input.shape[d] if input.ndim else 1, d)
    return d


@method(inplace=True)
def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    """A copy of ``input`` with ``src`` (or the number ``value``) written at ``index`` along
    ``dim``; ``reduce='add'|'multiply'`` combines with what is there instead."""
    if src is not None and not isinstance(src, Tensor):
        if value is not None:
            raise TypeError("scatter(): got both a number 'src' and 'value'")
        src, value = None, src
    if (src is None) == (value is None):
        raise TypeError("scatter(): expected exactly one of 'src' (a Tensor) or 'value' (a number)")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    d = _scatter_checks(input, dim, index, src, "scatter")
    if src is not None:
        r = call(_scatter_op, (input, index, src), (d, reduce, tuple(src.shape)))
    else:
        if isinstance(value, Tensor):
            value = value.item()
        r = call(_scatter_value_op, (input, index), (d, _value_for(input, value, "scatter"), reduce))
    return with_out(r, out, "scatter")


@method(inplace=True)
def scatter_add(input, dim, index, src, *, out=None):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    d = _scatter_checks(input, dim, index, src, "scatter_add")
    return with_out(call(_scatter_add_op, (input, index, src), (d, tuple(src.shape))), out, "scatter_add")


def _src_region(src, index):
    if tuple(src.shape) == tuple(index.shape):
        return src
    return take_key(src, tuple(slice(0, s) for s in index.shape) + (Ellipsis,), True)


def _touched(in_shape, index, dim, device):
    from .creation import zeros

    return zeros(in_shape, dtype=D.bool, device=device).scatter(dim, index, True)


def _reduce_counts(input, index, dim, include_self):
    n = input.new_zeros(tuple(input.shape)) + (1 if include_self else 0)
    n = n.scatter_add(dim, index, index.new_ones(tuple(index.shape)).to(input.dtype))
    return n.masked_fill(n == 0, 1)


def _extreme_parts(input, index, src, result, dim, include_self):
    """Where the extreme came from: masks for self and src, and the number of tied winners."""
    touched = _touched(tuple(input.shape), index, dim, input.device)
    self_is = (input == result)
    if not include_self:
        self_is = self_is.logical_and(touched.logical_not())
    src_is = (_src_region(src, index) == result.gather(dim, index))
    n = self_is.to(input.dtype).scatter_add(dim, index, src_is.to(input.dtype))
    return self_is, src_is, n.masked_fill(n == 0, 1)


def _prod_parts(input, index, src, dim, include_self):
    """Zero counts and the product with zeros left out (for the gradient of a product with zeros)."""
    from .pointwise import where

    sr = _src_region(src, index)
    zc = (input == 0).to(input.dtype) if include_self else input.new_zeros(tuple(input.shape))
    zc = zc.scatter_add(dim, index, (sr == 0).to(input.dtype))
    masked_self = where(input == 0, 1.0, input) if include_self else input
    masked_src = where(sr == 0, 1.0, sr)
    mres = masked_self.scatter_reduce(dim, index, masked_src, "prod", include_self=include_self)
    return sr, zc, mres


def _scatter_reduce_input_backward(grad, input, index, src, result, dim, reduce, include_self):
    from .pointwise import where

    if not include_self and reduce in ("sum", "mean", "prod"):
        return grad.masked_fill(_touched(tuple(input.shape), index, dim, input.device), 0)
    if reduce == "sum":
        return grad
    if reduce == "mean":
        return grad / _reduce_counts(input, index, dim, True)
    if reduce == "prod":
        _, zc, mres = _prod_parts(input, index, src, dim, True)
        safe = where(input == 0, 1.0, input)
        return where(input == 0, where(zc == 1, grad * mres, 0.0), grad * result / safe)
    self_is, _, n = _extreme_parts(input, index, src, result, dim, include_self)
    return grad * self_is / n


def _scatter_reduce_src_backward(grad, input, index, src, result, dim, reduce, include_self):
    from .pointwise import where

    shape = tuple(src.shape)
    if reduce == "sum":
        return _pad_to(grad.gather(dim, index), shape)
    if reduce == "mean":
        return _pad_to((grad / _reduce_counts(input, index, dim, include_self)).gather(dim, index), shape)
    if reduce == "prod":
        sr, zc, mres = _prod_parts(input, index, src, dim, include_self)
        safe = where(sr == 0, 1.0, sr)
        nz = (grad * result).gather(dim, index) / safe
        z = where(zc.gather(dim, index) == 1, (grad * mres).gather(dim, index), 0.0)
        return _pad_to(where(sr == 0, z, nz), shape)
    _, src_is, n = _extreme_parts(input, index, src, result, dim, include_self)
    return _pad_to((grad / n).gather(dim, index) * src_is, shape)


_scatter_reduce_op = defop(
    "scatter_reduce", {S3: _scatter_reduce_kernel}, inputs=("input", "index", "src"),
    params=("dim", "reduce", "include_self"),
    grads={"input": _scatter_reduce_input_backward, "src": _scatter_reduce_src_backward},
)


@method(inplace=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim`` with ``reduce`` in
    ('sum', 'prod', 'mean', 'amax', 'amin'); ``include_self=False`` ignores input's values there."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    check_tensor(src, "scatter_reduce", "src")
    d = _scatter_checks(input, dim, index, src, "scatter_reduce")
    r = call(_scatter_reduce_op, (input, index, src), (d, reduce, bool(include_self)))
    return with_out(r, out, "scatter_reduce")
