"""OpInfo rows for reductions, statistics, norms, cumulative ops, softmax, sorting and selection.

Ops that return ``(values, indices)`` get two rows: the op itself (compared with NumPy, no
gradcheck) and a ``.values`` row that gradchecks the differentiable output alone.
"""

import numpy as np
import scipy.special as sps

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make, to_numpy

FLOAT_INT = FLOATS + INTS


def _ax(x, dim):
    """torch dim (None/int/tuple/empty) -> NumPy axis for array ``x`` (0-d: None)."""
    if dim is None or np.ndim(x) == 0:
        return None
    if isinstance(dim, (tuple, list)):
        return None if len(dim) == 0 else tuple(dim)
    return dim


def _acc(x):
    """torch's sum dtype: integer and bool arrays accumulate in int64."""
    return np.int64 if x.dtype.kind in "biu" else None


def _red_samples(dim_kinds=("none", "int", "neg", "tuple", "keep"), shapes=((), (5,), (3, 4), (2, 3, 4))):
    def samples(dtype, rg):
        out = []
        for i, s in enumerate(shapes):
            x = lambda seed=i: make(s, dtype, rg, seed=seed)  # noqa: E731
            nd = len(s)
            if "none" in dim_kinds:
                out.append(Sample((x(),), name=f"{s}-all"))
            if nd == 0:
                if "int" in dim_kinds:
                    out.append(Sample((x(),), {"dim": 0}, name="0-d dim 0"))
                continue
            if "int" in dim_kinds:
                out.append(Sample((x(),), {"dim": nd - 1}, name=f"{s}-dim"))
            if "neg" in dim_kinds:
                out.append(Sample((x(),), {"dim": -1, "keepdim": True}, name=f"{s}-neg-keep"))
            if "tuple" in dim_kinds and nd >= 2:
                out.append(Sample((x(),), {"dim": (0, nd - 1)}, name=f"{s}-tuple"))
            if "keep" in dim_kinds and nd >= 2:
                out.append(Sample((x(),), {"dim": (-2,), "keepdim": True}, name=f"{s}-keep"))
        return out
    return samples


def _dim_errors(op):
    def errors():
        x = st.ones(2, 3)
        return [
            ErrorInput(Sample((x,), {"dim": 2}), IndexError, r"Dimension out of range"),
            ErrorInput(Sample(([1.0, 2.0],), {"dim": 0}), TypeError, r"must be a Tensor"),
        ]
    return errors


def R(name, ref, samples=None, *, op=None, method=None, errors=None, **kw):
    if errors is None:
        errors = None if "." in name else _dim_errors(name)  # sub-rows: the main row checks them
    return OpInfo(name=name, op=op or getattr(st, name, None) or getattr(st._ops, name), ref=ref,
                  sample_inputs=samples or _red_samples(), error_inputs=errors,
                  method=name if method is None else (method or None), **kw)


def _np_sum(x, dim=None, keepdim=False):
    return np.sum(x, axis=_ax(x, dim), keepdims=keepdim, dtype=_acc(x))


def _np_mean(x, dim=None, keepdim=False):
    return np.mean(x, axis=_ax(x, dim), keepdims=keepdim)


def _with_nans(dtype, rg):
    out = []
    for s in _red_samples()(dtype, rg):
        if not rg and s.args[0].numel() > 1:
            a = to_numpy(s.args[0]).copy()
            a.reshape(-1)[::3] = np.nan
            s = Sample((st.tensor(a, dtype=dtype),), s.kwargs, s.name + "-nan")
        out.append(s)
    return out


def _prod_samples(dtype, rg):
    out = [s for s in _red_samples(("none", "int", "neg"))(dtype, rg)]
    z = np.array([[1.5, 0.0, -2.0], [0.0, 2.0, 0.0], [1.0, -1.0, 2.0]])
    for dim in (None, 1, 0):
        t = st.tensor(z, dtype=dtype, requires_grad=rg)
        out.append(Sample((t,), {} if dim is None else {"dim": dim}, name=f"zeros-{dim}"))
    return out


def _np_prod(x, dim=None, keepdim=False):
    return np.prod(x, axis=_ax(x, dim), keepdims=keepdim, dtype=_acc(x))


def _np_amax(f):
    def ref(x, dim=(), keepdim=False):
        return f(x, axis=_ax(x, dim), keepdims=keepdim)
    return ref


def _int_dim_samples(dtype, rg, keep=True):
    out = []
    for i, s in enumerate([(5,), (3, 4), (2, 3, 4)]):
        out.append(Sample((make(s, dtype, rg, seed=i),), {"dim": len(s) - 1}, name=f"{s}"))
        if keep:
            out.append(Sample((make(s, dtype, rg, seed=i + 7),), {"dim": 0, "keepdim": True},
                              name=f"{s}-keep"))
    out.append(Sample((make((), dtype, rg, seed=9),), {"dim": 0}, name="0-d"))
    return out


def _np_maxdim(f, argf):
    def ref(x, dim, keepdim=False):
        if x.ndim == 0:
            return x, np.array(0)
        i = argf(x, axis=dim, keepdims=True)
        v = np.take_along_axis(x, i, dim)
        return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))
    return ref


def _np_arg(f):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            r = np.asarray(f(x))
            return r.reshape((1,) * x.ndim) if keepdim else r
        if x.ndim == 0:
            return np.array(0)
        return f(x, axis=dim, keepdims=keepdim)
    return ref


def _var_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=1)
    y = make((2, 3, 4), dtype, rg, seed=2)
    return [
        Sample((x,), name="all"),
        Sample((x,), {"dim": 1}, name="dim"),
        Sample((y,), {"dim": (0, 2), "keepdim": True}, name="tuple-keep"),
        Sample((x,), {"dim": 0, "unbiased": False}, name="biased"),
        Sample((y,), {"dim": -1, "correction": 0}, name="correction0"),
        Sample((x,), {"dim": 1, "correction": 2}, name="correction2"),
    ]


def _np_var(f):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        c = correction if correction is not None else (0 if unbiased is False else 1)
        return f(x, axis=_ax(x, dim), ddof=c, keepdims=keepdim)
    return ref


def _np_var_mean(f):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        return _np_var(f)(x, dim, unbiased, keepdim, correction), _np_mean(x, dim, keepdim)
    return ref


def _norm_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=3)
    y = make((2, 3, 4), dtype, rg, seed=4)
    out = [Sample((x,), name="fro"), Sample((y,), {"p": 2, "dim": 1}, name="2-dim"),
           Sample((x,), {"p": 1, "dim": 0, "keepdim": True}, name="1"),
           Sample((y,), {"p": 3, "dim": (0, 2)}, name="3"),
           Sample((x,), {"p": "fro", "dim": (0, 1)}, name="fro-2d"),
           Sample((make((5,), dtype, rg, seed=5),), {"p": 0.5}, name="0.5")]
    if not rg:  # inf norms have ties in their gradient only at measure-zero points, but
        out += [Sample((x,), {"p": float("inf"), "dim": 1}, name="inf"),  # keep them out of
                Sample((x,), {"p": -float("inf")}, name="-inf"),            # gradcheck anyway
                Sample((x,), {"p": 0}, name="0")]
    return out


def _np_norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    ax = _ax(x, dim)
    a = np.abs(x)
    if p in ("fro", 2):
        r = np.sqrt(np.sum(a * a, axis=ax, keepdims=keepdim))
    elif p == float("inf"):
        r = np.max(a, axis=ax, keepdims=keepdim)
    elif p == -float("inf"):
        r = np.min(a, axis=ax, keepdims=keepdim)
    elif p == 0:
        r = np.sum(a != 0, axis=ax, keepdims=keepdim).astype(x.dtype)
    else:
        r = np.sum(a ** p, axis=ax, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r, dtype=x.dtype)


def _lse_samples(dtype, rg):
    return [s for s in _red_samples(("int", "neg", "tuple", "keep"))(dtype, rg)]


def _np_lse(x, dim, keepdim=False):
    return np.asarray(sps.logsumexp(x, axis=_ax(x, dim), keepdims=keepdim), dtype=x.dtype)


def _logic_samples(dtype, rg):
    out = []
    for i, s in enumerate([(5,), (3, 4), (2, 3, 4)]):
        a = to_numpy(make(s, dtype, False, low=-1, high=1, seed=i))
        a = np.where(np.abs(a) < 0.5, 0, a) if a.dtype.kind == "f" else a
        t = st.tensor(a, dtype=dtype)
        out += [Sample((t,), name=f"{s}"), Sample((t,), {"dim": 0}, name=f"{s}-0"),
                Sample((t,), {"dim": -1, "keepdim": True}, name=f"{s}-keep")]
    return out


def _np_logic(f):
    def ref(x, dim=None, keepdim=False):
        r = np.asarray(f(x, axis=_ax(x, dim), keepdims=keepdim))
        return r.astype(np.uint8) if x.dtype == np.uint8 else r
    return ref


def _cum_samples(dtype, rg):
    out = [Sample((make(s, dtype, rg, seed=i),), {"dim": d}, name=f"{s}-{d}")
           for i, (s, d) in enumerate([((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1), ((), 0)])]
    return out


def _cumprod_samples(dtype, rg):
    out = _cum_samples(dtype, rg)
    z = np.array([[1.5, 0.0, -2.0, 3.0], [0.5, 2.0, 0.0, 0.0], [1.0, -1.0, 2.0, 0.5]])
    for d in (0, 1):
        out.append(Sample((st.tensor(z, dtype=dtype, requires_grad=rg),), {"dim": d}, name=f"zeros-{d}"))
    return out


def _np_cum(f):
    def ref(x, dim, dtype=None):
        return x.copy() if x.ndim == 0 else f(x, axis=dim, dtype=_acc(x))
    return ref


def _np_cumext(f):
    def ref(x, dim):
        if x.ndim == 0:
            return x, np.array(0)
        v = f.accumulate(x, axis=dim)
        n = x.shape[dim]
        pos = np.arange(n).reshape([n if i == dim % x.ndim else 1 for i in range(x.ndim)])
        i = np.maximum.accumulate(np.where(x == v, pos, 0), axis=dim)
        return v, i
    return ref


def _softmax_samples(dtype, rg):
    return [Sample((make(s, dtype, rg, seed=i),), {"dim": d}, name=f"{s}-{d}")
            for i, (s, d) in enumerate([((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((), 0)])]


def _np_softmax(x, dim, dtype=None):
    return np.asarray(sps.softmax(x, axis=dim if x.ndim else None), dtype=x.dtype)


def _np_log_softmax(x, dim, dtype=None):
    return np.asarray(sps.log_softmax(x, axis=dim if x.ndim else None), dtype=x.dtype)


def _np_median(x, dim=None, keepdim=False):
    if dim is None:
        return np.sort(x.reshape(-1))[(x.size - 1) // 2]
    if x.ndim == 0:
        return x, np.array(0)
    k = (x.shape[dim] - 1) // 2
    i = np.take(np.argsort(x, axis=dim, kind="stable"), [k], axis=dim)
    v = np.take_along_axis(x, i, dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _sort_samples(dtype, rg):
    out = []
    for i, (s, kw) in enumerate([((5,), {}), ((3, 4), {"dim": 0}), ((3, 4), {"descending": True}),
                                 ((2, 3, 4), {"dim": 1, "descending": True}), ((), {})]):
        out.append(Sample((make(s, dtype, rg, seed=i),), kw, name=f"{s}-{kw}"))
    return out


def _np_argsort(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return np.array(0)
    if descending:
        n = x.shape[dim]
        return n - 1 - np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    return np.argsort(x, axis=dim, kind="stable")


def _np_sort(x, dim=-1, descending=False, stable=False):
    i = _np_argsort(x, dim, descending)
    return (x, i) if x.ndim == 0 else (np.take_along_axis(x, i, dim), i)


def _distinct(shape, dtype, rg, seed):
    # topk's tie order is torch's (std::partial_sort / nth_element, not a stable sort), which the
    # NumPy reference does not model: distinct values here; ties are checked against torch in
    # tests/test_reduction_linalg.py
    a = np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) - 5
    t = st.tensor(a, dtype=dtype)
    return t.requires_grad_(True) if rg else t


def _topk_samples(dtype, rg):
    return [Sample((_distinct((6,), dtype, rg, seed=1), 3), name="k3"),
            Sample((_distinct((3, 4), dtype, rg, seed=2), 2), {"dim": 0, "largest": False},
                   name="smallest"),
            Sample((_distinct((2, 3, 4), dtype, rg, seed=3), 4), {"dim": -1}, name="all"),
            Sample((_distinct((3, 4), dtype, rg, seed=4), 0), name="k0")]


def _np_topk(x, k, dim=-1, largest=True, sorted=True):
    v, i = _np_sort(x, dim, largest)
    return np.take(v, range(k), axis=dim), np.take(i, range(k), axis=dim)


def _kth_samples(dtype, rg):
    return [Sample((make((6,), dtype, rg, seed=1), 3), name="k3"),
            Sample((make((3, 4), dtype, rg, seed=2), 1), {"dim": 0, "keepdim": True}, name="keep"),
            Sample((make((2, 3, 4), dtype, rg, seed=3), 4), {"dim": -1}, name="last")]


def _np_kth(x, k, dim=-1, keepdim=False):
    i = np.take(np.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    v = np.take_along_axis(x, i, dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _values(fn):
    def op(*args, **kwargs):
        return fn(*args, **kwargs)[0]
    op.__name__ = fn.__name__
    return op


def _first(ref):
    return lambda *a, **k: ref(*a, **k)[0]


def _empty_max_errors():
    return [ErrorInput(Sample((st.ones(0),)), RuntimeError, r"max\(\): Expected reduction dim to be specified"),
            ErrorInput(Sample((st.ones(0, 3), 0)), IndexError, r"max\(\): Expected reduction dim 0 to have non-zero size"),
            ErrorInput(Sample((st.ones(2), "a")), TypeError, r"dim")]


def _mean_errors():
    return [ErrorInput(Sample((st.ones(3, dtype=st.int64),)), RuntimeError,
                       r"mean\(\): could not infer output dtype.*Got: Long")]


def _norm_errors():
    return [ErrorInput(Sample((st.ones(3, dtype=st.int64),)), RuntimeError, r"floating point"),
            ErrorInput(Sample((st.ones(3, 3),), {"p": "abc"}), RuntimeError, r"Order abc not supported"),
            ErrorInput(Sample((st.ones(3, 3),), {"p": "nuc", "dim": 0}), RuntimeError, r"2-tuple")]


OPS = [
    R("sum", _np_sum, dtypes=FLOAT_INT + (st.bool,)),
    R("nansum", _np_amax(lambda x, axis, keepdims: np.nansum(x, axis=axis, keepdims=keepdims,
                                                            dtype=_acc(x))), _with_nans),
    R("mean", _np_mean, errors=_mean_errors),
    R("nanmean", lambda x, dim=None, keepdim=False: np.nanmean(x, axis=_ax(x, dim), keepdims=keepdim),
      _with_nans),
    R("prod", _np_prod, _prod_samples, dtypes=FLOAT_INT,
      errors=lambda: [ErrorInput(Sample((st.ones(2, 2),), {"dim": (0, 1)}), TypeError, r"dim")]),
    R("amax", _np_amax(np.max), dtypes=FLOAT_INT),
    R("amin", _np_amax(np.min), dtypes=FLOAT_INT),
    R("max", lambda x: np.max(x), _red_samples(("none",)), dtypes=FLOAT_INT, errors=_empty_max_errors),
    R("min", lambda x: np.min(x), _red_samples(("none",)), dtypes=FLOAT_INT),
    R("max.dim", _np_maxdim(np.max, np.argmax), _int_dim_samples, op=st.max, method="max",
      dtypes=FLOAT_INT, supports_autograd=False),
    R("min.dim", _np_maxdim(np.min, np.argmin), _int_dim_samples, op=st.min, method="min",
      dtypes=FLOAT_INT, supports_autograd=False),
    R("max.dim.values", _first(_np_maxdim(np.max, np.argmax)), _int_dim_samples, op=_values(st.max),
      method=False),
    R("min.dim.values", _first(_np_maxdim(np.min, np.argmin)), _int_dim_samples, op=_values(st.min),
      method=False),
    R("max.binary", np.maximum, lambda dt, rg: [Sample((make((3, 4), dt, rg, seed=1),
                                                         make((4,), dt, rg, seed=2)))],
      op=st.max, method="max"),
    R("argmax", _np_arg(np.argmax), lambda dt, rg: [Sample((make((3, 4), dt, False),))]
      + _int_dim_samples(dt, False), dtypes=FLOAT_INT, supports_autograd=False),
    R("argmin", _np_arg(np.argmin), lambda dt, rg: [Sample((make((3, 4), dt, False),))]
      + _int_dim_samples(dt, False), dtypes=FLOAT_INT, supports_autograd=False),
    R("aminmax", lambda x, dim=None, keepdim=False: (np.min(x, axis=_ax(x, dim), keepdims=keepdim),
                                                     np.max(x, axis=_ax(x, dim), keepdims=keepdim)),
      lambda dt, rg: [Sample((make((3, 4), dt, rg),)), Sample((make((3, 4), dt, rg),), {"dim": 1}),
                      Sample((make((2, 3), dt, rg),), {"dim": 0, "keepdim": True})],
      dtypes=FLOAT_INT, method="aminmax"),
    R("var", _np_var(np.var), _var_samples,
      errors=lambda: [ErrorInput(Sample((st.ones(3, dtype=st.int64),)), RuntimeError, "floating point")]),
    R("std", _np_var(np.std), _var_samples),
    R("var_mean", _np_var_mean(np.var), _var_samples, method=False),
    R("std_mean", _np_var_mean(np.std), _var_samples, method=False),
    R("norm", _np_norm, _norm_samples, errors=_norm_errors),
    R("dist", lambda a, b, p=2: _np_norm(a - b, p),
      lambda dt, rg: [Sample((make((3, 4), dt, rg, seed=1), make((4,), dt, rg, seed=2))),
                      Sample((make((5,), dt, rg, seed=3), make((5,), dt, rg, seed=4)), {"p": 1})],
      method=False, errors=lambda: [ErrorInput(Sample((st.ones(2, dtype=st.int64), st.ones(2, dtype=st.int64))),
                                               RuntimeError, "floating point")]),
    R("logsumexp", _np_lse, _lse_samples),
    R("all", _np_logic(np.all), _logic_samples, dtypes=FLOATS + INTS + (st.bool, st.uint8),
      supports_autograd=False),
    R("any", _np_logic(np.any), _logic_samples, dtypes=FLOATS + INTS + (st.bool, st.uint8),
      supports_autograd=False),
    R("count_nonzero", lambda x, dim=None: np.asarray(np.count_nonzero(x, axis=_ax(x, dim))),
      lambda dt, rg: [Sample((st.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]], dtype=dt),), kw)
                      for kw in ({}, {"dim": 0}, {"dim": (0, 1)})], dtypes=FLOAT_INT,
      supports_autograd=False),
    R("cumsum", _np_cum(np.cumsum), _cum_samples, dtypes=FLOAT_INT),
    R("cumprod", _np_cum(np.cumprod), _cumprod_samples, dtypes=FLOAT_INT),
    R("cummax", _np_cumext(np.maximum), _cum_samples, dtypes=FLOAT_INT, supports_autograd=False),
    R("cummin", _np_cumext(np.minimum), _cum_samples, dtypes=FLOAT_INT, supports_autograd=False),
    R("cummax.values", _first(_np_cumext(np.maximum)), _cum_samples, op=_values(st.cummax), method=False),
    R("softmax", _np_softmax, _softmax_samples,
      errors=lambda: [ErrorInput(Sample((st.ones(3, dtype=st.int64), 0)), RuntimeError, "not implemented for 'Long'")]),
    R("log_softmax", _np_log_softmax, _softmax_samples),
    R("median", _np_median, lambda dt, rg: [Sample((make((3, 5), dt, rg, seed=1),)),
                                              Sample((make((4,), dt, rg, seed=2),))], dtypes=FLOAT_INT),
    R("median.dim", _np_median, lambda dt, rg: _int_dim_samples(dt, rg), op=st.median, method="median",
      dtypes=FLOAT_INT, supports_autograd=False),
    R("median.dim.values", _first(_np_median), lambda dt, rg: _int_dim_samples(dt, rg),
      op=_values(st.median), method=False),
    R("sort", _np_sort, _sort_samples, dtypes=FLOAT_INT, supports_autograd=False),
    R("sort.values", _first(_np_sort), _sort_samples, op=_values(st.sort), method=False),
    R("argsort", _np_argsort, _sort_samples, dtypes=FLOAT_INT, supports_autograd=False),
    R("topk", _np_topk, _topk_samples, dtypes=FLOAT_INT, supports_autograd=False,
      errors=lambda: [ErrorInput(Sample((st.ones(3), 4)), RuntimeError, "k out of range")]),
    R("topk.values", _first(_np_topk), _topk_samples, op=_values(st.topk), method=False),
    R("kthvalue", _np_kth, _kth_samples, dtypes=FLOAT_INT, supports_autograd=False,
      errors=lambda: [ErrorInput(Sample((st.ones(3), 4)), RuntimeError, "k out of range")]),
    R("kthvalue.values", _first(_np_kth), _kth_samples, op=_values(st.kthvalue), method=False),
]
