"""torch.sparse's functions that are not ops of their own: invariant checking, SciPy interop."""

from .. import _dtype as D
from .._backend import CPU
from .._device import as_device
from .._dispatch import wrap
from .._layout import sparse_coo, sparse_csr
from ..sparse._payload import COO, CSR, validate_coo, validate_csr
from . import sparse_core
from .sparse_core import scipy_array

__all__ = ["check_sparse_tensor_invariants", "from_scipy", "to_scipy"]


class check_sparse_tensor_invariants:
    """Turn construction-time invariant checks on (default) or off.

    sparsetorch checks invariants by default (torch does not); use ``enable=False`` — or pass
    ``check_invariants=False`` to a constructor — to skip the O(nnz) checks for trusted input.
    Works as a context manager, a decorator, or through ``enable()/disable()/is_enabled()``.
    """

    def __init__(self, enable=True):
        self.state = bool(enable)
        self.saved = None

    @staticmethod
    def is_enabled():
        return sparse_core._INVARIANTS[0]

    @staticmethod
    def enable():
        sparse_core._INVARIANTS[0] = True

    @staticmethod
    def disable():
        sparse_core._INVARIANTS[0] = False

    def __enter__(self):
        self.saved = sparse_core._INVARIANTS[0]
        sparse_core._INVARIANTS[0] = self.state
        return self

    def __exit__(self, *exc):
        sparse_core._INVARIANTS[0] = self.saved
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with check_sparse_tensor_invariants(self.state):
                return fn(*a, **k)
        return wrapper


def from_scipy(m, *, requires_grad=False, check_invariants=True):
    """A COO or CSR tensor sharing the index and value buffers of a SciPy sparse array/matrix.

    ``coo`` -> sparse_coo (indices are stacked into one ``[2, nnz]`` int64 array, so they are
    copied; values are shared), ``csr`` -> sparse_csr (crow/col/values shared when the index
    dtype is int32 or int64 and the CSR is canonical). Other formats are converted to CSR first.
    """
    import scipy.sparse as sp

    if not sp.issparse(m):
        raise TypeError(f"from_scipy(): expected a scipy.sparse array or matrix, got {type(m).__name__}")
    dt = D.from_numpy_dtype(m.dtype)
    xp = CPU.xp
    if m.format == "coo":
        idx = xp.stack([xp.asarray(m.row, dtype=xp.int64), xp.asarray(m.col, dtype=xp.int64)])
        if check_invariants:
            validate_coo(xp, idx, m.data, m.shape, "from_scipy")
        canonical = bool(getattr(m, "has_canonical_format", False))
        t = wrap(COO(idx, m.data, m.shape, canonical), dt, as_device("cpu"), sparse_coo)
    else:
        if m.format != "csr":
            m = m.tocsr()
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        if check_invariants:
            validate_csr(xp, m.indptr, m.indices, m.data, m.shape, "from_scipy")
        t = wrap(CSR(m.indptr, m.indices, m.data, m.shape), dt, as_device("cpu"), sparse_csr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_scipy(t, layout=None):
    """A SciPy sparse array sharing ``t``'s buffers (2-D, scalar values, CPU).

    COO -> ``scipy.sparse.coo_array`` (row/col are views of the indices), CSR -> ``csr_array``.
    """
    return scipy_array(t)
