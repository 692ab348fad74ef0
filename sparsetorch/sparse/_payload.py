"""Sparse payloads (COO, CSR) and their invariants.

A payload is the ``_data`` of a sparse Tensor. It owns its invariants: ``validate_coo`` /
``validate_csr`` check them in O(nnz) with vectorised array code, and raise errors that name
the invariant that failed. Payloads hold backend arrays (``be.xp``), never Tensors.

COO: ``indices`` int64 ``[sparse_dim, nnz]``, ``values`` ``[nnz, *dense_shape]`` (hybrid when
dense_shape is not empty), ``coalesced`` flag (indices sorted row-major and unique).
CSR: ``crow`` ``[M + 1]`` (or ``[B, M + 1]`` batched), ``col`` ``[nnz]`` (``[B, nnz]``), ``values``
``[nnz]`` (``[B, nnz]``); column indices sorted and unique within each row, as in torch.
"""

__all__ = ["COO", "CSR", "SEEN", "SparseInvariantError", "validate_coo", "validate_csr"]

# set by the first payload: this process holds sparse tensors, so its training loop will call
# the numba sparse kernels (optim/_warm.py loads them when the optimizer is built)
SEEN = [False]


class COO:
    # _cache: pattern-derived arrays (CSR form, transposed CSR, ...) built once by the product
    # kernels (sparse/_spmm.py); shared by with_values, which keeps the pattern
    __slots__ = ("indices", "values", "shape", "coalesced", "_cache")

    def __init__(self, indices, values, shape, coalesced):
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = bool(coalesced)
        self._cache = None
        SEEN[0] = True

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    @property
    def nnz(self):
        return self.indices.shape[1]

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def astype(self, dtype):
        return COO(self.indices, self.values.astype(dtype.np), self.shape, self.coalesced)

    def copy(self):
        return COO(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def with_values(self, values):
        """Same pattern, new values (the values-only kernels' result)."""
        r = COO(self.indices, values, self.shape, self.coalesced)
        r._cache = self._cache if self._cache is not None else _share(self)
        return r

    def __repr__(self):
        return f"COO(shape={self.shape}, nnz={self.nnz}, coalesced={self.coalesced})"


class CSR:
    __slots__ = ("crow", "col", "values", "shape", "_cache")  # _cache: as COO's

    def __init__(self, crow, col, values, shape):
        self.crow = crow
        self.col = col
        self.values = values
        self.shape = tuple(shape)
        self._cache = None
        SEEN[0] = True

    @property
    def nnz(self):
        return self.col.shape[-1]

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def batch_dim(self):
        return self.crow.ndim - 1

    @property
    def coalesced(self):  # CSR is always canonical (sorted, unique columns per row)
        return True

    def astype(self, dtype):
        return CSR(self.crow, self.col, self.values.astype(dtype.np), self.shape)

    def copy(self):
        return CSR(self.crow.copy(), self.col.copy(), self.values.copy(), self.shape)

    def with_values(self, values):
        r = CSR(self.crow, self.col, values, self.shape)
        r._cache = self._cache if self._cache is not None else _share(self)
        return r

    def __repr__(self):
        return f"CSR(shape={self.shape}, nnz={self.nnz})"


def _share(p):
    """The pattern cache of ``p``, created so that payloads with the same pattern share it."""
    p._cache = {}
    return p._cache


# ---- invariants ----

class SparseInvariantError(ValueError, RuntimeError):
    """A sparse tensor's indices/values/size are inconsistent. A ValueError (what it is) and a
    RuntimeError (what torch raises for it), so either ``except`` clause catches it."""


def _is_int(a):
    return a.dtype.kind in "iu"


def validate_coo(xp, indices, values, shape, fname="sparse_coo_tensor"):
    """Check a COO payload's invariants; raise ValueError/RuntimeError naming what is wrong."""
    if not _is_int(indices):
        raise TypeError(
            f"{fname}(): indices must be an integer tensor (int64), but got dtype {indices.dtype}"
        )
    if indices.ndim != 2:
        raise SparseInvariantError(
            f"{fname}(): indices must be a 2-D tensor of shape [sparse_dim, nnz], but got "
            f"{indices.ndim}-D shape {list(indices.shape)}"
        )
    sparse_dim, nnz = indices.shape
    if values.ndim < 1 or values.shape[0] != nnz:
        raise SparseInvariantError(
            f"{fname}(): values must have shape [nnz, *dense_dims] with nnz = {nnz} (the number of "
            f"columns of indices), but got values of shape {list(values.shape)}"
        )
    if len(shape) != sparse_dim + values.ndim - 1:
        raise SparseInvariantError(
            f"{fname}(): number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
            f"({values.ndim - 1}), but got size {list(shape)}"
        )
    if tuple(values.shape[1:]) != tuple(shape[sparse_dim:]):
        raise SparseInvariantError(
            f"{fname}(): values has dense shape {list(values.shape[1:])} but size says "
            f"{list(shape[sparse_dim:])} for the dense dimensions"
        )
    if any(s < 0 for s in shape):
        raise SparseInvariantError(f"{fname}(): size must be non-negative, got {list(shape)}")
    if nnz:
        lo = indices.min(axis=1)
        hi = indices.max(axis=1)
        for d in range(sparse_dim):
            if int(lo[d]) < 0:
                raise SparseInvariantError(
                    f"{fname}(): found negative index {int(lo[d])} for dim {d}; indices must be >= 0"
                )
            if int(hi[d]) >= shape[d]:
                raise SparseInvariantError(
                    f"{fname}(): size is inconsistent with indices: for dim {d}, size is "
                    f"{shape[d]} but found index {int(hi[d])}"
                )


def validate_csr(xp, crow, col, values, shape, fname="sparse_csr_tensor"):
    """Check a CSR payload's invariants (torch's compressed-tensor invariants)."""
    for arr, what in ((crow, "crow_indices"), (col, "col_indices")):
        if not _is_int(arr):
            raise TypeError(f"{fname}(): {what} must be an integer tensor, but got dtype {arr.dtype}")
    if crow.dtype != col.dtype:
        raise TypeError(
            f"{fname}(): crow_indices and col_indices must have the same dtype, but got "
            f"{crow.dtype} and {col.dtype}"
        )
    if crow.ndim < 1 or crow.ndim != col.ndim:
        raise SparseInvariantError(
            f"{fname}(): crow_indices and col_indices must have the same number of dimensions "
            f"(>= 1), but got {crow.ndim} and {col.ndim}"
        )
    batch = crow.ndim - 1
    if len(shape) != batch + 2:
        raise SparseInvariantError(
            f"{fname}(): size must have {batch + 2} dimensions (batch dims + 2) for crow_indices "
            f"of {crow.ndim} dimensions, but got size {list(shape)}"
        )
    if values.shape != col.shape:
        raise SparseInvariantError(
            f"{fname}(): values must have the same shape as col_indices {list(col.shape)}, but got "
            f"{list(values.shape)} (hybrid CSR is not supported; use COO for dense dimensions)"
        )
    if tuple(crow.shape[:-1]) != tuple(shape[:batch]) or tuple(col.shape[:-1]) != tuple(shape[:batch]):
        raise SparseInvariantError(f"{fname}(): batch dimensions of the indices do not match size {list(shape)}")
    m, n = shape[-2], shape[-1]
    if m < 0 or n < 0:
        raise SparseInvariantError(f"{fname}(): size must be non-negative, got {list(shape)}")
    if crow.shape[-1] != m + 1:
        raise SparseInvariantError(
            f"{fname}(): crow_indices.shape[-1] must be equal to size[-2] + 1 (= {m + 1}), but got "
            f"{crow.shape[-1]}"
        )
    nnz = col.shape[-1]
    c = crow.reshape(-1, m + 1)
    if c.size and bool((c[:, 0] != 0).any()):
        raise SparseInvariantError(f"{fname}(): `crow_indices[..., 0] == 0` is not satisfied.")
    if c.size and bool((c[:, -1] != nnz).any()):
        raise SparseInvariantError(
            f"{fname}(): `crow_indices[..., -1] == nnz` is not satisfied (nnz = {nnz}, "
            f"crow_indices[..., -1] = {int(c[0, -1])})."
        )
    if m and bool((xp.diff(c, axis=1) < 0).any()):
        raise SparseInvariantError(
            f"{fname}(): `0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not "
            "satisfied: crow_indices must be non-decreasing."
        )
    if nnz:
        cc = col.reshape(-1, nnz)
        if int(cc.min()) < 0 or int(cc.max()) >= n:
            bad = int(cc.min()) if int(cc.min()) < 0 else int(cc.max())
            raise SparseInvariantError(
                f"{fname}(): `0 <= col_indices < ncols` is not satisfied: found column index {bad} "
                f"for {n} columns."
            )
        # sorted and unique within each row: consecutive entries of one row strictly increase
        for b in range(cc.shape[0]):
            rows = xp.repeat(xp.arange(m), xp.diff(c[b]))
            same_row = rows[1:] == rows[:-1]
            if bool((same_row & (cc[b, 1:] <= cc[b, :-1])).any()):
                raise SparseInvariantError(
                    f"{fname}(): `col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] "
                    "for all i = 1, ..., nrows are sorted and distinct along the last dimension "
                    "values` is not satisfied."
                )
