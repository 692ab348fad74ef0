"""numba kernels for layer_norm over the last dim, one pass per row each way (torch's CPU layer
norm is one kernel each way too).

- ``forward(x, w, b, cst, y)``: per row the mean, the biased variance (two passes over the row,
  which sits in L1), then ``(x - mean) * rstd * w + b``.
- ``backward(x, g, w, cst, gx, pw, pb, chunks)``: per row the statistics again, the two row means
  ``mean(g w)`` and ``mean(g w x^)``, then ``gx = rstd (g w - mean(g w) - x^ mean(g w x^))``; the
  weight and bias gradients ``sum(g x^)``, ``sum(g)`` are accumulated per chunk of rows in the
  same loop (``pw``, ``pb``: one zeroed row per chunk, summed by the caller).

Rows are split over threads (``prange``; the count set by ``_jit.limit``). Arithmetic in the
array's dtype; ``cst`` holds ``(1 / D, eps, 1)`` in that dtype (no float64 promotion); the row sums
may be reassociated (vectorised). Built on first use (``cache=True``), CPU backend only.
"""

from ... import _jit

__all__ = ["kernels"]

stats = None  # set by _build: a module global, not a closure variable (numba keys a kernel's
# disk cache on its closure variables' pickles, which differ per process: it would recompile)


def kernels(be):
    """``(forward, backward)``, or None (other backends, numba off or missing)."""
    return _jit.kernels("layer_norm", _build, 4.0) if be.name == "cpu" else None


def _build():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False

    global stats
    fm = {"reassoc"}

    @njit(cache=True, fastmath=fm, inline="always")
    def stats(xr, cst):
        inv_d, eps, one = cst[0], cst[1], cst[2]
        s = inv_d - inv_d
        for j in range(xr.shape[0]):
            s += xr[j]
        mean = s * inv_d
        v = inv_d - inv_d
        for j in range(xr.shape[0]):
            d = xr[j] - mean
            v += d * d
        return mean, one / np.sqrt(v * inv_d + eps)

    @njit(parallel=True, cache=True, fastmath=fm)
    def forward(x, w, b, cst, y):
        rows, d = x.shape
        for r in prange(rows):
            xr = x[r]
            yr = y[r]
            mean, rstd = stats(xr, cst)
            for j in range(d):
                yr[j] = (xr[j] - mean) * rstd * w[j] + b[j]
        return 0

    @njit(parallel=True, cache=True, fastmath=fm)
    def backward(x, g, w, cst, gx, pw, pb, chunks):
        rows, d = x.shape
        step = (rows + chunks - 1) // chunks
        inv_d = cst[0]
        for c in prange(chunks):
            pwc = pw[c]
            pbc = pb[c]
            for r in range(c * step, min(rows, (c + 1) * step)):
                xr = x[r]
                gr = g[r]
                mean, rstd = stats(xr, cst)
                s1 = inv_d - inv_d
                s2 = inv_d - inv_d
                for j in range(d):
                    xh = (xr[j] - mean) * rstd
                    gh = gr[j] * w[j]
                    s1 += gh
                    s2 += gh * xh
                    pwc[j] += gr[j] * xh
                    pbc[j] += gr[j]
                m1 = s1 * inv_d
                m2 = s2 * inv_d
                gxr = gx[r]
                for j in range(d):
                    xh = (xr[j] - mean) * rstd
                    gxr[j] = rstd * (gr[j] * w[j] - m1 - xh * m2)
        return 0

    return (forward, backward)
