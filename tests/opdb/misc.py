"""OpInfo rows for the top-level utilities and statistics of ``_ops/arranging.py``,
``_ops/quantile_cov.py`` and ``_ops/distance.py`` (diff, splitting, rot90, block_diag, quantile,
cov, cdist, ...)."""

import itertools

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make, to_numpy

ALL = FLOATS + INTS


def _x(shape, dtype, rg, seed=0, **kw):
    return make(shape, dtype, rg, seed=seed, **kw)


# ---- diff, trapezoid ----

def _np(v):
    """kwargs reach the reference as Tensors (only positional args are converted)."""
    return to_numpy(v)


def _np_diff(x, n=1, dim=-1, prepend=None, append=None):
    prepend, append = _np(prepend), _np(append)
    if x.dtype == bool:
        parts = [p for p in (prepend, x, append) if p is not None]
        y = np.concatenate(parts, dim)
        for _ in range(n):
            y = np.logical_xor(np.take(y, range(1, y.shape[dim]), dim),
                               np.take(y, range(y.shape[dim] - 1), dim))
        return y
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, dim, **kw)


def _diff_samples(dtype, rg):
    return [
        Sample((_x((5,), dtype, rg),), name="1-d"),
        Sample((_x((3, 4), dtype, rg, 1),), {"n": 2, "dim": 1}, "n2"),
        Sample((_x((3, 4), dtype, rg, 2),), {"dim": 0, "prepend": _x((1, 4), dtype, rg, 3),
                                             "append": _x((2, 4), dtype, rg, 4)}, "pre-app"),
    ]


def _diff_errors():
    return [ErrorInput(Sample((st.tensor(1.0),)), RuntimeError, r"at least one-dimensional"),
            ErrorInput(Sample((st.ones(3),), {"n": -1}), RuntimeError, r"non-negative"),
            ErrorInput(Sample((st.ones(2, 3),), {"append": st.ones(3)}), RuntimeError,
                       r"same dimension"),
            ErrorInput(Sample((st.ones(3),), {"dim": 2}), IndexError, r"Dimension out of range")]


def _np_trapezoid(y, x=None, *, dx=None, dim=-1):
    y = y.astype(np.float32) if y.dtype.kind in "iu" else y
    return np.asarray(np.trapezoid(y, x, dx=1.0 if dx is None else dx, axis=dim), y.dtype)


def _trapezoid_samples(dtype, rg):
    return [Sample((_x((5,), dtype, rg),)),
            Sample((_x((3, 4), dtype, rg, 1),), {"dx": 0.5, "dim": 0}, "dx"),
            Sample((_x((3, 4), dtype, rg, 2), st.tensor([0.0, 1.0, 3.0, 3.5], dtype=st.float64)
                    .to(dtype if dtype.is_floating_point else st.float32)), name="x")]


# ---- splitting, arranging ----

def _np_tensor_split(x, ios, dim=0):
    return tuple(np.array_split(x, ios, axis=dim))


def _split_samples(dtype, rg):
    return [Sample((_x((7,), dtype, rg), 3)), Sample((_x((3, 7), dtype, rg, 1), [1, 5], 1), name="idx"),
            Sample((_x((4, 2), dtype, rg, 2), 4), name="even")]


def _np_rot90(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, dims)


def _rot_samples(dtype, rg):
    return [Sample((_x((2, 3), dtype, rg),)),
            *(Sample((_x((2, 3, 4), dtype, rg, k),), {"k": k, "dims": [2, 0]}, f"k{k}")
              for k in (-1, 2, 3, 4))]


def _rot_errors():
    return [ErrorInput(Sample((st.ones(2, 2),), {"dims": [0, 0]}), RuntimeError, r"different"),
            ErrorInput(Sample((st.ones(2),),), RuntimeError, r"total dims >= 2")]


def _np_block_diag(*ts):
    ms = [np.atleast_2d(t) for t in ts]
    out = np.zeros((sum(m.shape[0] for m in ms), sum(m.shape[1] for m in ms)),
                   np.result_type(*ms))
    r = c = 0
    for m in ms:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _block_samples(dtype, rg):
    return [Sample((_x((2, 3), dtype, rg), _x((), dtype, rg, 1), _x((2,), dtype, rg, 2)))]


def _np_cartesian(*ts):
    if len(ts) == 1:
        return ts[0]
    return np.array(list(itertools.product(*ts)), dtype=ts[0].dtype).reshape(-1, len(ts))


def _cart_samples(dtype, rg):
    return [Sample((_x((2,), dtype, rg), _x((3,), dtype, rg, 1))),
            Sample((_x((3,), dtype, rg, 2),), name="one")]


def _np_combinations(x, r=2, with_replacement=False):
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array(list(gen(x, r)), dtype=x.dtype).reshape(-1, r)


def _comb_samples(dtype, rg):
    x = _x((4,), dtype, rg)
    return [Sample((x,)), Sample((x, 3, True), name="repl"),
            *([Sample((x, 5), name="empty")] if not rg else [])]


def _np_unravel(i, shape):
    return np.unravel_index(i % int(np.prod(shape)), shape)


def _unravel_samples(dtype, rg):
    return [Sample((st.tensor([0, 4, 5, 11], dtype=dtype), (3, 4))),
            Sample((st.tensor([[7, -1]], dtype=dtype), (2, 3, 2)), name="wrap")]


# ---- pointwise ----

def _np_logaddexp2(a, b):
    return np.logaddexp2(a, b)


def _pair(dtype, rg):
    return [Sample((_x((3, 4), dtype, rg), _x((3, 4), dtype, rg, 1))),
            Sample((_x((3, 1), dtype, rg, 2), _x((4,), dtype, rg, 3)), name="broadcast")]


def _np_logcumsumexp(x, dim):
    return np.logaddexp.accumulate(x, axis=dim) if x.ndim else x


def _lcse_samples(dtype, rg):
    return [Sample((_x((5,), dtype, rg), 0)), Sample((_x((3, 4), dtype, rg, 1), -1), name="2-d"),
            Sample((_x((), dtype, rg, 2), 0), name="0-d")]


def _int_pair(dtype, rg):
    return [Sample((make((3, 4), dtype, low=-20, high=20), make((3, 4), dtype, low=-20, high=20, seed=1)))]


def _gcd_errors():
    return [ErrorInput(Sample((st.ones(2), st.ones(2))), NotImplementedError, r"not implemented for")]


# ---- statistics ----

def _np_quantile(nan):
    f = np.nanquantile if nan else np.quantile

    def ref(x, q, dim=None, keepdim=False, *, interpolation="linear"):
        return np.asarray(f(x, q, axis=dim, keepdims=keepdim, method=interpolation), x.dtype)
    return ref


def _quantile_samples(nan):
    def samples(dtype, rg):
        x = _x((3, 5), dtype, rg)
        if nan and not rg:
            a = to_numpy(x).copy()
            a[0, 1] = a[2, 3] = np.nan
            x = st.tensor(a, dtype=dtype)
        q = st.tensor([0.0, 0.3, 0.5, 1.0], dtype=dtype)
        return [Sample((x, 0.3)), Sample((x, q, 1), name="q-tensor"),
                Sample((x, 0.4, 0, True), name="keep"),
                *(Sample((x, q, 1), {"interpolation": m}, m)
                  for m in ("lower", "higher", "midpoint", "nearest") if not rg)]
    return samples


def _quantile_errors():
    return [ErrorInput(Sample((st.tensor([1, 2]), 0.5)), RuntimeError, r"float or double"),
            ErrorInput(Sample((st.ones(3), 1.5)), RuntimeError, r"range \[0, 1\]"),
            ErrorInput(Sample((st.ones(3), 0.5), {"interpolation": "cubic"}), RuntimeError,
                       r"interpolation")]


def _np_cov(x, *, correction=1, fweights=None, aweights=None):
    y = x.astype(np.float32) if x.dtype.kind in "iu" else x
    return np.asarray(np.cov(y, ddof=correction, fweights=_np(fweights), aweights=_np(aweights)),
                      y.dtype)


def _cov_samples(dtype, rg):
    return [Sample((_x((3, 6), dtype, rg),)), Sample((_x((6,), dtype, rg, 1),), name="1-d"),
            Sample((_x((2, 4), dtype, rg, 2),), {"correction": 0}, "corr0"),
            Sample((_x((2, 4), dtype, rg, 3),), {"fweights": st.tensor([1, 2, 1, 3]),
                                                 "aweights": st.tensor([0.5, 1.0, 2.0, 1.0])},
                   "weights")]


def _np_corrcoef(x):
    return np.asarray(np.corrcoef(x), x.dtype)


def _np_cdist(a, b, p=2.0):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


def _cdist_samples(dtype, rg):
    a, b = _x((3, 4), dtype, rg), _x((2, 4), dtype, rg, 1)
    return [Sample((a, b)), Sample((a, b, 1.0), name="p1"), Sample((a, b, 3.0), name="p3"),
            Sample((_x((2, 3, 4), dtype, rg, 2), _x((2, 2, 4), dtype, rg, 3)), name="batched"),
            *([Sample((a, b, 0.0), name="p0"), Sample((a, b, float("inf")), name="pinf")]
              if not rg else [])]


def _cdist_errors():
    return [ErrorInput(Sample((st.ones(2, 3, dtype=st.int64), st.ones(2, 3, dtype=st.int64))),
                       RuntimeError, r"floating-point"),
            ErrorInput(Sample((st.ones(2, 3), st.ones(2, 4))), RuntimeError, r"same number of columns")]


def _np_cos(a, b, dim=1, eps=1e-8):
    na = np.maximum(np.linalg.norm(a, axis=dim), eps)
    nb = np.maximum(np.linalg.norm(b, axis=dim), eps)
    return (a * b).sum(dim) / (na * nb)


def _np_pdist(a, b, p=2.0, eps=1e-6, keepdim=False):
    return np.linalg.norm(a - b + eps, ord=p, axis=-1, keepdims=keepdim)


def _np_nanmedian(x, dim=None, keepdim=False):
    if dim is None:
        s = np.sort(x.reshape(-1))
        k = int((~np.isnan(s)).sum())
        return s[(k - 1) // 2] if k else np.asarray(np.nan, x.dtype)
    order = np.argsort(x, axis=dim, kind="stable")
    k = (~np.isnan(x)).sum(axis=dim, keepdims=True)
    i = np.take_along_axis(order, np.maximum((k - 1) // 2, 0), dim)
    v = np.take_along_axis(x, i, dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _np_mode(x, dim=-1, keepdim=False):
    xs = np.moveaxis(x, dim, -1)
    vals, idx = np.empty(xs.shape[:-1], x.dtype), np.empty(xs.shape[:-1], np.int64)
    for pos in np.ndindex(xs.shape[:-1]):
        row = list(xs[pos])
        best = min(set(row), key=lambda v: (-row.count(v), v))  # most frequent, then smallest
        vals[pos], idx[pos] = best, len(row) - 1 - row[::-1].index(best)  # its last index
    if keepdim:
        return np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _mode_samples(dtype, rg):
    rng = np.random.default_rng(0)
    x = st.tensor(rng.integers(0, 3, size=(3, 6)), dtype=dtype)
    return [Sample((x,)), Sample((x, 0, True), name="keep")]


def _nanmedian_samples(dtype, rg):
    a = to_numpy(_x((3, 5), dtype, rg)).copy()
    a[0, 1] = a[1, 4] = np.nan
    x = st.tensor(a, dtype=dtype)
    return [Sample((x,)), Sample((x, 1), name="dim"), Sample((x, 0, True), name="keep")]


def _np_msort(x):
    return np.sort(x, axis=0)


OPS = [
    OpInfo("diff", st.diff, _np_diff, _diff_samples, ALL + (st.bool,), True, _diff_errors, "diff",
           keeps_float32=True),
    OpInfo("trapezoid", st.trapezoid, _np_trapezoid, _trapezoid_samples, ALL, True),
    OpInfo("tensor_split", st.tensor_split, _np_tensor_split, _split_samples, ALL, False,
           method="tensor_split"),
    OpInfo("hsplit", st.hsplit, lambda x, s: tuple(np.hsplit(x, s)),
           lambda dt, rg: [Sample((_x((2, 6), dt, rg), 3)), Sample((_x((6,), dt, rg), [2]))],
           ALL, False, method="hsplit"),
    OpInfo("vsplit", st.vsplit, lambda x, s: tuple(np.vsplit(x, s)),
           lambda dt, rg: [Sample((_x((4, 2), dt, rg), 2))], ALL, False, method="vsplit"),
    OpInfo("dsplit", st.dsplit, lambda x, s: tuple(np.dsplit(x, s)),
           lambda dt, rg: [Sample((_x((1, 2, 4), dt, rg), [1, 3]))], ALL, False, method="dsplit"),
    OpInfo("row_stack", st.row_stack, lambda ts: np.vstack(ts),
           lambda dt, rg: [Sample(([_x((3,), dt, rg), _x((2, 3), dt, rg, 1)],))], ALL, True),
    OpInfo("rot90", st.rot90, _np_rot90, _rot_samples, ALL, True, _rot_errors, "rot90"),
    OpInfo("block_diag", st.block_diag, _np_block_diag, _block_samples, ALL, True),
    OpInfo("cartesian_prod", st.cartesian_prod, _np_cartesian, _cart_samples, ALL, True),
    OpInfo("combinations", st.combinations, _np_combinations, _comb_samples, ALL, True),
    OpInfo("unravel_index", st.unravel_index, _np_unravel, _unravel_samples, INTS, False),
    OpInfo("view_as_real", st.view_as_real, lambda x: np.stack([x.real, x.imag], -1),
           lambda dt, rg: [Sample((_x((3, 2), dt, rg),)), Sample((_x((), dt, rg),), name="0-d")],
           (st.complex64, st.complex128), False),
    OpInfo("view_as_complex", st.view_as_complex, lambda x: x[..., 0] + 1j * x[..., 1],
           lambda dt, rg: [Sample((_x((3, 2), dt, rg),)), Sample((_x((2,), dt, rg),), name="1-d")],
           FLOATS, False),
    OpInfo("real", st.real, np.real, lambda dt, rg: [Sample((_x((3, 2), dt, rg),)), Sample((_x((), dt, rg),), name="0-d")],
           (st.complex64, st.complex128), True, lambda: [ErrorInput(Sample(([1j],)), TypeError, "must be a Tensor")],
           layouts=(st.strided, st.sparse_coo, st.sparse_csr)),
    OpInfo("imag", st.imag, np.imag, lambda dt, rg: [Sample((_x((3, 2), dt, rg),)), Sample((_x((), dt, rg),), name="0-d")],
           (st.complex64, st.complex128), True, lambda: [
               ErrorInput(Sample((st.ones(2),)), RuntimeError, "imag is not implemented for tensors with non-complex")],
           layouts=(st.strided, st.sparse_coo, st.sparse_csr)),
    OpInfo("logaddexp2", st.logaddexp2, _np_logaddexp2, _pair, FLOATS, True, method="logaddexp2"),
    OpInfo("logcumsumexp", st.logcumsumexp, _np_logcumsumexp, _lcse_samples, FLOATS, True,
           method="logcumsumexp"),
    OpInfo("gcd", st.gcd, np.gcd, _int_pair, INTS, False, _gcd_errors, "gcd", "gcd_"),
    OpInfo("lcm", st.lcm, np.lcm, _int_pair, INTS, False, _gcd_errors, "lcm", "lcm_"),
    OpInfo("quantile", st.quantile, _np_quantile(False), _quantile_samples(False), FLOATS, True,
           _quantile_errors, "quantile"),
    OpInfo("nanquantile", st.nanquantile, _np_quantile(True), _quantile_samples(True), FLOATS,
           True, None, "nanquantile"),
    OpInfo("nanmedian", st.nanmedian, _np_nanmedian,
           _nanmedian_samples, FLOATS, False),
    OpInfo("nanmedian.values", lambda x, *a, **k: st.nanmedian(x, *a, **k)
           if not a else st.nanmedian(x, *a, **k).values, None, _nanmedian_samples, FLOATS, True),
    OpInfo("mode", st.mode, _np_mode, _mode_samples, ALL, False, method="mode"),
    OpInfo("msort", st.msort, _np_msort, lambda dt, rg: [Sample((_x((4, 3), dt, rg),))], ALL,
           True, method="msort"),
    OpInfo("cov", st.cov, _np_cov, _cov_samples, ALL, True, method="cov"),
    OpInfo("corrcoef", st.corrcoef, _np_corrcoef,
           lambda dt, rg: [Sample((_x((3, 6), dt, rg),))], FLOATS, True, method="corrcoef"),
    OpInfo("cdist", st.cdist, _np_cdist, _cdist_samples, FLOATS, True, _cdist_errors),
    OpInfo("cosine_similarity", st.cosine_similarity, _np_cos,
           lambda dt, rg: [Sample((_x((3, 4), dt, rg), _x((3, 4), dt, rg, 1))),
                           Sample((_x((3, 4), dt, rg), _x((3, 4), dt, rg, 1), 0), name="dim0")],
           FLOATS, True),
    OpInfo("pairwise_distance", st.pairwise_distance, _np_pdist, _pair, FLOATS, True),
]
