"""Linear algebra with sparse (COO / CSR) operands: the sparse kernel-table entries of ``linalg.py``.

``mm``, ``matmul``, ``mv`` and ``bmm`` (``linalg.py``) send any sparse operand here through
composite kernel-table entries (addmm's sparse last step is in ``linalg.py``; torch.sparse's
``mm`` / ``addmm`` / ``sampled_addmm`` are in ``sparse_mm.py``). Everything is built on two ops with their own formulas:

- ``_sparse_prod(input, other, ta, tb)`` = ``op(input) @ op(other)`` (``op`` transposes when the
  flag is set) for every pair of 2-D layouts: sparse @ dense (SpMM), dense @ sparse (computed as
  ``(B^T @ A^T)^T`` on B's cached transposed CSR), sparse @ sparse (SpGEMM: COO @ COO -> COO,
  CSR @ CSR -> CSR, mixed -> COO);
- ``_sddmm(left, right, pattern)`` = the values of ``left @ right^T`` at ``pattern``'s stored
  entries (O(nnz), no dense ``[M, N]`` product).

The gradient of a sparse operand has that operand's pattern and is an SDDMM on it:
``with_values(A, _sddmm(G, X, A))`` — memory O(nnz), never a dense ``[M, N]`` gradient (torch's
COO ``sparse.mm`` backward tries to allocate one: #41128). The gradient of a dense operand is a
sparse @ dense product (``dX = A^T @ G``). Both are sparsetorch ops, so double backward works.

Hybrid COO operands are first expanded to scalar values, batched (3-D) operands become 2-D
block-diagonal matrices that share their values; both are differentiable re-patternings
(``with_values``), so their gradients come for free. Kernels: ``sparse/_spmm.py``.
"""

from .. import _dtype as D
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, composite, defop, record_if_grad, result_layout, wrap
from .._layout import sparse_coo, sparse_csr, strided
from ..autograd.grad_mode import GRAD_ENABLED
from ..autograd import profiler as _profiler
from ..sparse import _spmm as K
from ..sparse._convert import coo_to_csr
from ..sparse._payload import COO, CSR
from ._reduce import mT, reshape_to
from .sparse_core import (
    coalesce, to_sparse_coo, to_sparse_csr, values, values_at, with_values,
)

# The public names are torch.sparse's (sparsetorch.sparse.mm / addmm / sampled_addmm); they are
# not star-exported into the top-level namespace, where mm/addmm are the dense-and-sparse ops.
__all__ = []

S, O, R = strided, sparse_coo, sparse_csr
_grad_enabled = GRAD_ENABLED.get


# ---- the product op and the SDDMM op ----

def _cast(x, dt):
    return x.astype(dt) if x.__class__ is COO or x.__class__ is CSR else x.astype(dt.np)


def _bf16_in_f32(kernel):
    """bfloat16 operands (SciPy, the numba loops and BLAS have none) multiply in float32 and
    round once at the end, as torch accumulates bfloat16 products in float."""
    bf16 = D.bfloat16.np

    def k(be, a, b, ta, tb):
        if a.dtype != bf16:
            return kernel(be, a, b, ta, tb)
        return _cast(kernel(be, _cast(a, D.float32), _cast(b, D.float32), ta, tb), D.bfloat16)

    return k


def _k_sparse_dense(be, a, b, ta, tb):
    return K.spmm(be, a, b.T if tb else b, ta)


def _k_dense_sparse(be, a, b, ta, tb):
    # op(a) @ op(b) = (op(b)^T @ op(a)^T)^T: a row-gather kernel on b's (transposed) CSR form
    return K.spmm(be, b, a if ta else a.T, not tb).T


def _k_sparse_sparse(be, a, b, ta, tb):
    r = K.spgemm(be, a, b, ta, tb)
    return coo_to_csr(be, r) if a.__class__ is CSR and b.__class__ is CSR else r


def _k_dense_dense(be, a, b, ta, tb):
    return be.xp.matmul(a.T if ta else a, b.T if tb else b)


def _prod_input_backward(grad, input, other, ta, tb):
    # d op(input) = grad @ op(other)^T
    if input.layout is S:
        return _prod(grad, other, False, not tb) if not ta else _prod(other, grad, tb, True)
    if grad.layout is S and other.layout is S:
        opb = mT(other) if tb else other  # op(other) as [., K] rows
        left, right = (grad, opb) if not ta else (opb, grad)
        return with_values(input, _sddmm(left, right, input))
    p = _prod(grad, other, False, not tb) if not ta else _prod(other, grad, tb, True)
    return with_values(input, values_at(p, input))


def _prod_other_backward(grad, input, other, ta, tb):
    # d op(other) = op(input)^T @ grad
    if other.layout is S:
        return _prod(input, grad, not ta, False) if not tb else _prod(grad, input, True, ta)
    if grad.layout is S and input.layout is S:
        opat = input if ta else mT(input)  # op(input)^T
        left, right = (opat, mT(grad)) if not tb else (mT(grad), opat)
        return with_values(other, _sddmm(left, right, other))
    p = _prod(input, grad, not ta, False) if not tb else _prod(grad, input, True, ta)
    return with_values(other, values_at(p, other))


_PROD_KERNELS = {key: _bf16_in_f32(k) for key, k in {
    (O, S): _k_sparse_dense, (R, S): _k_sparse_dense, (S, O): _k_dense_sparse,
    (S, R): _k_dense_sparse, (O, O): _k_sparse_sparse, (R, R): _k_sparse_sparse,
    (O, R): _k_sparse_sparse, (R, O): _k_sparse_sparse, (S, S): _k_dense_dense}.items()}
_PROD = dict(kernels=_PROD_KERNELS, inputs=("input", "other"), params=("ta", "tb"),
             grads={"input": _prod_input_backward, "other": _prod_other_backward})
_prod_op = defop("_sparse_prod", **_PROD)
_PROD_KERNELS = _prod_op.kernels  # the table the inlined path of _prod reads (the op's own)
# the same product under torch's node names: mm / matmul with a sparse operand (MmBackward0),
# torch.sparse.mm of a sparse mat1 (SparseAddmmBackward0; COO @ COO: SparseSparseMatmulBackward0)
MM_PROD = defop("_sparse_prod", node_name="MmBackward0", **_PROD)
SPARSE_MM_PROD = defop("_sparse_prod", node_name="SparseAddmmBackward0", **_PROD)
SPARSE_SPARSE_PROD = defop("_sparse_prod", node_name="SparseSparseMatmulBackward0", **_PROD)


def _prod(a, b, ta=False, tb=False, op=_prod_op):
    """``op(a) @ op(b)`` for 2-D operands of any layouts (sparse ones scalar-valued); ``op``: the
    declaration recorded (one of the named copies above)."""
    if a.dtype is not b.dtype or a.device is not b.device or _profiler.ACTIVE is not None:
        return call(op, (a, b), (ta, tb))
    # the dispatcher's work, inlined for one dtype and device (tiny products: PERF-NOTES spike 1)
    dev = a.device
    data = _PROD_KERNELS[(a.layout, b.layout)](CPU if dev is CPU_DEVICE else get_backend(dev),
                                                a._data, b._data, ta, tb)
    t = wrap(data, a.dtype, dev, result_layout(data))
    if a._rg or b._rg:
        record_if_grad(op, t, (a, b), (ta, tb))
    return t


def _sddmm_kernel(be, left, right, p):
    if left.dtype == D.bfloat16.np:  # float32 products and sums, one rounding (the numba loop
        f32 = be.xp.float32          # and einsum have no bfloat16)
        return K.sddmm(be, left.astype(f32), right.astype(f32), p).astype(left.dtype)
    return K.sddmm(be, left, right, p)


def _sddmm_left_backward(grad, right, pattern):
    return _prod(with_values(pattern, grad), right)  # sum over a row's entries of g * right[col]


def _sddmm_right_backward(grad, left, pattern):
    return _prod(with_values(pattern, grad), left, True)


_sddmm_op = defop(
    "_sddmm", {(S, S, O): _sddmm_kernel, (S, S, R): _sddmm_kernel},
    inputs=("left", "right", "pattern"),
    grads={"left": _sddmm_left_backward, "right": _sddmm_right_backward},
)


def _sddmm(left, right, pattern):
    """Values of ``left @ right^T`` at the stored entries of the 2-D ``pattern`` (its values are
    ignored), in its stored order: ``[nnz]``."""
    return call(_sddmm_op, (left, right, pattern), (), left.dtype)


# ---- re-patterning: hybrid -> scalar values, batched -> block-diagonal ----

def _pattern(payload, like):
    return wrap(payload, like.dtype, like.device, like.layout)


def _canon(t):
    """``t`` with its duplicates summed (COO): only then are its stored values a function of the
    tensor, whose gradient has the tensor's (coalesced) pattern."""
    return coalesce(t) if t.layout is O and not t._data.coalesced else t


def _scalar(a):
    """A COO tensor whose dense dims are expanded into sparse ones (hybrid -> scalar values)."""
    if a.layout is not O or not a._data.dense_dim:
        return a
    a = _canon(a)
    p = a._data
    xp = get_backend(a.device).xp
    dshape = p.shape[p.sparse_dim:]
    nd = 1
    for s in dshape:
        nd *= s
    nnz = p.nnz
    inner = xp.stack(xp.unravel_index(xp.arange(nd, dtype=xp.int64), dshape)).reshape(len(dshape), nd)
    idx = xp.concatenate([xp.repeat(p.indices, nd, axis=1), xp.tile(inner, (1, nnz))])
    q = COO(idx.astype(xp.int64), p.values.reshape(-1), p.shape, p.coalesced)
    return with_values(_pattern(q, a), reshape_to(values(a), (nnz * nd,)))


def _blockdiag(a):
    """A 3-D ``[B, M, N]`` sparse tensor as the 2-D block-diagonal ``[B*M, B*N]`` matrix that
    holds its values in the same order (CSR stays CSR)."""
    a = _canon(_scalar(a))
    p = a._data
    xp = get_backend(a.device).xp
    b, m, n = p.shape
    if p.__class__ is COO:
        i = p.indices
        q = COO(xp.stack([i[0] * m + i[1], i[0] * n + i[2]]), p.values.reshape(-1), (b * m, b * n),
                p.coalesced)
    else:
        per = p.col.shape[-1]
        shift = (xp.arange(b, dtype=p.crow.dtype) * per)[:, None]
        crow = xp.concatenate([(p.crow[:, :-1] + shift).reshape(-1),
                               xp.asarray([b * per], dtype=p.crow.dtype)])
        col = (p.col + (xp.arange(b, dtype=p.col.dtype) * n)[:, None]).reshape(-1)
        q = CSR(crow, col, p.values.reshape(-1), (b * m, b * n))
    return with_values(_pattern(q, a), reshape_to(values(a), (p.values.size,)))


def _unblock(c, b, m, n, layout):
    """The ``[B*M, B*N]`` block-diagonal product back as a 3-D ``[B, M, N]`` tensor."""
    c = to_sparse_coo(c)
    p = c._data
    xp = get_backend(c.device).xp
    r, k = p.indices[0], p.indices[1]
    q = COO(xp.stack([r // m if m else r, r % m if m else r, k % n if n else k]), p.values,
            (b, m, n), p.coalesced)
    out = with_values(_pattern(q, c), values(c))
    return to_sparse_csr(out) if layout is R else out


def _matrix(t):
    """A 2-D operand with scalar values (hybrid COO expanded); an uncoalesced COO that needs a
    gradient is coalesced (its gradient is the tensor's: coalesced pattern, masked semantics)."""
    if t.layout is not O:
        return t
    p = t._data
    if p.values.ndim != 1:
        return _scalar(t)
    if not p.coalesced and t._rg and _grad_enabled():
        return coalesce(t)
    return t


# ---- composite entries of linalg's kernel tables (mm, mv, matmul, bmm, addmm) ----

def mm_sparse(input, mat2, op=MM_PROD):
    """``mm`` with a sparse operand: the result is dense unless both operands are sparse."""
    return _prod(_matrix(input), _matrix(mat2), False, False, op)


def mv_sparse(input, vec):
    if vec.layout is not S:
        raise NotImplementedError(
            "mv: a sparse vector is not supported; call vec.to_dense() first")
    r = mm_sparse(input, reshape_to(vec, (vec.shape[0], 1)))
    return reshape_to(r, (r.shape[0],))


def matmul_sparse(input, other):
    na, nb = input.ndim, other.ndim
    if na == 2 and nb == 2:
        return mm_sparse(input, other)
    if na == 1 and nb == 2 and input.layout is S:
        r = mm_sparse(reshape_to(input, (1, input.shape[0])), other)
        return reshape_to(r, (r.shape[1],)) if r.layout is S else r
    if na == 3 and nb == 3 and input.shape[0] == other.shape[0]:
        return bmm_sparse(input, other)
    raise NotImplementedError(
        f"matmul: sparse operands of {na}-D and {nb}-D (shapes {list(input.shape)} and "
        f"{list(other.shape)}) are not supported; use 2-D (mm) or 3-D with equal batch sizes "
        "(bmm), or call .to_dense() first"
    )


# bmm with a 3-D sparse operand: one block-diagonal 2-D product, one entry per layout pair

def _bmm_sparse_sparse(input, mat2):
    b, m, _ = input.shape
    n = mat2.shape[2]
    lay = R if input.layout is R and mat2.layout is R else O  # CSR @ CSR stays CSR
    return _unblock(_prod(_blockdiag(input), _blockdiag(mat2)), b, m, n, lay)


def _bmm_sparse_dense(input, mat2):
    b, m, _ = input.shape
    n = mat2.shape[2]
    x = reshape_to(mat2, (b * mat2.shape[1], n))
    return reshape_to(_prod(_blockdiag(input), x), (b, m, n))


def _bmm_dense_sparse(input, mat2):
    # batch by batch: out_b^T = S_b^T @ D_b^T
    b, m, k = input.shape
    n = mat2.shape[2]
    dt = reshape_to(mT(input), (b * k, m))
    r = _prod(_blockdiag(mat2), dt, True)  # [B*N, M]
    return mT(reshape_to(r, (b, n, m)))


BMM_KERNELS = {}  # bmm's kernel-table entries for every layout pair with a sparse operand
for _a in (O, R):
    BMM_KERNELS[(_a, S)] = composite(_bmm_sparse_dense)
    BMM_KERNELS[(S, _a)] = composite(_bmm_dense_sparse)
    for _b in (O, R):
        BMM_KERNELS[(_a, _b)] = composite(_bmm_sparse_sparse)
del _a, _b


def bmm_sparse(input, mat2):
    """Batched product with a 3-D sparse operand (matmul's 3-D case): ``BMM_KERNELS``' entry."""
    return BMM_KERNELS[(input.layout, mat2.layout)].fn(input, mat2)
