"""Linear algebra with sparse (COO / CSR) operands, and ``torch.sparse.mm / addmm / sampled_addmm``.

``mm``, ``matmul``, ``mv``, ``bmm`` and ``addmm`` (``linalg.py``) send any sparse operand here
through composite kernel-table entries. Everything is built on two ops with their own formulas:

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

from .. import _autocast as _ac
from .. import _dtype as D
from .. import _ops
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, defop, record, result_layout, wrap
from .._layout import sparse_coo, sparse_csr, strided
from ..autograd.grad_mode import GRAD_ENABLED
from ..autograd import profiler as _profiler
from ..sparse import _spmm as K
from ..sparse._convert import coo_to_csr
from ..sparse._payload import COO, CSR
from ._reduce import reshape_to
from ._util import check_tensor, with_out
from .linalg import CPP_NAME, _axpby_op, _dims_str, mT
from .sparse_core import (
    coalesce, to_dense, to_sparse_coo, to_sparse_csr, values, values_at, with_values,
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


_prod_op = defop(
    "_sparse_prod",
    {(O, S): _k_sparse_dense, (R, S): _k_sparse_dense, (S, O): _k_dense_sparse,
     (S, R): _k_dense_sparse, (O, O): _k_sparse_sparse, (R, R): _k_sparse_sparse,
     (O, R): _k_sparse_sparse, (R, O): _k_sparse_sparse, (S, S): _k_dense_dense},
    inputs=("input", "other"), params=("ta", "tb"),
    grads={"input": _prod_input_backward, "other": _prod_other_backward},
)


_PROD_KERNELS = _prod_op.kernels
for _key in list(_PROD_KERNELS):
    _PROD_KERNELS[_key] = _bf16_in_f32(_PROD_KERNELS[_key])


def _prod(a, b, ta=False, tb=False):
    """``op(a) @ op(b)`` for 2-D operands of any layouts (sparse ones scalar-valued)."""
    if a.dtype is not b.dtype or a.device is not b.device or _profiler.ACTIVE is not None:
        return call(_prod_op, (a, b), (ta, tb))
    # the dispatcher's work, inlined for one dtype and device (tiny products: PERF-NOTES spike 1)
    dev = a.device
    data = _PROD_KERNELS[(a.layout, b.layout)](CPU if dev is CPU_DEVICE else get_backend(dev),
                                                a._data, b._data, ta, tb)
    t = wrap(data, a.dtype, dev, result_layout(data))
    if (a._rg or b._rg) and _grad_enabled():
        record(_prod_op, t, (a, b), (ta, tb))
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

def mm_sparse(input, mat2):
    """``mm`` with a sparse operand: the result is dense unless both operands are sparse."""
    return _prod(_matrix(input), _matrix(mat2))


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


def bmm_sparse(input, mat2):
    """Batched product with a 3-D sparse operand: one block-diagonal 2-D product."""
    b, m, _ = input.shape
    n = mat2.shape[2]
    if input.layout is not S and mat2.layout is not S:
        lay = R if input.layout is R and mat2.layout is R else O
        return _unblock(_prod(_blockdiag(input), _blockdiag(mat2)), b, m, n, lay)
    if input.layout is not S:
        x = reshape_to(mat2, (b * mat2.shape[1], n))
        return reshape_to(_prod(_blockdiag(input), x), (b, m, n))
    # dense @ sparse, batch by batch: out_b^T = S_b^T @ D_b^T
    k = input.shape[2]
    dt = reshape_to(mT(input), (b * k, m))
    r = _prod(_blockdiag(mat2), dt, True)  # [B*N, M]
    return mT(reshape_to(r, (b, n, m)))


def add_product_sparse(input, product, beta, alpha):
    """``beta * input + alpha * product`` where one of them is sparse (addmm's last step)."""
    if product.layout is S or input.layout is S:  # the result is dense: linalg's dense op
        return call(_axpby_op, (to_dense(input), to_dense(product)), (beta, alpha))
    if tuple(input.shape) != tuple(product.shape):
        raise RuntimeError(
            f"addmm: a sparse input must have the product's shape {list(product.shape)}, got "
            f"{list(input.shape)}"
        )
    both_csr = input.layout is R and product.layout is R
    pc = _canon(_scalar(to_sparse_coo(product)))
    pv = values(pc)
    if beta == 0:
        r = with_values(pc, pv * alpha if alpha != 1 else pv)
    else:
        ic = _canon(_scalar(to_sparse_coo(input)))
        xp = get_backend(product.device).xp
        q = COO(xp.concatenate([ic._data.indices, pc._data.indices], 1),
                xp.concatenate([ic._data.values, pc._data.values]), pc.shape, False)
        iv = values(ic)
        v = _ops.cat([iv * beta if beta != 1 else iv, pv * alpha if alpha != 1 else pv])
        r = coalesce(with_values(_pattern(q, pc), v))
    return to_sparse_csr(r) if both_csr else r


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
        return mm_sparse(mat1, mat2)
    red = _REDUCE.get(reduce)
    if red is None:
        if reduce == "prod":
            raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if red == "sum":
        return _ops.mm(mat1, mat2)
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
    xs = _ops.gather(x, 0, wrap(cols[pos], D.int64, a.device, S))
    r = v * xs
    if bool(valid.all()):
        return r
    return _ops.where(wrap(valid, D.bool, a.device, S), r, wrap(out, a.dtype, a.device, S))


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
            f"expected m1 and m2 to have the same dtype, but got: {CPP_NAME[a.dtype.name]} != "
            f"{CPP_NAME[b.dtype.name]}")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)`` (any sparse operands)."""
    return _ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


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
            f"{_tname(mat1)} and {_tname(mat2)}")
    if input.dtype is not mat1.dtype:
        raise RuntimeError(
            f"{fname}: Expected input and mat1 to have the same dtype, but got "
            f"{_tname(input)} and {_tname(mat1)}")
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
        v = _ops.where(wrap(get_backend(a.device).xp.zeros(v.shape, bool), D.bool, a.device, S), av, v)
    return with_out(with_values(a, v), out, fname)


def _tname(t):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(
                t.dtype.name, t.dtype.name)

