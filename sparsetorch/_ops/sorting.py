"""Sorting and selection: sort, argsort, topk, kthvalue, median, cummax/cummin, argmax/argmin.

Ops that return ``(values, indices)`` compute the indices with a kernel (never differentiable)
and take the values with ``_take_along``, whose gradient scatters ``grad`` back to the selected
positions, so the gradient goes to exactly the chosen element as in torch. Results are
``return_type`` tuples with named fields, like ``torch.return_types``. Sorting is always stable
(which also satisfies ``stable=False``); NaN sorts as the largest value, as in torch.
Among tied values, ``kthvalue`` returns the first index in stable order; torch's
quickselect may pick another tied index (torch documents no order), so values always match
torch but tie indices may not. ``topk`` on the CPU gives torch's own order, ties and
``sorted=False`` included (``dense/_topk_order.py``, numba); elsewhere ties come in index
order. Below ``reduction.py``, which uses it.
"""

import operator

from .. import _dispatch
from .. import _dtype as D
from .._dispatch import call, defop, wrap
from .._layout import strided
from ._util import check_tensor, norm_dim
from ..dense.sorting import (  # noqa: F401 - the strided kernels of these ops
    _take_kernel, _flat_index, _put_kernel, _median_all_kernel,
)
from .._variants import method
from ..dense._topk_order import topk_rows

S = (strided,)

__all__ = ["median", "sort", "argsort", "topk", "kthvalue", "cummax", "cummin"]


# ---- named result tuples (torch.return_types) ----

def return_type(name, fields):
    """A tuple subclass with named fields, constructed from one sequence as torch's are."""

    def __new__(cls, seq):
        seq = tuple(seq)
        if len(seq) != len(fields):
            raise TypeError(f"return_types.{name} takes a sequence of length {len(fields)}")
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"sparsetorch.return_types.{name}(\n{body})"

    ns = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "n_fields": len(fields),
          "_fields": tuple(fields), "__module__": "sparsetorch.return_types"}
    for i, f in enumerate(fields):
        ns[f] = property(operator.itemgetter(i), doc=f"Alias for field number {i}")
    return type(name, (tuple,), ns)


sort_return = return_type("sort", ("values", "indices"))
topk_return = return_type("topk", ("values", "indices"))
kthvalue_return = return_type("kthvalue", ("values", "indices"))
median_return = return_type("median", ("values", "indices"))
cummax_return = return_type("cummax", ("values", "indices"))
cummin_return = return_type("cummin", ("values", "indices"))


def write_tuple_out(r, out, fname):
    """``out=(values, indices)``: each result is written into the matching tensor."""
    if out is None:
        return r
    if not isinstance(out, (tuple, list)) or len(out) != len(r):
        raise TypeError(f"{fname}(): argument 'out' must be a tuple of {len(r)} Tensors")
    return type(r)(_dispatch.write_out(v, o, fname) for v, o in zip(r, out))


# ---- gather along a dim and its adjoint (scatter into zeros) ----


_TAKE = dict(
    kernels={S: _take_kernel}, params=("index", "dim", "squeeze", "shape", "accumulate"),
    grads={"input": lambda grad, index, dim, squeeze, shape, accumulate:
           call(_put_op, (grad,), (index, dim, squeeze, shape, accumulate))},
)
_take_op = defop("_take_along_dim", **_TAKE)
# the values of the selecting ops under torch's op and node names (indices: not differentiable)
TAKE_MAX = defop("max", **_TAKE)  # max(dim): MaxBackward0
TAKE_MIN = defop("min", **_TAKE)
TAKE_SORT = defop("sort", **_TAKE)
TAKE_TOPK = defop("topk", **_TAKE)
TAKE_KTHVALUE = defop("kthvalue", **_TAKE)
TAKE_MEDIAN = defop("median", node_name="MedianBackward1", **_TAKE)  # median(dim)
TAKE_CUMMAX = defop("cummax", **_TAKE)
TAKE_CUMMIN = defop("cummin", **_TAKE)
_put_op = defop(
    "_put_along_dim", {S: _put_kernel},
    params=("index", "dim", "squeeze", "shape", "accumulate"),
    grads={"input": lambda grad, index, dim, squeeze, shape, accumulate:
           call(_take_op, (grad,), (index, dim, squeeze, shape, accumulate))},
)


def _take_along(input, index, dim, squeeze, accumulate=False, op=_take_op):
    """``input`` at the positions ``index`` (an int64 payload) along ``dim``; differentiable.
    ``op``: the declaration recorded (``_take_op`` or one of the named copies above)."""
    return call(op, (input,), (index, dim, squeeze, tuple(input.shape), accumulate))


def _indices(data, like):
    return wrap(data, D.int64, like.device, strided)


def _be(t):
    return _dispatch.get_backend(t.device)


def _size(input, d):
    return input.shape[d] if input.ndim else 1


# ---- argmax / argmin ----

def arg_extreme(input, d, keepdims, is_max):
    """Payload of argmax/argmin along ``d`` (first occurrence; NaN counts as the extreme)."""
    xp = _be(input).xp
    x = input._data
    if x.ndim == 0:
        return xp.zeros((), xp.int64)
    f = xp.argmax if is_max else xp.argmin
    return xp.asarray(f(x, axis=d, keepdims=keepdims)).astype(xp.int64, copy=False)


def argextreme_public(input, dim, keepdim, fname, is_max):
    check_tensor(input, fname)
    if input.dtype is D.bool:
        raise RuntimeError(f"{fname}(): does not support bool input; convert with .long() first")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(
                f"{fname}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        xp = _be(input).xp
        f = xp.argmax if is_max else xp.argmin
        i = xp.asarray(f(input._data)).astype(xp.int64)
        return _indices(i.reshape((1,) * input.ndim) if keepdim else i, input)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fname}(): argument 'dim' must be int, not {type(dim).__name__}")
    d = norm_dim(dim, input.ndim, fname)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{fname}(): Expected reduction dim {d} to have non-zero size.")
    return _indices(arg_extreme(input, d, bool(keepdim), is_max), input)


# ---- sort, argsort, topk, kthvalue ----

def _argsort_payload(input, d, descending):
    """Stable argsort along ``d``; descending keeps equal elements in their original order."""
    xp = _be(input).xp
    x = input._data
    if x.ndim == 0:
        return xp.zeros((), xp.int64)
    x = D.sort_key(xp, x)
    if not descending:
        return xp.argsort(x, axis=d, kind="stable").astype(xp.int64, copy=False)
    n = x.shape[d]
    r = xp.argsort(xp.flip(x, d), axis=d, kind="stable").astype(xp.int64, copy=False)
    return (n - 1) - xp.flip(r, d)


def _slice_along(a, d, start, stop):
    sl = [slice(None)] * a.ndim
    sl[d] = slice(start, stop)
    return a[tuple(sl)]


def _dim_arg(input, dim, fname):
    return norm_dim(dim, input.ndim, fname)


class _Named:  # what missing_kernel_message reads of an op
    zero_preserving = None

    def __init__(self, name):
        self.name = name


def _strided_only(input, fname):
    """The selection kernels read a strided payload: a sparse input gets the NotImplementedError
    that names the conversion (as the op table's ops), not a NumPy AxisError from inside."""
    if input.layout is not strided:
        raise NotImplementedError(_dispatch.missing_kernel_message(_Named(fname), (input.layout,)))


def _no_bool(input, fname):
    if input.dtype is D.bool:  # torch has no bool kernels for selection
        raise NotImplementedError(f'"{fname}" not implemented for \'Bool\'; convert with .long() first')


def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Sorted values along ``dim`` and the indices they came from (always stable)."""
    check_tensor(input, "sort")
    _strided_only(input, "sort")
    d = _dim_arg(input, dim, "sort")
    idx = _argsort_payload(input, d, bool(descending))
    r = sort_return((_take_along(input, idx, d, False, False, TAKE_SORT), _indices(idx, input)))
    return write_tuple_out(r, out, "sort")


def argsort(input, dim=-1, descending=False, *, stable=False):
    """Indices that sort ``input`` along ``dim`` (always stable)."""
    check_tensor(input, "argsort")
    _strided_only(input, "argsort")
    return _indices(_argsort_payload(input, _dim_arg(input, dim, "argsort"), bool(descending)), input)


@method
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - torch's name
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, in torch's CPU
    order (tied values and ``sorted=False`` included) where the numba kernel runs, else sorted
    with ties in index order."""
    check_tensor(input, "topk")
    _strided_only(input, "topk")
    _no_bool(input, "topk")
    d = _dim_arg(input, dim, "topk")
    if not isinstance(k, int) or not 0 <= k <= _size(input, d):
        raise RuntimeError(f"topk(): selected index k out of range (k={k}, dim size {_size(input, d)})")
    idx = None
    if input.ndim:
        idx = _torch_order_topk(input, d, k, bool(largest), bool(sorted))
        if idx is None:
            idx = _partial_topk(input, d, k, bool(largest))
    if idx is None:
        idx = _argsort_payload(input, d, bool(largest))
        if input.ndim:  # a 0-d input gives itself for k in (0, 1), as torch does
            idx = _slice_along(idx, d, 0, k)
    vals = _take_along(input, idx, d, False, False, TAKE_TOPK)
    return write_tuple_out(topk_return((vals, _indices(idx, input))), out, "topk")


def _torch_order_topk(input, d, k, largest, sorted_):
    """topk's indices in torch's CPU order, ties and ``sorted=False`` included (the C++ standard
    library's partial_sort / nth_element + sort that torch runs: dense/_topk_order.py); None
    where that kernel can't run (GPU, no numba, complex)."""
    x = input._data
    if x.dtype.kind not in "fiu" and x.dtype != D.bfloat16.np:
        return None
    be = _be(input)
    if be.name != "cpu":
        return None
    xp = be.xp
    keys = xp.moveaxis(D.sort_key(xp, x), d, -1)
    if keys.dtype.kind == "f" and keys.dtype.itemsize < 4:
        keys = keys.astype(xp.float32)  # float16 has no numba type; exact in float32
    shape = keys.shape
    idx = topk_rows(be, xp.ascontiguousarray(keys.reshape(-1, shape[-1])), k, largest, sorted_)
    if idx is None:
        return None
    return xp.ascontiguousarray(xp.moveaxis(idx.reshape(shape[:-1] + (k,)), -1, d))


def _partial_topk(input, d, k, largest):
    """topk's indices by selection instead of a full sort (k small beside the dim: a recommender's
    top 20 of 4,489 items per user row was a whole stable sort of each row, 3x torch's time):
    ``argpartition`` finds each row's k-th value, the k entries beyond it are sorted alone. The
    same indices as the full stable sort; None (take the sort) where that is not sure: NaN, a
    value tied at the k-th place in some row, complex input."""
    x = input._data
    n = x.shape[d]
    if k == 0 or 4 * k > n or n < 64 or x.dtype.kind not in "fiu" and x.dtype != D.bfloat16.np:
        return None
    xp = _be(input).xp
    x = xp.moveaxis(D.sort_key(xp, x), d, -1)
    if x.dtype.kind == "f" and xp.isnan(x).any():
        return None
    kth = n - k if largest else k - 1
    part = xp.argpartition(x, kth, axis=-1)
    t = xp.take_along_axis(x, part[..., kth:kth + 1], axis=-1)
    rows = (x >= t if largest else x <= t).reshape(-1, n)
    if not bool((xp.count_nonzero(rows, axis=1) == k).all()):
        return None  # ties at the threshold: which of them come first is the stable sort's call
    cand = xp.nonzero(rows)[1].reshape(x.shape[:-1] + (k,))  # each row's k, by index
    vals = xp.take_along_axis(x, cand, axis=-1)
    if largest:  # descending, equal values in index order (as _argsort_payload)
        order = (k - 1) - xp.flip(xp.argsort(xp.flip(vals, -1), axis=-1, kind="stable"), -1)
    else:
        order = xp.argsort(vals, axis=-1, kind="stable")
    idx = xp.take_along_axis(cand, order, axis=-1).astype(xp.int64, copy=False)
    return xp.ascontiguousarray(xp.moveaxis(idx, -1, d))


@method
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    check_tensor(input, "kthvalue")
    _strided_only(input, "kthvalue")
    _no_bool(input, "kthvalue")
    d = _dim_arg(input, dim, "kthvalue")
    n = _size(input, d)
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not isinstance(k, int) or not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = _argsort_payload(input, d, False)
    if input.ndim:
        idx = _slice_along(idx, d, k - 1, k)
    vals = _take_along(input, idx, d, not keepdim, False, TAKE_KTHVALUE)
    if input.ndim and not keepdim:
        idx = idx.squeeze(d)
    return write_tuple_out(kthvalue_return((vals, _indices(idx, input))), out, "kthvalue")


# ---- median ----


def _median_all_backward(grad, input, result):
    """Like max(): the gradient is split evenly among the elements equal to the median."""
    mask = input == result
    return grad * mask / mask.sum()


_median_all_op = defop("median", {S: _median_all_kernel},
                       grads={"input": _median_all_backward})


@method
def median(input, dim=None, keepdim=False, *, out=None):
    """``median(input)``: the lower median of all elements; ``median(input, dim, keepdim)``:
    (values, indices) along ``dim``. NaN propagates."""
    check_tensor(input, "median")
    _no_bool(input, "median")
    if dim is None:
        r = call(_median_all_op, (input,))
        return r if out is None else _dispatch.write_out(r, out, "median")
    _strided_only(input, "median")
    d = _dim_arg(input, dim, "median")
    n = _size(input, d)
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    xp = _be(input).xp
    order = _argsort_payload(input, d, False)
    if input.ndim == 0:
        idx = order
    else:
        x = input._data
        pos = xp.full(keep_dims_shape(x.shape, d), (n - 1) // 2, xp.int64)
        # a slice with NaN has NaN as its median (NaN sorts last)
        if x.dtype.kind == "c" or D.is_float_np(x.dtype):
            nans = xp.isnan(x).sum(axis=d, keepdims=True)
            pos = xp.where(nans > 0, n - nans, pos)
        idx = xp.take_along_axis(order, pos, axis=d)
    vals = _take_along(input, idx, d, not keepdim, False, TAKE_MEDIAN)
    if input.ndim and not keepdim:
        idx = idx.squeeze(d)
    return write_tuple_out(median_return((vals, _indices(idx, input))), out, "median")


def keep_dims_shape(shape, d):
    return tuple(1 if i == d else s for i, s in enumerate(shape))


# ---- cumulative max / min ----

def _cum_extreme_indices(input, d, is_max):
    """Index of the running extreme; ties take the latest position, as torch's cummax does."""
    xp = _be(input).xp
    x = input._data
    if x.ndim == 0:
        return xp.zeros((), xp.int64)
    ufunc = xp.maximum if is_max else xp.minimum
    run = ufunc.accumulate(x, axis=d)
    hit = x == run
    if x.dtype.kind == "c" or D.is_float_np(x.dtype):
        hit = hit | xp.isnan(x)
    n = x.shape[d]
    pos = xp.arange(n, dtype=xp.int64).reshape([n if i == d else 1 for i in range(x.ndim)])
    return xp.maximum.accumulate(xp.where(hit, pos, 0), axis=d)


def _cum_extreme(input, dim, fname, is_max, rtype):
    check_tensor(input, fname)
    _strided_only(input, fname)
    d = _dim_arg(input, dim, fname)
    idx = _cum_extreme_indices(input, d, is_max)
    vals = _take_along(input, idx, d, False, True, TAKE_CUMMAX if is_max else TAKE_CUMMIN)
    return rtype((vals, _indices(idx, input)))


@method
def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the index where each was attained."""
    return write_tuple_out(_cum_extreme(input, dim, "cummax", True, cummax_return), out, "cummax")


@method
def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the index where each was attained."""
    return write_tuple_out(_cum_extreme(input, dim, "cummin", False, cummin_return), out, "cummin")
