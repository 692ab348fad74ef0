"""numba row kernels for the attention core's softmax, in place.

- ``softmax_backward_(gs, p, cst)``: ``gs = p * (gs - rowsum(gs * p)) * c`` (``c`` the score
  scale folded in, so the dQ / dK products need no scaling pass). NumPy took an einsum, a
  subtraction, a product and two scalings (five passes over the (batch, L, S) weights, ~1.5 ms
  of the 32 x 8 x 64 x 64 attention backward).
- ``softmax_shifted_(s, cst)`` (float32): ``s = exp(s * c - top)`` and each row divided by its
  sum, ``cst = [c, top]`` with ``top`` the scaled global max (NumPy's one fast reduction; any
  shift gives the same softmax); returns the smallest row sum, so the caller can redo a row set
  whose sums underflowed with per-row maxima. ``fexp`` is ``_fastmath``'s vectorisable float32
  exp. NumPy took a scaling, a subtraction, exp, a GEMV for the sums and a division.

Rows are split over threads (``prange``, count set by ``_jit.limit``); the row sum may be
reassociated (vectorised). Built on first use (``cache=True``), CPU backend only.
"""

from ... import _jit

__all__ = ["kernels"]

fexp = None  # set by _build (_fastmath.py): a module global, so numba's disk cache holds


def kernels(be):
    """``(softmax_backward_, softmax_shifted_)``, or None (other backends, numba off or
    missing)."""
    return _jit.kernels("softmax_rows", _build, 2.0) if be.name == "cpu" else None


def _build():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _fastmath
    except ImportError:
        return False
    global fexp
    fexp = _fastmath.fexp

    @njit(parallel=True, cache=True, fastmath={"reassoc"})
    def softmax_backward_(gs, p, cst):
        rows, n = gs.shape
        c = cst[0]
        for r in prange(rows):
            gr = gs[r]
            pr = p[r]
            d = c - c
            for j in range(n):
                d += gr[j] * pr[j]
            for j in range(n):
                gr[j] = pr[j] * (gr[j] - d) * c
        return 0

    @njit(parallel=True, cache=True, fastmath={"reassoc"})
    def softmax_shifted_(s, cst):
        rows, n = s.shape
        c = cst[0]
        top = cst[1]
        zmin = np.full(rows, np.float32(np.inf))
        for r in prange(rows):
            sr = s[r]
            z = c - c
            for j in range(n):
                e = fexp(sr[j] * c - top)
                sr[j] = e
                z += e
            inv = np.float32(1.0) / z
            for j in range(n):
                sr[j] *= inv
            zmin[r] = z
        return zmin.min()

    return (softmax_backward_, softmax_shifted_)
