"""``a @ b`` for a batch of small matrices where ``b`` is a transposed view (``bmm(T,
T.transpose(1, 2))``, a DLRM-style pairwise interaction or an attention score ``q @ k^T``).

NumPy hands each matrix of such a batch to BLAS as a transposed operand (or, when ``b`` views
``a``'s own buffer, to syrk and a triangle copy): OpenBLAS's small-matrix path costs ~150 ns a
matrix there against ~60 ns untransposed, 19 us for 128 products of 5 x 16 x 5 where torch's bmm
takes 12.5 us. One numba loop of row-by-row dot products (both rows contiguous, vectorized with
reassociation, as a BLAS kernel sums in its own order) takes 12 us; 2048 products 180 instead of
285 us. CPU, float32/float64, serial (the sizes it serves are below the thread policy's
threshold or close to it); ``None`` when numba is off or missing, and the caller uses NumPy.
"""

from .. import _jit

__all__ = ["nt_kernel"]

MAX_WORK = 1 << 12  # multiply-adds per matrix; above, BLAS's per-call cost matters less
MIN_BATCH = 8  # fewer matrices: NumPy's per-call cost is no worse


def _build():
    try:
        from numba import njit
    except ImportError:
        return False

    # reassociation lets LLVM vectorize the sums (no "nnan"/"ninf": inf and nan stay exact)
    @njit(cache=True, fastmath={"reassoc", "contract", "nsz"}, boundscheck=False,
          error_model="numpy")
    def bmm_nt(a, bt, out, zero):
        nb, m, k = a.shape
        n = bt.shape[1]
        for z in range(nb):
            for i in range(m):
                for j in range(n):
                    s = zero
                    for p in range(k):
                        s += a[z, i, p] * bt[z, j, p]
                    out[z, i, j] = s
        return out

    return (bmm_nt,)


def nt_kernel():
    """The numba kernel ``bmm_nt(a, bt, out, zero)``: ``out[z] = a[z] @ bt[z].T`` for
    C-contiguous 3-D ``a`` (B, M, K), ``bt`` (B, N, K) and ``out`` (B, M, N) of one float dtype
    (``zero``: a 0 of that dtype, the sums' start); or None."""
    k = _jit.kernels("small_bmm", _build, 2.0)
    return None if k is None else k[0]
