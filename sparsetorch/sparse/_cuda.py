"""GPU-only kernels where cupyx's generic path is far from the hardware (docs/gpu.md).

- ``csr_dense``: CSR @ dense through cuSPARSE's SpMM with the dense operands kept row-major.
  ``cupyx``'s ``csr_matrix @ x`` copies ``x`` to column-major and runs a column-major SpMM,
  whose per-entry row gathers are strided by the row count: 12x torch on an H100. Passing
  ``x.T`` (column-major of the transpose: no copy) with ``transb=True`` makes each gather one
  contiguous row.
- ``sddmm``: ``sum_k L[row, k] * R[col, k]`` per stored entry, one warp per entry (coalesced row
  reads, shuffle reduction), instead of gathering both operands' rows into temporaries.

Under the deterministic flags (``torch.use_deterministic_algorithms(True)`` or
``torch.backends.cudnn.deterministic``) ``csr_dense`` runs its own kernel instead of cuSPARSE's
SpMM, whose sums differ from run to run (measured on an H100, CuPy 14.2): one thread per output
element sums its row's stored entries in CSR order. Complex values have no such kernel: with
``use_deterministic_algorithms(True)`` they raise torch's RuntimeError (a warning with
``warn_only=True``).

Each returns None where it does not apply (CPU, fake CUDA, other dtypes), and the callers keep
their generic path. Failures are raised: they must show in the device tests. (Row-major dense
descriptors, torch's form, would also drop the final layout copy; CuPy 14.2 does not export
``CUSPARSE_SPMM_CSR_ALG2``: docs/gpu.md, next steps.)
"""

from .. import _flags

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

    if _flags.deterministic():
        if x.dtype.char in "fd":
            return _csr_dense_ordered(v, col, crow, shape, x)
        _flags.alert_nondeterministic("sparse @ dense (cuSPARSE SpMM) with complex values")
    if not cs.check_availability("spmm"):
        return None
    a = csp.csr_matrix((v, col, crow), shape=shape)
    if not a.has_canonical_format:
        a.sum_duplicates()  # a new sorted copy inside the cupyx object; our payload is untouched
    x = cupy.ascontiguousarray(x)
    out = cs.spmm(a, x.T, transb=True)  # op(B) = (x.T).T = x, read row by row
    return cupy.ascontiguousarray(out)


_ORDERED = r"""
template <typename T>
__device__ __forceinline__ void rows_in_order(const long long* crow, const long long* col,
                                              const T* v, const T* x, T* out, long long m, int k) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m * k) return;
    long long i = e / k;
    int d = (int)(e - i * k);
    T s = 0;
    for (long long q = crow[i]; q < crow[i + 1]; ++q) s += v[q] * x[col[q] * k + d];
    out[e] = s;
}
extern "C" __global__ void csr_dense_f32(const long long* crow, const long long* col,
                                         const float* v, const float* x, float* out, long long m,
                                         int k) {
    rows_in_order<float>(crow, col, v, x, out, m, k);
}
extern "C" __global__ void csr_dense_f64(const long long* crow, const long long* col,
                                         const double* v, const double* x, double* out,
                                         long long m, int k) {
    rows_in_order<double>(crow, col, v, x, out, m, k);
}
"""


def _csr_dense_ordered(v, col, crow, shape, x):
    """``csr @ x`` with each output element summed by one thread in stored order: the same bits
    at every run (the deterministic flags)."""
    import cupy

    m, k = shape[0], x.shape[1]
    out = cupy.empty((m, k), dtype=x.dtype)
    if m * k == 0:
        return out
    crow = cupy.ascontiguousarray(crow, dtype=cupy.int64)
    col = cupy.ascontiguousarray(col, dtype=cupy.int64)
    v, x = cupy.ascontiguousarray(v), cupy.ascontiguousarray(x)
    f = _kernel("csr_dense_f32" if x.dtype.char == "f" else "csr_dense_f64", "ordered", _ORDERED)
    threads = 256
    f(((m * k + threads - 1) // threads,), (threads,),
      (crow, col, v, x, out, cupy.int64(m), cupy.int32(k)))
    return out


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


def _kernel(name, module="sddmm", code=None):
    f = _cache.get(name)
    if f is None:
        import cupy

        mod = _cache.get(module + "_module")
        if mod is None:
            mod = _cache[module + "_module"] = cupy.RawModule(code=code or _SDDMM)
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
