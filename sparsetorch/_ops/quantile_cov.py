"""Order statistics and covariance at torch's top level: quantile, nanquantile, nanmedian, mode,
msort, cov, corrcoef. (The distances cdist, cosine_similarity, pairwise_distance are in
``distance.py``.)

The differentiable ones are compositions of differentiable sparsetorch ops (sort, gather,
matmul, norm, ...), so their gradients come from their parts (double backward included). The
index searches (which element is the median / the mode) are done on the payload with
``be.xp``; the values are then gathered from the input, differentiably, as torch does.
"""

import numbers
import warnings

from .. import _dtype as D
from .. import _autocast as _ac
from .._dispatch import get_backend, wrap
from .._layout import strided
from .._tensor import Tensor
from .._variants import method
from ._util import check_tensor, dense_only, norm_dim, with_out
from .sorting import return_type

__all__ = [
    "corrcoef",
    "cov",
    "mode",
    "msort",
    "nanmedian",
    "nanquantile",
    "quantile",
]

nanmedian_return = return_type("nanmedian", ("values", "indices"))
mode_return = return_type("mode", ("values", "indices"))


def _i64(data, like):
    return wrap(data, D.int64, like.device, strided)


# ---- quantile, nanquantile ----

_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, fname, ignore_nan):
    check_tensor(input, fname)
    dense_only(input, fname)
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{fname}() input tensor must be either float or double dtype")
    if interpolation not in _INTERP:
        raise RuntimeError(f"{fname}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    xp = get_backend(input.device).xp
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{fname}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{fname}() q tensor must be same dtype as the input tensor")
        qs = xp.asarray(q._data, dtype=xp.float64).reshape(-1)
        q_scalar = q.ndim == 0
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        qs = xp.asarray([float(q)])
        q_scalar = True
    else:
        raise TypeError(f"{fname}(): argument 'q' must be a float or a Tensor, not {type(q).__name__}")
    if qs.size and bool(((qs < 0) | (qs > 1)).any()):
        bad = float(qs[(qs < 0) | (qs > 1)][0])
        raise RuntimeError(f"{fname}() q must be in the range [0, 1] but got {bad:g}")
    if input.numel() == 0:
        raise IndexError(f"{fname}() input tensor must be non-empty")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        d = norm_dim(dim, input.ndim, fname)
        x = input if input.ndim else input.reshape(1)
    s = x.sort(d).values.movedim(d, -1)  # (..., n), NaN last
    n = s.shape[-1]
    nan_count = xp.isnan(s._data).sum(axis=-1)
    if ignore_nan:
        k = n - nan_count
    else:  # a slice with NaN has NaN as every quantile: point every index at the last (NaN)
        k = xp.where(nan_count > 0, 1, n)
    qq = qs.reshape((-1,) + (1,) * (s.ndim - 1))
    pos = qq * (k - 1)
    if interpolation == "nearest":
        pos = xp.round(pos)  # half to even, as torch
    lo = xp.floor(pos)
    hi = xp.ceil(pos)
    frac = pos - lo
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "midpoint":
        frac = xp.where(hi > lo, 0.5, 0.0)
    shift = xp.where(k > 0, 0, n - 1)  # all-NaN slice: read a NaN
    if not ignore_nan:
        shift = xp.where(nan_count > 0, n - 1, 0)
    lo = xp.clip(lo + shift, 0, n - 1).astype(xp.int64)
    hi = xp.clip(hi + shift, 0, n - 1).astype(xp.int64)
    ex = s.unsqueeze(0).expand(len(qs), *s.shape)
    a = ex.gather(-1, _i64(lo, input).unsqueeze(-1)).squeeze(-1)
    b = ex.gather(-1, _i64(hi, input).unsqueeze(-1)).squeeze(-1)
    f = wrap(xp.asarray(frac, dtype=input.dtype.np), input.dtype, input.device, strided)
    r = a + (b - a) * f if interpolation in ("linear", "midpoint") else a
    if keepdim:
        if dim is None:
            r = r.reshape((r.shape[0],) + (1,) * input.ndim)
        elif input.ndim:
            r = r.unsqueeze(d + 1)
    if q_scalar:
        r = r.squeeze(0)
    return r


@method
@_ac.policy(_ac.FP32)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Computes the q-th quantiles of each row of ``input`` along ``dim`` (all elements when
    None). A slice holding NaN has NaN quantiles; ``q`` may be a float or a 1-D tensor."""
    return with_out(_quantile(input, q, dim, keepdim, interpolation, "quantile", False),
                    out, "quantile")


@method
@_ac.policy(_ac.FP32)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """A variant of :func:`quantile` that ignores NaN values (an all-NaN slice gives NaN)."""
    return with_out(_quantile(input, q, dim, keepdim, interpolation, "nanquantile", True),
                    out, "nanquantile")


# ---- nanmedian, mode, msort ----

@method
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median of ``input``, ignoring NaN (a slice of all NaN gives NaN). With ``dim``:
    (values, indices) along ``dim``."""
    check_tensor(input, "nanmedian")
    dense_only(input, "nanmedian")
    xp = get_backend(input.device).xp
    x = input.reshape(-1) if dim is None else (input if input.ndim else input.reshape(1))
    d = 0 if dim is None else norm_dim(dim, input.ndim, "nanmedian")
    if x.shape[d] == 0:
        if dim is None:
            return input.sum() * float("nan")
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    order = xp.argsort(D.sort_key(xp, x._data), axis=d, kind="stable")  # NaN sorts last
    isnan = xp.isnan(x._data) if input.dtype.is_floating_point else xp.zeros(x.shape, bool)
    k = x.shape[d] - isnan.sum(axis=d, keepdims=True)
    pos = xp.where(k > 0, (k - 1) // 2, 0).astype(xp.int64)
    idx = xp.take_along_axis(order, pos, axis=d)
    vals = x.gather(d, _i64(idx, input))
    if dim is None:
        return vals.reshape(())
    if not keepdim or input.ndim == 0:
        vals, idx = vals.squeeze(d), idx.squeeze(d)
        if input.ndim == 0:
            vals, idx = vals.reshape(()), idx.reshape(())
    r = nanmedian_return((vals, _i64(idx, input)))
    return r if out is None else type(r)(v.copy_(w) for v, w in zip(out, r))


@method
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The mode (most frequent value; the smallest among ties) of each slice of ``input`` along
    ``dim``, and the index of its last occurrence."""
    check_tensor(input, "mode")
    dense_only(input, "mode")
    xp = get_backend(input.device).xp
    x = input if input.ndim else input.reshape(1)
    d = norm_dim(dim, input.ndim, "mode")
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = xp.moveaxis(x._data, d, -1)
    lead = rows.shape[:-1]
    n = rows.shape[-1]
    rows = rows.reshape(-1, n)
    best = xp.empty(rows.shape[0], dtype=xp.int64)
    for i in range(rows.shape[0]):  # per slice: counts of the sorted run, last index of winner
        r = rows[i]
        order = xp.argsort(r, kind="stable")
        srt = r[order]
        starts = xp.flatnonzero(xp.concatenate([xp.asarray([True]), srt[1:] != srt[:-1]]))
        counts = xp.diff(xp.concatenate([starts, xp.asarray([n])]))
        g = int(xp.argmax(counts))  # first max: the smallest value among ties
        best[i] = order[starts[g] + counts[g] - 1]  # stable sort: last of the run = last index
    idx = xp.moveaxis(best.reshape(lead + (1,)), -1, d)
    vals = x.gather(d, _i64(idx, input))
    if not keepdim or input.ndim == 0:
        vals, idx = vals.squeeze(d), idx.squeeze(d)
        if input.ndim == 0:
            vals, idx = vals.reshape(()), idx.reshape(())
    r = mode_return((vals, _i64(idx.copy(), input)))
    return r if out is None else type(r)(v.copy_(w) for v, w in zip(out, r))


@method
def msort(input, *, out=None):
    """Sorts the elements of ``input`` along its first dimension in ascending order by value."""
    check_tensor(input, "msort")
    r = input.sort(0).values
    return r if out is None else out.copy_(r)


# ---- cov, corrcoef ----

@method
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Estimates the covariance matrix of the variables given by the ``input`` matrix, where rows
    are the variables and columns are the observations (a 1-D input is one variable)."""
    check_tensor(input, "cov")
    dense_only(input, "cov")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(D.get_default_dtype())
    n_obs = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        check_tensor(wt, "cov", name)
        if wt.ndim > 1 or wt.numel() != n_obs:
            raise RuntimeError(f"cov(): expected {name} to have one dimension and the same "
                               f"number of elements as the input has observations ({n_obs})")
        if name == "fweights" and (wt.dtype.is_floating_point or wt.dtype.is_complex):
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        if bool((wt < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        wt = wt.reshape(-1).to(x.dtype if not x.dtype.is_complex else D.float64)
        w = wt if w is None else w * wt
    if w is None:
        avg = x.mean(1, keepdim=True)
        w_sum = float(n_obs)
        norm = w_sum - correction
    else:
        w_sum_t = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum_t
        w_sum = float(w_sum_t.item())
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * float((w * aweights.to(w.dtype)).sum().item()) / w_sum
    if norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
    norm = max(norm, 0.0)
    xm = x - avg
    xw = xm if w is None else xm * w
    c = xw.matmul(xm.transpose(0, 1).conj()) / norm if norm else \
        xw.matmul(xm.transpose(0, 1).conj()) * float("inf")
    return c.squeeze() if input.ndim < 2 else c


@method
def corrcoef(input):
    """Estimates the Pearson product-moment correlation coefficient matrix of the variables
    given by the ``input`` matrix (rows are variables, columns observations)."""
    check_tensor(input, "corrcoef")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    sd = c.diagonal().sqrt()
    c = c / sd.unsqueeze(1) / sd.unsqueeze(0)
    return c.clamp(-1, 1) if not c.dtype.is_complex else c
