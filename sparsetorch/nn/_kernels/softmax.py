"""numba kernel for the softmax backward of the attention core, in place, one pass per row:
``gs = p * (gs - rowsum(gs * p)) * c`` (``c`` the score scale folded in, so the dQ / dK products
need no scaling pass). NumPy took an einsum, a subtraction, a product and two scalings (five
passes over the (batch, L, S) weights, ~1.5 ms of the 32 x 8 x 64 x 64 attention backward).

Rows are split over threads (``prange``, count set by ``_jit.limit``); the row sum may be
reassociated (vectorised). Built on first use (``cache=True``), CPU backend only.
"""

from ... import _jit

__all__ = ["kernels"]


def kernels(be):
    """``(softmax_backward_,)``, or None (other backends, numba off or missing)."""
    return _jit.kernels("softmax_rows", _build, 2.0) if be.name == "cpu" else None


def _build():
    try:
        from numba import njit, prange
    except ImportError:
        return False

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

    return (softmax_backward_,)
