"""GPU kernels of the sparse optimizer steps (CuPy only; the CPU has numba's in ``_kernels``).

``adam_rows``: SparseAdam's update of the touched rows in one pass (read param, both moments and
the gradient row once, write them once) instead of a dozen whole-array temporaries. The formula
and the float operations are those of SparseAdam's generic path, in the parameter's dtype.
"""

_cache = {}

_ADAM = r"""
long long r = rows[i / dim];
long long q = r * dim + i % dim;
T gi = maximize ? -g[i] : g[i];
T mo = M[q];
T vo = V[q];
T mu = (gi - mo) * c1;
T vu = (gi * gi - vo) * c2;
M[q] = mo + mu;
V[q] = vo + vu;
P[q] += nss * ((mu + mo) / (sqrt(vu + vo) + eps));
"""


def adam_rows(P, M, V, rows, vals, lr_scale, b1, b2, eps, maximize):
    """SparseAdam on a real GPU; False where it does not apply (CPU, fake CUDA, other dtypes)."""
    if type(P).__module__.split(".")[0] != "cupy" or P.dtype.char not in "fd":
        return False
    import cupy

    k = _cache.get("adam")
    if k is None:
        k = _cache["adam"] = cupy.ElementwiseKernel(
            "raw int64 rows, raw T g, int64 dim, T c1, T c2, T eps, T nss, bool maximize",
            "raw T P, raw T M, raw T V", _ADAM, "sparsetorch_sparse_adam_rows")
    dim = P.shape[1]
    g = cupy.ascontiguousarray(vals.reshape(rows.shape[0], dim), dtype=P.dtype)
    rows = cupy.ascontiguousarray(rows, dtype=cupy.int64)
    t = P.dtype.type
    k(rows, g, dim, t(1 - b1), t(1 - b2), t(eps), t(-lr_scale), bool(maximize), P, M, V,
      size=rows.shape[0] * dim)
    return True
