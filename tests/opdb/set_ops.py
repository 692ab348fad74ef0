"""OpInfo rows for the set and counting ops: unique, unique_consecutive, bincount, searchsorted,
bucketize, isin, histc. Their results are integer/bool valued: no gradcheck rows."""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample

ALL = FLOATS + INTS


def _dups(shape, dtype, seed=0):
    """A tensor with many repeated values (small integers, in any dtype)."""
    rng = np.random.default_rng(seed)
    return st.tensor(rng.integers(-2, 3, size=shape), dtype=dtype)


def _np_unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        v, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        v, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    out = (v,) + ((inv,) if return_inverse else ()) + ((cnt,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def _unique_samples(dtype, rg):
    return [
        Sample((_dups((7,), dtype),), name="1-d"),
        Sample((_dups((3, 4), dtype, 1),), {"return_inverse": True, "return_counts": True}, "2-d"),
        Sample((_dups((4, 2), dtype, 2),), {"dim": 0, "return_inverse": True}, "dim0"),
        Sample((_dups((2, 5), dtype, 3),), {"dim": 1, "return_counts": True}, "dim1"),
        Sample((_dups((), dtype, 4),), {"return_inverse": True}, "0-d"),
    ]


def _np_unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    flat = x.reshape(-1)
    if flat.size == 0:
        starts = np.zeros(0, np.int64)
    else:
        starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    inv = (np.cumsum(np.r_[True, flat[1:] != flat[:-1]]) - 1).reshape(x.shape)
    cnt = np.diff(np.r_[starts, flat.size])
    out = (flat[starts],) + ((inv,) if return_inverse else ()) + ((cnt,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def _consecutive_samples(dtype, rg):
    a = st.tensor([1, 1, 2, 2, 3, 1, 1, 2], dtype=dtype)
    return [Sample((a,), name="plain"),
            Sample((a,), {"return_inverse": True, "return_counts": True}, "all"),
            Sample((_dups((3, 3), dtype),), {"return_counts": True}, "2-d")]


def _unique_errors():
    return [ErrorInput(Sample((st.ones(2),), {"dim": 3}), IndexError, r"Dimension out of range"),
            ErrorInput(Sample(([1, 2],)), TypeError, r"must be a Tensor"),
            ErrorInput(Sample((st.ones(3).to_sparse(),)), NotImplementedError, r"to_dense")]


def _np_bincount(x, weights=None, minlength=0):
    r = np.bincount(x, weights, minlength)
    return r.astype(np.float32 if weights is not None and weights.dtype == np.float32 else
                    np.float64 if weights is not None else np.int64)


def _bincount_samples(dtype, rg):
    x = st.tensor([0, 1, 1, 3, 5, 1], dtype=dtype)
    out = [Sample((x,)), Sample((x,), {"minlength": 9}, "minlength"),
           Sample((st.tensor([], dtype=dtype),), {"minlength": 3}, "empty")]
    for wd in FLOATS:
        out.append(Sample((x, st.tensor([0.5, 1, 2, 3, 4, 5], dtype=wd)), name=f"w-{wd.name}"))
    return out


def _bincount_errors():
    return [
        ErrorInput(Sample((st.tensor([-1, 2]),)), RuntimeError, r"non-negative"),
        ErrorInput(Sample((st.tensor([[1, 2]]),)), RuntimeError, r"1-d"),
        ErrorInput(Sample((st.tensor([1.0, 2.0]),)), NotImplementedError, r"not implemented for 'Float'"),
        ErrorInput(Sample((st.tensor([1, 2]),), {"minlength": -1}), RuntimeError, r"minlength"),
        ErrorInput(Sample((st.tensor([1, 2]), st.tensor([1.0]))), RuntimeError, r"same length"),
    ]


def _np_searchsorted(seq, v, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorter is not None:  # kwargs reach the reference as Tensors
        seq = np.take_along_axis(seq, sorter.numpy(), -1)
    if seq.ndim == 1:
        r = np.searchsorted(seq, v, side=side)
    else:
        r = np.stack([np.searchsorted(s, vv, side=side) for s, vv in
                      zip(seq.reshape(-1, seq.shape[-1]), np.reshape(v, (-1, np.shape(v)[-1])))])
        r = r.reshape(np.shape(v))
    return np.asarray(r, np.int32 if out_int32 else np.int64)


def _searchsorted_samples(dtype, rg):
    seq = st.tensor([1, 3, 3, 5, 7], dtype=dtype)
    vals = st.tensor([[0, 3], [6, 9]], dtype=dtype)
    seq2 = st.tensor([[1, 3, 5], [2, 4, 6]], dtype=dtype)
    return [Sample((seq, vals)), Sample((seq, vals), {"right": True}, "right"),
            Sample((seq, vals), {"side": "right", "out_int32": True}, "side-int32"),
            Sample((seq2, st.tensor([[3, 0], [4, 7]], dtype=dtype)), name="batched"),
            Sample((st.tensor([5, 1, 3], dtype=dtype), vals), {"sorter": st.tensor([1, 2, 0])},
                   "sorter")]


def _searchsorted_errors():
    return [
        ErrorInput(Sample((st.tensor([[1, 3]]), st.tensor([1, 2, 3]))), RuntimeError, r"boundaries"),
        ErrorInput(Sample((st.tensor([1, 3]), st.tensor([2])), {"side": "left", "right": True}),
                   RuntimeError, r"opposites"),
    ]


def _np_bucketize(x, b, out_int32=False, right=False):
    return np.asarray(np.searchsorted(b, x, side="right" if right else "left"),
                      np.int32 if out_int32 else np.int64)


def _bucketize_samples(dtype, rg):
    b = st.tensor([1, 3, 5, 7], dtype=dtype)
    x = st.tensor([[1, 5], [3, 9]], dtype=dtype)
    return [Sample((x, b)), Sample((x, b), {"right": True}, "right")]


def _np_isin(e, t, assume_unique=False, invert=False):
    return np.isin(e, t, invert=invert)


def _isin_samples(dtype, rg):
    e = _dups((3, 4), dtype)
    return [Sample((e, st.tensor([0, 2], dtype=dtype))),
            Sample((e, st.tensor([0, 2], dtype=dtype)), {"invert": True}, "invert"),
            Sample((e, 1), name="scalar-test")]


def _np_histc(x, bins=100, min=0, max=0):
    lo, hi = (x.min(), x.max()) if min == max else (min, max)
    return np.histogram(x, bins, (lo, hi))[0].astype(x.dtype)


def _histc_samples(dtype, rg):
    x = st.tensor([0.5, 1.0, 1.25, 2.0, 2.75, -1.0, 4.0], dtype=dtype)
    return [Sample((x,)), Sample((x,), {"bins": 4, "min": 0, "max": 3}, "range"),
            Sample((x,), {"bins": 3}, "data-range")]


def _histc_errors():
    return [
        ErrorInput(Sample((st.tensor([1, 2]),)), NotImplementedError, r"not implemented for 'Long'"),
        ErrorInput(Sample((st.tensor([1.0, 2.0]),), {"bins": 0}), RuntimeError, r"bins must be > 0"),
        ErrorInput(Sample((st.tensor([1.0, 2.0]),), {"min": 3, "max": 1}), RuntimeError, r"max must be larger"),
    ]


OPS = [
    OpInfo("unique", st.unique, _np_unique, _unique_samples, ALL, False, _unique_errors, "unique"),
    OpInfo("unique_consecutive", st.unique_consecutive, _np_unique_consecutive,
           _consecutive_samples, ALL, False, None, "unique_consecutive"),
    OpInfo("bincount", st.bincount, _np_bincount, _bincount_samples, INTS, False,
           _bincount_errors, "bincount"),
    OpInfo("searchsorted", st.searchsorted, _np_searchsorted, _searchsorted_samples, ALL, False,
           _searchsorted_errors),
    OpInfo("bucketize", st.bucketize, _np_bucketize, _bucketize_samples, ALL, False),
    OpInfo("isin", st.isin, _np_isin, _isin_samples, ALL, False),
    OpInfo("histc", st.histc, _np_histc, _histc_samples, FLOATS, False, _histc_errors, "histc"),
]
