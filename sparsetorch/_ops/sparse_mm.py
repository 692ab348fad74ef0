"""torch.sparse's products: ``sparse.mm`` (with ``reduce=``), ``sparse.addmm`` and
``sparse.sampled_addmm``, over ``linalg.py``'s ``mm`` / ``addmm`` (whose sparse entries are in
``sparse_linalg.py``) and ``sparse_linalg.py``'s SDDMM.
"""

from .. import _autocast as _ac
from .. import _dtype as D
from .._backend import get_backend
from .._dispatch import wrap
from .._layout import sparse_coo, strided
from ..sparse import _spmm as K
from ..sparse._payload import COO
from ._reduce import mT, reshape_to
from ._scatter import gather
from ._util import _dims_str, check_tensor, with_out
from .linalg import addmm as _addmm, mm as _mm
from .pointwise import where
from .sparse_core import coalesce, values, with_values
from .sparse_linalg import (
    SPARSE_MM_PROD, SPARSE_SPARSE_PROD, _blockdiag, _matrix, _prod, _sddmm, mm_sparse,
)

__all__ = []  # public as sparsetorch.sparse.mm / addmm / sampled_addmm, not at the top level

S, O = strided, sparse_coo


# ---- torch.sparse.mm (with reduce=), torch.sparse.addmm ----

_REDUCE = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "max": "amax", "min": "amin"}


@_ac.policy(_ac.LOWER)
def mm(mat1, mat2, reduce="sum"):
    """``torch.sparse.mm``: the product of a sparse matrix with a sparse or dense matrix.

    ``reduce`` ("sum", "mean", "amax", "amin") reduces, for each row of ``mat1``, the products
    ``mat1[i, j] * mat2[j, :]`` over the *stored* entries ``j`` of that row; a row without
    stored entries gives 0 (torch's semantics, here for COO as well as CSR). Gradients flow to
    both operands; the sparse operand's gradient has its pattern.
    """
    check_tensor(mat1, "sparse.mm", "mat1")
    check_tensor(mat2, "sparse.mm", "mat2")
    if reduce == "sum" and (mat1.layout is not S or mat2.layout is not S):
        _check_mm(mat1, mat2)
        if mat1.layout is S:  # dense @ sparse: torch's graph ends in a transpose; ours is mm's
            return mm_sparse(mat1, mat2)
        coo2 = mat1.layout is O and mat2.layout is O
        return mm_sparse(mat1, mat2, SPARSE_SPARSE_PROD if coo2 else SPARSE_MM_PROD)
    red = _REDUCE.get(reduce)
    if red is None:
        if reduce == "prod":
            raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if red == "sum":
        return _mm(mat1, mat2)
    if mat1.layout is S:
        raise NotImplementedError(
            f"sparse.mm(reduce={reduce!r}): mat1 must be a sparse (COO or CSR) matrix, got a "
            "strided one; for dense operands use mm and a reduction")
    if mat2.layout is not S:
        raise RuntimeError(
            f"sparse.mm(reduce={reduce!r}): expected mat2 to have Strided layout, but got "
            f"{mat2.layout.name}; call mat2.to_dense() first")
    _check_mm(mat1, mat2)
    a = _matrix(mat1)
    if a.layout is O and not a._data.coalesced:
        a = coalesce(a)  # a reduction over stored entries sees each position once
    if red == "mean":
        be = get_backend(a.device)
        cnt = K.row_counts(be, a._data)
        w = (1 / be.xp.maximum(cnt, 1)).astype(a.dtype.np)[K.entry_rows(be, a._data)]
        return _prod(with_values(a, values(a) * wrap(w, a.dtype, a.device, S)), mat2)
    return _mm_extreme(a, mat2, red)


def _mm_extreme(a, x, red):
    """amax/amin: the winning product, re-expressed with differentiable gathers (gradients go
    to the stored value and the row of ``x`` that produced each output element)."""
    be = get_backend(a.device)
    xp = be.xp
    p = a._data
    out, arg = K.spmm_reduce(be, p, x._data, red)
    if p.nnz == 0:
        return wrap(out, a.dtype, a.device, S)
    valid = arg >= 0
    pos = xp.where(valid, arg, 0)
    cols = (p.indices[1] if p.__class__ is COO else p.col).astype(xp.int64)
    v = values(a)[wrap(pos, D.int64, a.device, S)]
    xs = gather(x, 0, wrap(cols[pos], D.int64, a.device, S))
    r = v * xs
    if bool(valid.all()):
        return r
    return where(wrap(valid, D.bool, a.device, S), r, wrap(out, a.dtype, a.device, S))


def _check_mm(a, b):
    sa, sb = a._data.shape, b._data.shape  # plain tuples: cheaper than Size on the tiny path
    if len(sa) != 2 or len(sb) != 2:
        raise RuntimeError(f"sparse.mm: expected 2-D matrices, got {len(sa)}-D and {len(sb)}-D")
    if sa[1] != sb[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_dims_str(a.shape)} and "
            f"{_dims_str(b.shape)})")
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.cpp_name} != "
            f"{b.dtype.cpp_name}")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)`` (any sparse operands)."""
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


# ---- torch.sparse.sampled_addmm (SDDMM) ----

def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` at the stored entries of the sparse ``input``.

    The result has ``input``'s layout and pattern; ``mat1 @ mat2`` is never formed densely (each
    stored entry is one dot product). ``input`` may be CSR or COO, 2-D or batched 3-D (then
    ``mat1``/``mat2`` are ``[B, M, K]``/``[B, K, N]``). Differentiable in all three.
    """
    fname = "sampled_addmm"
    check_tensor(input, fname)
    check_tensor(mat1, fname, "mat1")
    check_tensor(mat2, fname, "mat2")
    if input.layout is S:
        raise NotImplementedError(
            "sampled_addmm: input must be a sparse (CSR or COO) tensor; its stored entries are "
            "the positions to sample. For dense input use addmm.")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.layout is not S:
            raise RuntimeError(f"{fname}: Expected {name} to have strided layout, got {t.layout.name}")
        if t.ndim < 2:
            raise RuntimeError(f"{fname}: Expected {name} to be a matrix, got {t.ndim}-D tensor")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(
            f"{fname}: Expected mat1 and mat2 to have the same dtype, but got "
            f"{mat1.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    if input.dtype is not mat1.dtype:
        raise RuntimeError(
            f"{fname}: Expected input and mat1 to have the same dtype, but got "
            f"{input.dtype.scalar_name} and {mat1.dtype.scalar_name}")
    if tuple(input.shape[:-2]) != tuple(mat1.shape[:-2]) or tuple(mat1.shape[:-2]) != tuple(mat2.shape[:-2]):
        raise RuntimeError(
            f"{fname}: Expected self and mat1 to have the same batch size, but got "
            f"{list(input.shape[:-2])} and {list(mat1.shape[:-2])}")
    if mat1.shape[-1] != mat2.shape[-2]:
        raise RuntimeError(
            f"{fname}: mat1 and mat2 shapes cannot be multiplied ({_dims_str(mat1.shape[-2:])} "
            f"and {_dims_str(mat2.shape[-2:])})")
    if input.shape[-2] != mat1.shape[-2]:
        raise RuntimeError(f"{fname}: self.shape[-2] must match mat1.shape[-2]")
    if input.shape[-1] != mat2.shape[-1]:
        raise RuntimeError(f"{fname}: self.shape[-1] must match mat2.shape[-1]")
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"{fname}: expected a 2-D or batched 3-D input, got {input.ndim}-D")
    a = _matrix(input)
    if a.layout is O and not a._data.coalesced:
        a = coalesce(a)  # each position sampled once
    if input.ndim == 2:
        v = _sddmm(mat1, mT(mat2), a)
    else:
        b, m, n = input.shape
        k = mat1.shape[-1]
        v = _sddmm(reshape_to(mat1, (b * m, k)), reshape_to(mT(mat2), (b * n, k)), _blockdiag(a))
        v = reshape_to(v, tuple(a._data.values.shape))
    v = v * alpha if alpha != 1 else v
    av = values(a)
    if beta != 0:
        v = (av * beta if beta != 1 else av) + v
    elif av._rg:  # input ignored (NaN in it does not propagate) but still gets a zero gradient
        v = where(wrap(get_backend(a.device).xp.zeros(v.shape, bool), D.bool, a.device, S), av, v)
    return with_out(with_values(a, v), out, fname)

