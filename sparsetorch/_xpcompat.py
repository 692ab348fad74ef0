"""Array-module namespaces for the CUDA backends: CuPy (or NumPy, for the fake CUDA backend) with
backend-generic versions of the NumPy APIs that CuPy lacks.

Kernels are written against NumPy (``be.xp``). CuPy mirrors most of it; the gaps that the
kernels hit are filled here ONCE, so the kernels need no per-backend branches:

- ``repeat(a, counts)`` with an array of counts (CuPy < 14 raises ValueError);
- ``ufunc.reduceat`` for ufuncs other than ``add``, ``ufunc.accumulate`` other than
  ``add``/``multiply`` (CuPy raises NotImplementedError);
- ``ufunc.at`` where CuPy has no scatter kernel (``multiply``, ...) or not for the dtype
  (``add.at`` on int64/complex/bool; ``maximum.at``/``minimum.at``, whose atomics do not
  propagate NaN as NumPy does);
- ``concatenate``/``stack`` of Python lists or scalars mixed with arrays (CuPy joins arrays
  only);
- functions missing from older CuPy (``union1d``...) are derived from ones it has;
- under ``torch.use_deterministic_algorithms(True)`` (or ``backends.cudnn.deterministic``),
  floating ``add.at`` / ``subtract.at`` take the sorted path too: CuPy's atomic scatter-add
  sums in thread-timing order, the sorted segment sum in one fixed order; and ``assign``
  (``out[key] = src`` with repeated integer indices, where a GPU keeps an arbitrary one of the
  values) keeps the last one, as NumPy and torch's deterministic mode do.

The replacements are device-side array code (sorts, gathers, log-depth scans), never a copy to
the host. On the CPU, ``be.xp`` is NumPy itself: none of this is on the CPU's path.

The fake CUDA backend (``SPARSETORCH_FAKE_CUDA``) wraps NumPy the same way and takes the same
decisions as for CuPy, so CPU-only tests run these replacements exactly where a GPU would.
"""

import types

from . import _flags

__all__ = ["assign", "compat_namespace", "compat_sparse"]

# dtypes (by NumPy char) of the target array for which CuPy's scatter kernels exist
_NATIVE_AT = {
    "add": frozenset("efdiIQL"),  # float16/32/64, int32, uint32, uint64 (not int64 'l')
    "subtract": frozenset("iI"),
}
_NATIVE_REDUCEAT = frozenset(("add",))
_NATIVE_ACCUMULATE = frozenset(("add", "multiply"))
# the ufuncs wrapped (the ones whose .at/.reduceat/.accumulate the kernels use or may use)
_WRAPPED = ("add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin", "logaddexp",
            "logaddexp2", "logical_or",
            "logical_and", "bitwise_or", "bitwise_and", "bitwise_xor")


def compat_namespace(base):
    """A module-like namespace: ``base`` (numpy or cupy) with the gaps above filled."""
    ns = types.ModuleType(f"sparsetorch_compat_{base.__name__}", __doc__)
    cache = ns.__dict__

    def __getattr__(name):
        try:
            v = getattr(base, name)
        except AttributeError:
            fallback = _FALLBACKS.get(name)
            if fallback is None:
                raise
            v = fallback(ns)
        cache[name] = v
        return v

    ns.__getattr__ = __getattr__
    ns.__base__ = base
    ns.repeat = lambda a, repeats, axis=None: repeat(base, a, repeats, axis)
    ns.concatenate = lambda arrays, axis=0, **kw: base.concatenate(_arrays(base, arrays), axis, **kw)
    ns.stack = lambda arrays, axis=0, **kw: base.stack(_arrays(base, arrays), axis, **kw)
    for name in _WRAPPED:
        setattr(ns, name, _Ufunc(base, name))
    return ns


def compat_sparse(base):
    """scipy.sparse restricted as cupyx.scipy.sparse is, for the fake CUDA backend: no private
    helpers (code probing ``getattr(be.sp, "_sparsetools", None)`` takes its generic path), and
    the matrix classes accept only cupyx's value dtypes (bool, float32/64, complex64/128)."""
    ns = types.ModuleType(f"sparsetorch_compat_{base.__name__}")

    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(base, name)

    ns.__getattr__ = __getattr__
    for name in ("csr_matrix", "csc_matrix", "coo_matrix"):
        setattr(ns, name, _checked_class(getattr(base, name)))
    return ns


_CUPYX_DTYPES = frozenset("?fdFD")


def _checked_class(cls):
    def __init__(self, arg1, shape=None, dtype=None, copy=False):
        data = arg1[0] if isinstance(arg1, tuple) else arg1
        dt = getattr(data, "dtype", None) if dtype is None else __import__("numpy").dtype(dtype)
        if dt is not None and dt.char not in _CUPYX_DTYPES:
            raise ValueError(f"Only bool, float32, float64, complex64 and complex128 are "
                             f"supported (cupyx.scipy.sparse.{cls.__name__}; got {dt})")
        cls.__init__(self, arg1, shape=shape, dtype=dtype, copy=copy)

    return type(cls.__name__, (cls,), {"__init__": __init__})


def _arrays(base, arrays):
    """CuPy joins arrays only: Python lists/scalars among them (``[True]``) become arrays."""
    return tuple(a if isinstance(a, base.ndarray) else base.asarray(a) for a in arrays)


# ---- repeat with an array of counts ----


def expand(xp, counts):
    """``i`` repeated ``counts[i]`` times (NumPy's ``repeat(arange(n), counts)``), on device."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0
    return xp.searchsorted(ends, xp.arange(total, dtype=ends.dtype), side="right")


def repeat(xp, a, repeats, axis=None):
    if not hasattr(repeats, "ndim") or repeats.ndim == 0 or repeats.shape[0] == 1:
        if hasattr(repeats, "ndim"):
            repeats = int(repeats.reshape(-1)[0]) if repeats.size else repeats
        return xp.repeat(a, repeats, axis)
    a = xp.asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return xp.take(a, expand(xp, repeats), axis=axis)


# ---- ufunc methods ----


class _Ufunc:
    """A ufunc of ``base`` whose ``at``/``reduceat``/``accumulate`` fall back to generic code
    where CuPy has none (the same decision is taken over NumPy for the fake backend)."""

    __slots__ = ("base", "fn", "name")

    def __init__(self, base, name):
        self.base = base
        self.fn = getattr(base, name)
        self.name = name

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __getattr__(self, attr):  # reduce, outer, nin, identity, ...
        return getattr(self.fn, attr)

    def __repr__(self):
        return f"<compat ufunc {self.name}>"

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        if self.name in _NATIVE_REDUCEAT:
            return self.fn.reduceat(a, indices, axis=axis, dtype=dtype, out=out)
        r = reduceat(self.base, self.fn, a if dtype is None else a.astype(dtype), indices, axis)
        if out is not None:
            out[...] = r
            return out
        return r

    def accumulate(self, a, axis=0, dtype=None, out=None):
        if self.name in _NATIVE_ACCUMULATE:
            return self.fn.accumulate(a, axis=axis, dtype=dtype, out=out)
        r = accumulate(self.base, self.fn, a if dtype is None else a.astype(dtype), axis)
        if out is not None:
            out[...] = r
            return out
        return r

    def at(self, a, indices, b=None):
        if a.dtype.char in _NATIVE_AT.get(self.name, ()) and not (
                a.dtype.kind in "fc" and _flags.deterministic()):
            # CuPy's atomics sum floats in thread-timing order; under the deterministic flags
            # the sorted segment sum below (a stable sort, then one fixed order) runs instead
            return self.fn.at(a, indices, b)
        if b is None:
            raise NotImplementedError(f"{self.name}.at without operand b on a CUDA backend")
        scatter_reduce(self.base, self.fn, self.name, a, indices, b)
        return None


def reduceat(xp, fn, a, indices, axis=0):
    """``fn.reduceat(a, indices, axis)`` with NumPy's semantics (an index >= the next one gives
    that single element), as a segmented log-depth scan: O(n log L), L the longest segment."""
    a = xp.moveaxis(xp.asarray(a), axis, 0)
    idx = xp.asarray(indices).reshape(-1).astype(xp.int64)
    n, k = a.shape[0], idx.shape[0]
    if k == 0:
        return xp.moveaxis(xp.empty((0,) + a.shape[1:], a.dtype), 0, axis)
    if bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError(f"index out-of-bounds in reduceat for an axis of size {n}")
    nxt = xp.concatenate((idx[1:], xp.full(1, n, xp.int64)))
    lengths = xp.where(nxt > idx, nxt - idx, 1)
    seg = expand(xp, lengths)
    offs = xp.cumsum(lengths) - lengths
    within = xp.arange(seg.shape[0], dtype=xp.int64) - offs[seg]
    g = a[idx[seg] + within]
    _segmented_scan(xp, fn, g, within, int(lengths.max()))
    return xp.moveaxis(g[offs + lengths - 1], 0, axis)


def accumulate(xp, fn, a, axis=0):
    """``fn.accumulate(a, axis)`` as a log-depth (Hillis-Steele) scan."""
    g = xp.moveaxis(xp.asarray(a), axis, 0).copy()
    s, n = 1, g.shape[0]
    while s < n:
        g[s:] = fn(g[s:], g[:-s])  # the right side is computed from the old g before the write
        s *= 2
    return xp.moveaxis(g, 0, axis)


def _segmented_scan(xp, fn, g, within, longest):
    """In place: ``g[i]`` becomes ``fn`` over its segment's elements up to ``i`` (``within[i]``
    is ``i``'s position in its segment)."""
    s = 1
    while s < longest:
        ok = (within[s:] >= s).reshape((-1,) + (1,) * (g.ndim - 1))
        g[s:] = xp.where(ok, fn(g[s:], g[:-s]), g[s:])
        s *= 2


def scatter_reduce(xp, fn, name, a, indices, b):
    """``fn.at(a, indices, b)``: duplicates of an index all apply (NumPy's unbuffered
    semantics), by sorting the addressed positions and reducing each run first."""
    pos = xp.arange(a.size, dtype=xp.int64).reshape(a.shape)[indices]
    keys = pos.reshape(-1)
    if keys.shape[0] == 0:
        return
    vals = xp.broadcast_to(xp.asarray(b), pos.shape).reshape(-1)
    order = xp.argsort(keys)
    keys, vals = keys[order], vals[order]
    head = xp.concatenate((xp.ones(1, bool), keys[1:] != keys[:-1]))
    starts = xp.flatnonzero(head)
    if name == "add" or name == "subtract":
        red = xp.add.reduceat(vals, starts, axis=0)
    else:
        red = reduceat(xp, fn, vals, starts, 0)
    sub = xp.unravel_index(keys[starts], a.shape)
    a[sub] = fn(a[sub], red)


# ---- deterministic assignment through repeated indices ----


def _int_arrays(key):
    parts = key if isinstance(key, tuple) else (key,)
    return any(getattr(k, "ndim", 0) > 0 and k.dtype.kind in "iu" for k in parts)


def assign(be, out, key, src):
    """``out[key] = src``. On a CUDA backend under the deterministic flags, when ``key`` holds
    integer index arrays (which may repeat a position), the last value for each position is
    written, as NumPy does; elsewhere the plain assignment runs."""
    if be.name == "cpu" or not _flags.deterministic() or not _int_arrays(key):
        out[key] = src
        return
    xp = be.xp
    pos = xp.arange(out.size, dtype=xp.int64).reshape(out.shape)[key]
    vals = xp.broadcast_to(xp.asarray(src).astype(out.dtype, copy=False), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if pos.shape[0] == 0:
        return
    try:
        order = xp.argsort(pos, kind="stable")
    except (TypeError, NotImplementedError):  # a CuPy without ``kind=``: its sort is stable
        order = xp.argsort(pos)
    sorted_pos = pos[order]
    last = xp.concatenate((sorted_pos[1:] != sorted_pos[:-1], xp.ones(1, bool)))
    keep = order[last]
    out[xp.unravel_index(pos[keep], out.shape)] = vals[keep]


# ---- functions missing from older CuPy ----


def _union1d(ns):
    return lambda a, b: ns.unique(ns.concatenate((ns.ravel(a), ns.ravel(b))))


_FALLBACKS = {"union1d": _union1d}


# ---- special functions: cupyx.scipy.special's gaps filled by SciPy on the host ----


def compat_special(base, host, xp):
    """``base`` (cupyx.scipy.special) where it has the function; elsewhere SciPy's version run on
    the host (arguments copied there and the result back), so rare functions (Airy, spherical
    Bessel, the orthogonal polynomials) work on a GPU at the cost of two copies."""
    ns = types.ModuleType("sparsetorch_compat_special", __doc__)
    cache = ns.__dict__

    def __getattr__(name):
        try:
            v = getattr(base, name)
        except AttributeError:
            v = _via_host(getattr(host, name), xp)
        cache[name] = v
        return v

    ns.__getattr__ = __getattr__
    return ns


def _via_host(fn, xp):
    def on_host(*args, **kwargs):
        hargs = [a.get() if isinstance(a, xp.ndarray) else a for a in args]
        r = fn(*hargs, **kwargs)
        return tuple(xp.asarray(t) for t in r) if isinstance(r, tuple) else xp.asarray(r)

    on_host.__name__ = getattr(fn, "__name__", "special")
    return on_host
