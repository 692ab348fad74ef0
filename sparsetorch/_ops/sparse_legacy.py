"""torch's older sparse products: ``spmm``, ``smm``, ``hspmm``, ``sspaddmm`` (torch 2.13 semantics).

- ``spmm(input, mat2)`` is ``mm`` (any layouts).
- ``hspmm(mat1, mat2)``: COO ``[n, m]`` @ strided ``[m, p]`` -> a hybrid COO ``[n, p]`` (one
  sparse dim) whose stored rows are the rows of ``mat1`` that store an entry; only those rows
  are computed (memory O(rows stored * p), never a dense ``[n, p]``).
- ``smm(input, mat2)``: the same product as a 2-sparse-dim COO (every column of a stored row).
- ``sspaddmm(input, mat1, mat2, *, beta, alpha)``: ``beta * input + alpha * smm(mat1, mat2)``
  as an uncoalesced COO (``input``'s entries, then the product's), as torch.

They are compositions of differentiable sparsetorch ops (``coalesce``, ``values``, ``mm``,
``sparse_coo_tensor`` over values that require grad), so they have gradients, which torch 2.13
does not implement for ``smm``/``hspmm``/``sspaddmm`` (its backward raises); the gradient of a
sparse operand has its pattern.
"""

from .. import _dtype as D
from .._layout import sparse_coo, strided
from .._tensor import Tensor
from .._variants import method
from ._util import with_out
from .creation import arange
from .legacy import _scalar
from .linalg import mm
from .set_ops import unique
from ._join import cat, stack
from .sparse_core import coalesce, sparse_coo_tensor, values

__all__ = ["spmm", "smm", "hspmm", "sspaddmm"]

_LAYOUT = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr"}


def spmm(input, mat2):
    """``mm(input, mat2)`` (torch's older name; sparse or dense operands)."""
    return mm(input, mat2)


def _check(fname, mat1, mat2, first="mat1"):
    for name, t in ((first, mat1), ("mat2", mat2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if mat1.layout is not sparse_coo:
        if fname == "hspmm":
            raise NotImplementedError(
                f"hspmm: no kernel for a {mat1.layout.name} first operand (a sparse COO matrix "
                "is expected); convert it with .to_sparse_coo()"
            )
        raise RuntimeError(
            f"{fname}: expected '{first}' to have sparse layout, got '{first}' with layout "
            f"{_LAYOUT[mat1.layout.name]}"
        )
    if mat2.layout is not strided:
        raise RuntimeError(
            f"{fname}: expected 'mat2' to have strided layout, got 'mat2' with layout "
            f"{_LAYOUT[mat2.layout.name]}"
        )
    if mat1.ndim != 2 or mat1.dense_dim():
        raise RuntimeError(
            f"{fname}: Argument #2: matrices expected, got {mat1.sparse_dim()}D tensor"
        )
    if mat2.ndim != 2:
        raise RuntimeError(f"{fname}: Argument #3: matrices expected, got {mat2.ndim}D tensor")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar(mat1.dtype)} but found {_scalar(mat2.dtype)}"
        )
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"{fname}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}"
        )
    if mat1.device is not mat2.device:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{mat1.device} and {mat2.device}!"
        )


def _row_product(mat1, mat2):
    """(rows, products): the sorted rows of ``mat1`` that store an entry, and
    ``mat1[rows] @ mat2`` (dense ``[len(rows), p]``, differentiable)."""
    a = coalesce(mat1)
    idx = a._indices()
    rows, local = unique(idx[0], sorted=True, return_inverse=True)
    compact = sparse_coo_tensor(stack([local, idx[1]]), values(a), (rows.shape[0], mat1.shape[1]),
                                check_invariants=False, is_coalesced=True)
    return rows, mm(compact, mat2)


def hspmm(mat1, mat2, *, out=None):
    """COO ``mat1`` @ strided ``mat2`` as a hybrid COO (1 sparse + 1 dense dim)."""
    _check("hspmm", mat1, mat2)
    rows, prod = _row_product(mat1, mat2)
    r = sparse_coo_tensor(rows.unsqueeze(0), prod, (mat1.shape[0], mat2.shape[1]),
                          check_invariants=False)
    return with_out(r, out, "hspmm")


def _expanded(mat1, mat2):
    """``mat1 @ mat2`` as 2-sparse-dim COO (indices, values): every column of a stored row."""
    rows, prod = _row_product(mat1, mat2)
    p = mat2.shape[1]
    cols = arange(p, dtype=D.int64, device=mat2.device)
    idx = stack([rows.repeat_interleave(p), cols.repeat(rows.shape[0])])
    return idx, prod.reshape(-1)


@method
def smm(input, mat2):
    """COO ``input`` @ strided ``mat2`` as a COO matrix (torch's ``sspaddmm`` with an empty
    ``input``)."""
    if isinstance(input, Tensor) and input.layout is not sparse_coo:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _check("sspaddmm", input, mat2, first="mat1")
    idx, vals = _expanded(input, mat2)
    return sparse_coo_tensor(idx, vals, (input.shape[0], mat2.shape[1]), check_invariants=False)


@method
def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` with ``input``, ``mat1`` COO and ``mat2``
    strided; the result is an uncoalesced COO (``input``'s entries, then the product's)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"sspaddmm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.layout is not sparse_coo:
        raise RuntimeError(
            f"sspaddmm: expected 'input' to have sparse layout, got 'input' with layout "
            f"{_LAYOUT[input.layout.name]}"
        )
    _check("sspaddmm", mat1, mat2)
    n, p = mat1.shape[0], mat2.shape[1]
    for k in range(2):  # torch's order: size 0, then dim 1 exists, then size 1
        if k == input.ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{max(k, 1)}, "
                f"{max(k, 1) - 1}], but got {k})"
            )
        if input.shape[k] != (n, p)[k]:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {k} size {(n, p)[k]}, got "
                               f"{input.shape[k]}")
    if input.ndim != 2 or input.dense_dim():
        raise RuntimeError(f"sspaddmm: Argument #1: matrices expected, got {input.ndim}D tensor")
    if input.dtype is not mat1.dtype:
        raise RuntimeError(
            f"dtype of values ({_scalar(mat1.dtype)}) must match dtype of sparse tensor "
            f"({_scalar(input.dtype)})"
        )
    a = coalesce(input)
    idx, vals = _expanded(mat1, mat2)
    r = sparse_coo_tensor(cat([a._indices(), idx], 1), cat([values(a) * beta, vals * alpha]),
                          (n, p), check_invariants=False)
    return with_out(r, out, "sspaddmm")
