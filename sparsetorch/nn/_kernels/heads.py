"""numba kernels for the per-head layout of a packed q/k/v projection (``split_heads``).

- ``split(src, dst, bf)``: ``dst[p, n, h, t] = src[n, t, p, h]`` (``bf``) or ``src[t, n, p, h]``,
  each a run of ``head_dim`` contiguous values: ``src`` ``(A, B, 3, H, hd)``, ``dst``
  ``(3, N, H, T, hd)``.
- ``merge(gq, gk, gv, have, out, bf)``: the inverse, the three ``(N * H, T, hd)`` gradients
  written into one ``(A, B, 3, H, hd)`` array (``have[p] == 0``: zeros for that part).

NumPy's copy of the 5-D transposed view moved 32-value runs through its generic strided loop
(2 ms for 32 x 64 tokens, d_model 256); these are plain loops over rows (about 0.5 ms). Rows are
split over threads (``prange``, count set by ``_jit.limit``). Built on first use
(``cache=True``), CPU backend only.
"""

from ... import _jit

__all__ = ["kernels"]


def kernels(be):
    """``(split, merge)``, or None (other backends, numba off or missing)."""
    return _jit.kernels("attention_heads", _build, 2.0) if be.name == "cpu" else None


def _build():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False

    @njit(parallel=True, cache=True)
    def split(src, dst, bf):
        a, b, _, h, hd = src.shape
        for i in prange(a):
            for j in range(b):
                n = np.int64(i) if bf else np.int64(j)  # prange's index is unsigned: one type
                t = np.int64(j) if bf else np.int64(i)
                for p in range(3):
                    for e in range(h):
                        s = src[i, j, p, e]
                        d = dst[p, n, e, t]
                        for c in range(hd):
                            d[c] = s[c]
        return 0

    @njit(parallel=True, cache=True)
    def merge(gq, gk, gv, have, out, bf):
        a, b, _, h, hd = out.shape
        for i in prange(a):
            for j in range(b):
                n = np.int64(i) if bf else np.int64(j)  # prange's index is unsigned: one type
                t = np.int64(j) if bf else np.int64(i)
                for p in range(3):
                    g = gq if p == 0 else (gk if p == 1 else gv)
                    for e in range(h):
                        d = out[i, j, p, e]
                        if have[p]:
                            s = g[n * h + e, t]
                            for c in range(hd):
                                d[c] = s[c]
                        else:
                            for c in range(hd):
                                d[c] = 0
        return 0

    return (split, merge)
