"""numba row-update kernels for the optimizers (CPU backend, float32/float64).

Built on first use (``@njit(cache=True)``); ``kernels(be, dtype)`` returns None when numba is
missing, disabled (``SPARSETORCH_NO_NUMBA=1`` or ``sparsetorch._jit.use_numba(False)``),
the backend is not the CPU one or the dtype is not float32/64 -- the optimizers then use their
NumPy paths. Thread counts are passed in (``nblk``), never read inside a kernel, so the cached
machine code does not depend on the process's thread setting. The dense Adam kernel computes in
the parameter's dtype; the row kernels compute in float64 and store in the parameter's dtype.
"""

import sys

from .. import _jit

__all__ = ["kernels", "num_blocks", "warm"]

prefetch = None  # set by _build: the numba prefetch intrinsic (nn/_kernels/_prefetch.py)


def kernels(be, dt):
    return _cpu_kernels(dt) if be.name == "cpu" else None


def _cpu_kernels(dt):
    if dt.kind != "f" or dt.itemsize not in (4, 8):
        return None
    return _jit.kernels("optim", _build, 8.0)


# the kernels each optimizer calls (by class name; subclasses such as AdamW look up their bases)
_USES = {
    "Adam": ("adam_flat", "adam_rows"), "SparseAdam": ("adam_rows",),
    "Adagrad": ("adagrad_rows",), "RowWiseAdagrad": ("rowwise_adagrad_rows",),
    "SGD": ("sgd_rows", "sgd_entries"),
}


def warm(cls, dtypes):
    """Load the cached kernels optimizer class ``cls`` calls, for these NumPy dtypes, now (when
    the optimizer is constructed), so that its first step runs at its steady speed. Only when
    numba is loaded in this process already (an embedding table or an earlier kernel loaded it):
    a dense model's optimizer does not pay numba's start-up for kernels it may never call."""
    if "numba" not in sys.modules:
        return 0
    names = next((_USES[c.__name__] for c in cls.__mro__ if c.__name__ in _USES), None)
    if names is None:
        return 0
    n = 0
    for dt in dtypes:
        n += _jit.warm(_cpu_kernels(dt), dt, names)
    return n


def num_blocks(k, n):
    """How many parallel blocks to split ``n`` elements into (4 per thread, >= 64k each)."""
    return max(1, min(4 * k.numba.get_num_threads(), n // 65536))


def _build():
    try:
        import numba
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False
    # a module global, not a closure variable (numba's cache keys on closure pickles)
    global prefetch
    from ..nn._kernels import _prefetch

    prefetch = _prefetch.prefetch

    # Each kernel is self-contained (no calls to other jitted functions of this scope: closure
    # variables would change the cache key in every process).
    @njit(parallel=True, cache=True)
    def adam_flat(P, G, m, v, vmax, ams, ss, lr, b1, b2, eps, bc2s, wd, decoupled, maximize, nblk):
        # the arithmetic runs in the parameter's dtype (as torch's): float32 SIMD lanes are twice
        # as many, and the step is memory bound
        n = P.size
        t = P.dtype.type
        c1 = t(1.0 - b1)
        c2 = t(1.0 - b2)
        b2 = t(b2)
        dec = t(1.0 - lr * wd)
        wd = t(wd)
        ss = t(ss)
        ib = t(1.0 / bc2s)
        eps = t(eps)
        for b in prange(nblk):
            i0 = n * b // nblk
            i1 = n * (b + 1) // nblk
            for i in range(i0, i1):
                g = G[i]
                if maximize:
                    g = -g
                p = P[i]
                if wd != 0.0:
                    if decoupled:
                        p = p * dec
                    else:
                        g = g + wd * p
                mm = m[i] + (g - m[i]) * c1
                vv = v[i] * b2 + c2 * g * g
                m[i] = mm
                v[i] = vv
                if ams:
                    if vmax[i] > vv:  # noqa: PLR1730 - explicit, as numba lowers it
                        vv = vmax[i]
                    vmax[i] = vv
                P[i] = p - ss * (mm / (np.sqrt(vv) * ib + eps))

    @njit(parallel=True, cache=True)
    def adam_rows(P, m, v, vmax, ams, rows, G, rowmap, ss, lr, b1, b2, eps, bc2s, wd, decoupled,
                  maximize):
        # rows.size > 0: update rows[k] with G[k] (lazy / SparseAdam). Otherwise every row r of P,
        # with gradient G[rowmap[r]] or zero when rowmap[r] < 0 (exact sparse: dense decay).
        c1 = 1.0 - b1
        c2 = 1.0 - b2
        dec = 1.0 - lr * wd
        D = P.shape[1]
        lazy = rows.size > 0
        n = rows.size if lazy else P.shape[0]
        for k in prange(n):
            if lazy:
                r = rows[k]
                kk = np.int64(k)
            else:
                r = np.int64(k)
                kk = rowmap[k]
            for d in range(D):
                g = 0.0
                if kk >= 0:
                    g = G[kk, d]
                if maximize:
                    g = -g
                p = P[r, d]
                if wd != 0.0:
                    if decoupled:
                        p = p * dec
                    else:
                        g = g + wd * p
                mm = m[r, d] + (g - m[r, d]) * c1
                vv = v[r, d] * b2 + c2 * g * g
                m[r, d] = mm
                v[r, d] = vv
                if ams:
                    if vmax[r, d] > vv:  # noqa: PLR1730 - explicit, as numba lowers it
                        vv = vmax[r, d]
                    vmax[r, d] = vv
                P[r, d] = p - ss * (mm / (np.sqrt(vv) / bc2s + eps))

    @njit(parallel=True, cache=True)
    def adagrad_rows(P, s, rows, G, clr, eps, wd, maximize):
        D = P.shape[1]
        for k in prange(rows.size):
            r = rows[k]
            for d in range(D):
                g = G[k, d]
                if maximize:
                    g = -g
                if wd != 0.0:
                    g = g + wd * P[r, d]
                ss = s[r, d] + g * g
                s[r, d] = ss
                P[r, d] = P[r, d] - clr * (g / (np.sqrt(ss) + eps))

    @njit(parallel=True, cache=True)
    def rowwise_adagrad_rows(P, s, rows, G, lr, eps, wd, maximize):
        D = P.shape[1]
        for k in prange(rows.size):
            r = rows[k]
            acc = 0.0
            for d in range(D):
                g = G[k, d]
                if maximize:
                    g = -g
                if wd != 0.0:
                    g = g + wd * P[r, d]
                acc += g * g
            ss = s[r] + (acc / D if D > 0 else 0.0)
            s[r] = ss
            mult = lr / (np.sqrt(ss) + eps)
            for d in range(D):
                g = G[k, d]
                if maximize:
                    g = -g
                if wd != 0.0:
                    g = g + wd * P[r, d]
                P[r, d] = P[r, d] - mult * g

    @njit(parallel=True, cache=True)
    def sgd_rows(P, rows, G, lr):
        # P[rows[k]] = P[rows[k]] - lr * G[k] in the parameter's dtype: the bits of NumPy's
        # ``P[rows] = P[rows] - lr * G`` (a python float times a float32 array stays float32);
        # rows unique (a coalesced gradient)
        D = P.shape[1]
        a = P.dtype.type(lr)
        for k in prange(rows.size):
            r = rows[k]
            for d in range(D):
                P[r, d] = P[r, d] - a * G[k, d]

    @njit(cache=True)
    def sgd_entries(P, idx, G, lr):
        # P[idx[k]] -= lr * G[k] for every entry k in order (an uncoalesced gradient: duplicates
        # applied one after another, as torch's index_add_ does), with the row 16 entries ahead
        # prefetched; one thread (memory bound: 65k zipf rows x 64 of a 1M-row table in 1.0 ms,
        # 2.1 ms without the prefetch, 3.5 ms as a prange over column blocks)
        D = P.shape[1]
        n = idx.size
        a = P.dtype.type(lr)
        Pf = P.reshape(-1)
        for k in range(n):
            if k + 16 < n:
                ahead = idx[k + 16] * D
                for q in range(0, D, 16):
                    prefetch(Pf, ahead + q)
            p = P[idx[k]]
            g = G[k]
            for d in range(D):
                p[d] = p[d] - a * g[d]

    class K:
        pass

    k = K()
    k.numba = numba
    k.adam_flat = adam_flat
    k.adam_rows = adam_rows
    k.adagrad_rows = adagrad_rows
    k.rowwise_adagrad_rows = rowwise_adagrad_rows
    k.sgd_rows = sgd_rows
    k.sgd_entries = sgd_entries
    return k
