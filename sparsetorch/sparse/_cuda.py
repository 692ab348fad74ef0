"""GPU-only kernels where cupyx's generic path is far from the hardware (docs/gpu.md).

- ``csr_dense``: CSR @ dense through cuSPARSE's SpMM with the dense operands kept row-major.
  ``cupyx``'s ``csr_matrix @ x`` copies ``x`` to column-major and runs a column-major SpMM,
  whose per-entry row gathers are strided by the row count: 12x torch on an H100. Passing
  ``x.T`` (column-major of the transpose: no copy) with ``transb=True`` makes each gather one
  contiguous row.
- ``sddmm``: ``sum_k L[row, k] * R[col, k]`` per stored entry, one warp per entry (coalesced row
  reads, shuffle reduction), instead of gathering both operands' rows into temporaries.

Each returns None where it does not apply (CPU, fake CUDA, other dtypes), and the callers keep
their generic path. A failure of the fast path is re-raised: a wrong or missing GPU kernel must
show in the device tests, not hide behind a slower fallback.
"""

_FLOATS = "fdFD"  # the value types cuSPARSE's SpMM takes
_cache = {}


def _real_gpu(be):
    return be.name != "cpu" and not be.on_host


def csr_dense_applies(be, x):
    """Whether ``csr_dense`` runs for a dense operand like ``x`` (values of ``x``'s dtype)."""
    return _real_gpu(be) and x.ndim == 2 and x.dtype.char in _FLOATS


def csr_dense(be, v, col, crow, shape, x):
    """``csr(v, col, crow, shape) @ x`` (C-contiguous result), or None where not applicable."""
    if not csr_dense_applies(be, x) or v.dtype != x.dtype:
        return None
    import cupy
    import cupyx.cusparse as cs
    import cupyx.scipy.sparse as csp

    if not cs.check_availability("spmm"):
        return None
    a = csp.csr_matrix((v, col, crow), shape=shape)
    if not a.has_canonical_format:
        a.sum_duplicates()  # a new sorted copy inside the cupyx object; our payload is untouched
    x = cupy.ascontiguousarray(x)
    out = cs.spmm(a, x.T, transb=True)  # op(B) = (x.T).T = x, read row by row
    return cupy.ascontiguousarray(out)


_SDDMM = r"""
template <typename T>
__device__ __forceinline__ void sddmm_warp(const long long* rows, const long long* cols,
                                           const T* L, const T* R, T* out, long long nnz, int k) {
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= nnz) return;
    const T* l = L + rows[w] * (long long)k;
    const T* r = R + cols[w] * (long long)k;
    T s = 0;
    for (int j = lane; j < k; j += 32) s += l[j] * r[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) out[w] = s;
}
extern "C" __global__ void sddmm_f32(const long long* rows, const long long* cols, const float* L,
                                     const float* R, float* out, long long nnz, int k) {
    sddmm_warp<float>(rows, cols, L, R, out, nnz, k);
}
extern "C" __global__ void sddmm_f64(const long long* rows, const long long* cols, const double* L,
                                     const double* R, double* out, long long nnz, int k) {
    sddmm_warp<double>(rows, cols, L, R, out, nnz, k);
}
"""


def _kernel(name):
    f = _cache.get(name)
    if f is None:
        import cupy

        mod = _cache.get("sddmm_module")
        if mod is None:
            mod = _cache["sddmm_module"] = cupy.RawModule(code=_SDDMM)
        f = _cache[name] = mod.get_function(name)
    return f


def sddmm(be, rows, cols, left, right):
    """``[nnz]`` of ``sum_k left[rows[e], k] * right[cols[e], k]``, or None where not applicable."""
    if not _real_gpu(be) or left.dtype != right.dtype or left.dtype.char not in "fd":
        return None
    import cupy

    nnz, k = rows.shape[0], left.shape[1]
    out = cupy.empty(nnz, dtype=left.dtype)
    rows = cupy.ascontiguousarray(rows, dtype=cupy.int64)
    cols = cupy.ascontiguousarray(cols, dtype=cupy.int64)
    left, right = cupy.ascontiguousarray(left), cupy.ascontiguousarray(right)
    threads = 256
    blocks = (nnz * 32 + threads - 1) // threads
    f = _kernel("sddmm_f32" if left.dtype.char == "f" else "sddmm_f64")
    f((blocks,), (threads,), (rows, cols, left, right, out, cupy.int64(nnz), cupy.int32(k)))
    return out
