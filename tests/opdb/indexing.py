"""OpInfo rows for indexing: getitem/setitem, index_put, gather/scatter, the index_* ops,
masked ops, take, nonzero.

Index tensors are built with ``st.tensor`` (int64, never requiring grad). Samples that gradcheck
scatter-like ops use indices without repeats where torch's gradient assumes them (a repeated
write keeps only one value, which finite differences see).
"""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make

FLOAT_INT = FLOATS + INTS
L = lambda *v: st.tensor(list(v), dtype=st.int64)


def I(name, ref, samples, errors=None, *, op=None, method=True, inplace=None, dtypes=FLOAT_INT, **kw):
    return OpInfo(name=name, op=op or getattr(st, name, None) or getattr(st._ops, name), ref=ref, sample_inputs=samples, dtypes=dtypes,
                  error_inputs=errors, method=name if method is True else method,
                  inplace=(name + "_") if inplace is True else inplace, **kw)


# ---- getitem / setitem ----

def _keys():
    return [
        (1,), (-1,), (slice(1, None),), ((slice(None), 1)), ((Ellipsis, 0)), ((None, slice(0, 3, 2))),
        ((0, 1)), ((slice(None, None, 2), None, -1)),
        (L(0, 2, 0),), ((L(1, 0), L(2, 2))), ((slice(None), L(0, 0, 2))), ((L(0, 1), Ellipsis)),
        ([2, 0],), ((L([0], [2]), L(1, 2))),
        (st.tensor([True, False, True, False]),), ((slice(None), st.tensor([False, True, True]))),
        (st.tensor([[True, False, True], [False, False, True], [True, True, True], [False, False, False]]),),
        ((L(0, 3), slice(1, None))),
    ]


def _getitem_samples(dtype, rg):
    return [Sample((make((4, 3), dtype, rg, seed=i), k), name=str(i)) for i, k in enumerate(_keys())] + [
        Sample((make((), dtype, rg, seed=30), Ellipsis), name="0-d ..."),
        Sample((make((), dtype, rg, seed=31), None), name="0-d None"),
        Sample((make((2, 3, 4), dtype, rg, seed=32), (L(0, 1), slice(None), L(1, 3))), name="separated"),
        Sample((make((2, 3, 4), dtype, rg, seed=33), (slice(None), L(0, 2), L(1, 3))), name="adjacent"),
    ]


def _np_key(key):
    return key if isinstance(key, tuple) else (key,)


def _getitem_errors():
    x = st.ones(2, 3)
    return [ErrorInput(Sample((x, 5)), IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
            ErrorInput(Sample((x, (slice(None), 3))), IndexError, "index 3 is out of bounds for dimension 1 with size 3"),
            ErrorInput(Sample((x, L(0, 2))), IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
            ErrorInput(Sample((x, (0, 0, 0))), IndexError, "too many indices for tensor of dimension 2"),
            ErrorInput(Sample((x, st.tensor([1.0]))), IndexError, "must be long, int, byte or bool"),
            ErrorInput(Sample((x, st.tensor([True, False, True]))), IndexError, "The shape of the mask"),
            ErrorInput(Sample((x, 1.5)), IndexError, "only integers, slices"),
            ErrorInput(Sample((x, slice(None, None, -1))), ValueError, "step must be greater than zero"),
            ErrorInput(Sample((x, (L(0, 1), L(0, 1, 2)))), IndexError, "could not be broadcast")]


def _setitem(x, key, value):
    y = x.clone()
    y[key] = value
    return y


def _np_setitem(x, key, value):
    y = np.array(x, copy=True)
    y[_np_key(key)] = value
    return y


def _setitem_samples(dtype, rg):
    out = []
    for i, k in enumerate(_keys()):
        x = make((4, 3), dtype, rg, seed=i)
        shape = tuple(st.zeros(4, 3)[k].shape)
        if i % 3 == 0:
            v = 2.0 if dtype.is_floating_point else 2
        else:
            v = make(shape[-1:] if i % 3 == 1 else shape, dtype, rg, seed=i + 40)
        if i in (8, 10) and rg:  # repeated indices: the last write wins; keep out of gradcheck
            continue
        out.append(Sample((x, k, v), name=str(i)))
    return out


def _index_put(x, indices, values, accumulate=False):
    return st.index_put(x, indices, values, accumulate)


def _np_index_put(x, indices, values, accumulate=False):
    y = np.array(x, copy=True)
    key = tuple(indices)
    if accumulate:
        np.add.at(y, key, values)
    else:
        y[key] = values
    return y


def _index_put_samples(dtype, rg):
    x = lambda s=0: make((4, 3), dtype, rg, seed=s)
    v = lambda shape, s=9: make(shape, dtype, rg, seed=s)
    return [Sample((x(), (L(0, 2), L(1, 1)), v((2,))), name="pairs"),
            Sample((x(1), (L(0, 0, 3),), v((3, 3))), {"accumulate": True}, name="acc-repeat"),
            Sample((x(2), (L(1, 3),), v((3,))), name="rows-broadcast"),
            Sample((x(3), (st.tensor([True, False, True, False]),), v((1,))), name="mask")]


# ---- gather / scatter ----

def _coords(idx, dim):
    return tuple(idx if d == dim else np.arange(idx.shape[d]).reshape([-1 if k == d else 1 for k in range(idx.ndim)])
                 for d in range(idx.ndim))


def _np_gather(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    return x[_coords(index, dim % x.ndim)]


def _np_scatter(x, dim, index, src=None, value=None, reduce=None):
    if src is not None and not isinstance(src, np.ndarray):
        src, value = None, src
    y = np.array(x, copy=True)
    y1 = y.reshape(1) if y.ndim == 0 else y
    idx = index.reshape(1) if index.ndim == 0 else index
    key = _coords(idx, dim % y1.ndim)
    if src is None:
        s = value
    else:
        s = src.reshape(idx.shape) if src.ndim == 0 else src[tuple(slice(0, k) for k in idx.shape)]
    if reduce is None:
        y1[key] = s
    elif reduce == "add":
        np.add.at(y1, key, s)
    else:
        np.multiply.at(y1, key, s)
    return y


def _np_scatter_add(x, dim, index, src):
    return _np_scatter(x, dim, index, src, reduce="add")


_UF = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _np_scatter_reduce(x, dim, index, src, reduce, include_self=True):
    y = np.array(x, copy=True)
    key = _coords(index, dim % x.ndim)
    s = src[tuple(slice(0, k) for k in index.shape)]
    if not include_self:
        big = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
        y[key] = {"sum": 0, "mean": 0, "prod": 1, "amax": -big, "amin": big}[reduce]
    _UF[reduce].at(y, key, s)
    if reduce == "mean":
        cnt = np.full(x.shape, 1 if include_self else 0)
        np.add.at(cnt, key, 1)
        y = y / np.maximum(cnt, 1)
    return y.astype(x.dtype)


def _perm_index(shape, n, dim, seed):
    """An index of ``shape`` whose entries along ``dim`` are distinct values in [0, n)."""
    rng = np.random.default_rng(seed)
    moved = list(shape)
    k = moved.pop(dim)
    rows = [rng.permutation(n)[:k] for _ in range(int(np.prod(moved)))]
    a = np.array(rows).reshape(moved + [k])
    return st.tensor(np.moveaxis(a, -1, dim), dtype=st.int64)


def _gather_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=1)
    return [Sample((x, 1, L([0, 0, 3], [1, 2, 2]))), Sample((x, 0, L([2, 0, 1, 1]))), Sample((x, -1, L([3], [0], [1]))),
            Sample((make((), dtype, rg, seed=2), 0, st.tensor(0))), Sample((make((5,), dtype, rg, seed=3), 0, L(4, 0, 4)))]


def _scatter_samples(dtype, rg):
    x, src = make((3, 4), dtype, rg, seed=1), make((3, 5), dtype, rg, seed=2)
    v = 1.5 if dtype.is_floating_point else 7
    return [Sample((x, 1, _perm_index((3, 2), 4, 1, 0), src), name="src"),
            Sample((x, 0, _perm_index((2, 4), 3, 0, 1), src), name="src-dim0"),
            Sample((x, 1, _perm_index((2, 3), 4, 1, 2)), {"value": v}, name="value"),
            Sample((x, -1, _perm_index((3, 2), 4, 1, 3), v), name="positional-value"),
            Sample((x, 1, L([0, 0], [1, 1], [2, 3]), src), {"reduce": "add"}, name="add")]


def _scatter_add_samples(dtype, rg):
    x, src = make((3, 4), dtype, rg, seed=1), make((3, 5), dtype, rg, seed=2)
    return [Sample((x, 1, L([0, 0, 3], [1, 1, 1], [2, 3, 2]), src)), Sample((x, 0, L([2, 2, 0, 1]), src)),
            Sample((make((), dtype, rg, seed=3), 0, st.tensor(0), make((), dtype, rg, seed=4)), name="0-d")]


def _scatter_reduce_samples(dtype, rg):
    out = []
    idx = L([0, 0, 3], [1, 1, 1], [2, 3, 2])
    for i, red in enumerate(("sum", "prod", "mean", "amax", "amin")):
        if red == "mean" and not dtype.is_floating_point:
            continue
        for inc in (True, False):
            x, src = make((3, 4), dtype, rg, seed=i), make((3, 3), dtype, rg, seed=10 + i)
            out.append(Sample((x, 1, idx, src, red), {"include_self": inc}, name=f"{red}-{inc}"))
    if dtype.is_floating_point:  # exact zeros exercise the zero-aware gradient of prod
        x = st.tensor([[0.0, 1.5, 2.0], [1.0, 0.0, 3.0]], dtype=dtype, requires_grad=rg)
        s = st.tensor([[2.0, 0.0], [0.0, 0.5]], dtype=dtype, requires_grad=rg)
        for inc in (True, False):
            out.append(Sample((x, 1, L([0, 1], [1, 1]), s, "prod"), {"include_self": inc}, name=f"prod-zeros-{inc}"))
    return out


def _scatter_errors():
    x = st.zeros(2, 3)
    return [ErrorInput(Sample((x, 1, L([0, 5]), st.ones(2, 3))), RuntimeError, "index 5 is out of bounds for dimension 1 with size 3"),
            ErrorInput(Sample((x, 1, L([0, 0]).float(), st.ones(2, 3))), RuntimeError, "Expected dtype int32/int64 for index"),
            ErrorInput(Sample((x, 1, L([0, 0, 0, 0]), st.ones(2, 3))), RuntimeError, "to be no larger than self"),
            ErrorInput(Sample((x, 1, L([0, 0]), st.ones(2, 3, dtype=st.float64))), RuntimeError, "self.dtype to be equal to src.dtype"),
            ErrorInput(Sample((x, 1, L(0, 0), st.ones(2, 3))), RuntimeError, "same number of dimensions"),
            ErrorInput(Sample((x, 1, L([0, 0]), st.ones(2, 3)), {"reduce": "mean"}), RuntimeError, "either add or multiply"),
            ErrorInput(Sample((x, 2, L([0, 0]), st.ones(2, 3))), IndexError, "Dimension out of range")]


# ---- index_* ----

def _np_index_select(x, dim, index):
    return np.take(x, index.reshape(-1), axis=dim) if x.ndim else x.reshape(1)[index].reshape(())


def _np_index_add(x, dim, index, source, alpha=1):
    y = np.array(x, copy=True)
    np.add.at(y, (slice(None),) * dim + (index,), source * alpha)
    return y


def _np_index_copy(x, dim, index, source):
    y = np.array(x, copy=True)
    y[(slice(None),) * dim + (index,)] = source
    return y


def _np_index_fill(x, dim, index, value):
    y = np.array(x, copy=True)
    y[(slice(None),) * (dim % x.ndim) + (index,)] = value
    return y


def _index_select_samples(dtype, rg):
    x = make((4, 3), dtype, rg, seed=1)
    return [Sample((x, 0, L(3, 0, 3))), Sample((x, 1, L(2, 1).int())), Sample((x, -1, L())),
            Sample((x, 0, st.tensor(1)), name="0-d index"), Sample((make((), dtype, rg, seed=2), 0, L(0)), name="0-d input")]


def _index_add_samples(dtype, rg):
    x = make((4, 3), dtype, rg, seed=1)
    return [Sample((x, 0, L(3, 0, 3), make((3, 3), dtype, rg, seed=2))),
            Sample((x, 1, L(2, 2).int(), make((4, 2), dtype, rg, seed=3)), {"alpha": 2}, name="alpha")]


def _index_copy_samples(dtype, rg):
    x = make((4, 3), dtype, rg, seed=1)
    return [Sample((x, 0, L(3, 0), make((2, 3), dtype, rg, seed=2))),
            Sample((x, 1, L(2, 0, 1), make((4, 3), dtype, rg, seed=3)))]


def _index_fill_samples(dtype, rg):
    x = make((4, 3), dtype, rg, seed=1)
    v = 2.5 if dtype.is_floating_point else 3
    out = [Sample((x, 0, L(3, 0, 3), v)), Sample((x, 1, L(-1), v), name="negative")]
    if dtype.is_floating_point:
        out.append(Sample((x, 1, L(0, 2, 0), make((), dtype, rg, seed=4)), name="tensor-value"))
    return out


def _index_errors(fname):
    def errors():
        x = st.zeros(2, 3)
        rest = {"index_select": (), "index_fill": (1.0,)}.get(fname, (st.ones(1, 3),))
        bad_dtype = IndexError if fname == "index_fill" else RuntimeError
        out = [ErrorInput(Sample((x, 0, L(0).float()) + rest), bad_dtype, "Expected")]
        if fname == "index_select":
            out += [ErrorInput(Sample((x, 0, L(5))), IndexError, "index out of range in self"),
                    ErrorInput(Sample((x, 0, L([0]))), IndexError, "supposed to be a vector")]
        if fname == "index_add":
            out += [ErrorInput(Sample((x, 0, L(5), st.ones(1, 3))), RuntimeError, "index 5 is out of bounds"),
                    ErrorInput(Sample((x, 0, L(0, 1), st.ones(3, 3))), RuntimeError, "Number of indices"),
                    ErrorInput(Sample((x, 0, L(0), st.ones(1, 3, dtype=st.float64))), RuntimeError, "same scalar type")]
        if fname == "index_copy":
            out += [ErrorInput(Sample((x, 0, L(-1), st.ones(1, 3))), IndexError, "out of bounds")]
        if fname == "index_fill":
            out += [ErrorInput(Sample((x, 1, L(5), 1.0)), IndexError, "index 5 is out of bounds for dimension 1"),
                    ErrorInput(Sample((x, 1, L(0), st.ones(1))), RuntimeError, "0-dimensional value tensor")]
        return out
    return errors


# ---- masked ops, take, nonzero ----

def _mask(shape, seed):
    return make(shape, st.bool, False, seed=seed)


def _np_masked_fill(x, mask, value):
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def _np_masked_scatter(x, mask, source):
    xb, mb = np.broadcast_arrays(x, mask)
    y = xb.copy()
    y[mb] = source.reshape(-1)[: int(mb.sum())]
    return y


def _masked_fill_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=1)
    v = -1.5 if dtype.is_floating_point else 5
    out = [Sample((x, _mask((3, 4), 2), v)), Sample((x, _mask((4,), 3), v), name="broadcast-mask"),
           Sample((make((4,), dtype, rg, seed=5), _mask((3, 4), 4), v), name="broadcast-input")]
    if dtype.is_floating_point:
        out.append(Sample((x, _mask((3, 4), 6), make((), dtype, rg, seed=7)), name="tensor-value"))
    return out


def _masked_select_samples(dtype, rg):
    return [Sample((make((3, 4), dtype, rg, seed=1), _mask((3, 4), 2))),
            Sample((make((4,), dtype, rg, seed=3), _mask((3, 4), 4)), name="broadcast")]


def _masked_scatter_samples(dtype, rg):
    return [Sample((make((3, 4), dtype, rg, seed=1), _mask((3, 4), 2), make((13,), dtype, rg, seed=3))),
            Sample((make((3, 4), dtype, rg, seed=4), _mask((4,), 5), make((4, 4), dtype, rg, seed=6)), name="broadcast-mask")]


def _np_take(x, index):
    return np.take(x.reshape(-1), index)


def _np_take_along_dim(x, indices, dim=None):
    if dim is None:
        return np.take_along_axis(x.reshape(-1), indices.reshape(-1), 0)
    return np.take_along_axis(x, indices, dim)


def _take_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=1)
    return [Sample((x, L([0, 11], [-1, 5]))), Sample((x, L()))]


def _take_along_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=1)
    return [Sample((x, L([0, 3], [1, 1], [2, 0]), 1)), Sample((x, L(0, 11))), Sample((x, L([2, 0, 1, 1]), 0))]


def _nonzero_samples(dtype, rg):
    a = make((3, 4), dtype, False, seed=1) * (make((3, 4), st.bool, False, seed=2)).to(dtype)
    return [Sample((a,)), Sample((st.tensor(3, dtype=dtype),), name="0-d"), Sample((a,), {"as_tuple": True}, name="tuple"),
            Sample((st.zeros(2, 0, dtype=dtype),), name="empty")]


def _np_nonzero(x, as_tuple=False):
    return np.nonzero(np.atleast_1d(x)) if as_tuple else np.argwhere(x)


OPS = [
    I("getitem", lambda x, k: x[_np_key(k)], _getitem_samples, _getitem_errors, method=False),
    I("setitem", _np_setitem, _setitem_samples, lambda: [
        ErrorInput(Sample((st.zeros(3), 0, "a")), TypeError, "can't assign a str"),
        ErrorInput(Sample((st.zeros(3), slice(0, 2), st.ones(3))), RuntimeError, "shape mismatch"),
        ErrorInput(Sample((st.zeros(3), 5, 1.0)), IndexError, "index 5 is out of bounds")],
      op=_setitem, method=False),
    I("index_put", _np_index_put, _index_put_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), (L(0),), st.ones(1, dtype=st.float64))), RuntimeError, "dtypes match"),
        ErrorInput(Sample((st.zeros(2, 3), (None,), st.ones(1))), TypeError, "expected Tensor as element 0")],
      op=_index_put, method="index_put", inplace=True),
    I("gather", _np_gather, _gather_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), 1, L([0, 5]))), RuntimeError, "index 5 is out of bounds for dimension 1 with size 3"),
        ErrorInput(Sample((st.zeros(2, 3), 1, L([0, -1]))), RuntimeError, "index -1 is out of bounds"),
        ErrorInput(Sample((st.zeros(2, 3), 1, L([0], [0]).short())), RuntimeError, "Expected dtype int32/int64 for index"),
        ErrorInput(Sample((st.zeros(2, 3), 1, L(0, 0))), RuntimeError, "same number of dimensions"),
        ErrorInput(Sample((st.zeros(2, 3), 0, L([0, 0, 0, 0]))), RuntimeError, "Size does not match at dimension 1")]),
    I("scatter", _np_scatter, _scatter_samples, _scatter_errors, inplace=True),
    I("scatter_add", _np_scatter_add, _scatter_add_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), 1, L([0]), 1.0)), TypeError, "must be Tensor")], inplace=True),
    I("scatter_reduce", _np_scatter_reduce, _scatter_reduce_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), 1, L([0]), st.ones(1, 1), "max2")), RuntimeError, "sum, prod, mean, amax or amin")],
      inplace=True),
    I("index_select", _np_index_select, _index_select_samples, _index_errors("index_select")),
    I("index_add", _np_index_add, _index_add_samples, _index_errors("index_add"), inplace=True),
    I("index_copy", _np_index_copy, _index_copy_samples, _index_errors("index_copy"), inplace=True),
    I("index_fill", _np_index_fill, _index_fill_samples, _index_errors("index_fill"), inplace=True),
    I("masked_fill", _np_masked_fill, _masked_fill_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), L(1, 0, 1), 1.0)), RuntimeError, "only supports boolean masks"),
        ErrorInput(Sample((st.zeros(2, 3), st.ones(3, dtype=st.bool), st.ones(1))), RuntimeError, "0-dimensional value tensor")],
      inplace=True),
    I("masked_select", lambda x, m: np.broadcast_arrays(x, m)[0][np.broadcast_arrays(x, m)[1]], _masked_select_samples,
      lambda: [ErrorInput(Sample((st.zeros(3), L(1, 0, 1))), RuntimeError, "expected BoolTensor for mask")]),
    I("masked_scatter", _np_masked_scatter, _masked_scatter_samples, lambda: [
        ErrorInput(Sample((st.zeros(3), st.ones(3, dtype=st.bool), st.ones(2))), RuntimeError, "Number of elements of source"),
        ErrorInput(Sample((st.zeros(3), st.ones(3, dtype=st.bool), st.ones(3, dtype=st.int64))), RuntimeError, "same dtypes")],
      inplace=True),
    I("take", _np_take, _take_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), L(6))), IndexError, "tried to access index 6 on a tensor of 6 elements"),
        ErrorInput(Sample((st.zeros(2, 3), L(0).int())), RuntimeError, "Expected a long tensor")]),
    I("take_along_dim", _np_take_along_dim, _take_along_samples, lambda: [
        ErrorInput(Sample((st.zeros(2, 3), L(0), 1)), RuntimeError, "same number of dimensions")]),
    I("nonzero", _np_nonzero, _nonzero_samples, supports_autograd=False),
    I("argwhere", np.argwhere, lambda dt, rg: _nonzero_samples(dt, rg)[:2], supports_autograd=False),
]
