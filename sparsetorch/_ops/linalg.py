"""Linear algebra: matrix products (mm, matmul, bmm, mv, dot, vdot, inner, outer) and the
add-product family (addmm, addmv, baddbmm, addbmm, addr and their in-place forms).

Products require equal dtypes (as torch); ``outer`` promotes. Kernels are keyed by layout tuple
(the strided kernels here; every pair with a sparse operand is a composition in
``sparse_linalg.py``; the add-product's sparse entries are here: a dense result when one operand
is strided, ``add_product_sparse`` when both are sparse). Gradients are named
``_<op>_<input>_backward`` functions written with sparsetorch ops, so they give higher
derivatives. ``einsum``/``tensordot`` live in ``einsum.py``; diagonals, triangles, trace, cross
and kron in ``matrix.py`` (``_ops/__init__.py`` imports each module of the family).
"""

from .. import _autocast as _ac
from .._backend import CPU, get_backend
from .._dtype import bfloat16, float32 as _F32, float64 as _F64
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, composite, cpu_float_payloads, defop, record_if_grad, wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from ..autograd import profiler as _profiler
from ..autograd._tape import OpNode as _OpNode, SavedTensor as _Saved
from ..autograd.grad_mode import GRAD_ENABLED
from ..sparse._payload import COO
from .._variants import method
from . import sparse_linalg as _spl
from ..dense import _small_bmm as _sb
from ._join import cat
from ._reduce import mT, reshape_to
from .sparse_core import coalesce, to_dense, to_sparse_coo, to_sparse_csr, values, with_values
from .sparse_linalg import _canon, _pattern, _scalar
from ._util import _dims_str, check_tensor, with_out
from .einsum import tensordot

S = (strided,)
SS = (strided, strided)
_ac_active = _ac.active

__all__ = [
    "mm", "matmul", "rmatmul", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
    "addmv", "baddbmm", "addbmm", "addr",
]

_BF16_NP = bfloat16.np
_np_matmul = CPU.xp.matmul  # mm/bmm's CPU fast path (2-D/3-D products: always an array)
_grad_enabled = GRAD_ENABLED.get


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.cpp_name} != "
            f"{b.dtype.cpp_name}"
        )


# ---- private helpers for formulas ----

def _unsqueeze(x, d):
    shape = list(x.shape)
    shape.insert(d % (len(shape) + 1), 1)
    return reshape_to(x, shape)


def _squeeze(x, d):
    shape = list(x.shape)
    del shape[d]
    return reshape_to(x, shape)


# ---- sparse operands: composite entries served by sparse_linalg.py ----

def _sparse(fn):
    """Kernel-table entries for every layout pair with a sparse operand: the composition ``fn``."""
    entry = composite(fn)
    lays = (strided, sparse_coo, sparse_csr)
    return {(a, b): entry for a in lays for b in lays if (a, b) != SS}


# ---- matrix products ----

def _no_syrk(a, b):
    """``b``, or a copy of it where NumPy would compute ``a @ b`` as ``a @ a.T`` by syrk: it
    does so whenever the operands are one buffer, then mirrors the triangle in a strided loop;
    a large thin product (``z @ z.T``, 2708 x 16: 8-30 ms instead of 2-3 ms by gemm, torch's
    2 ms) loses to the mirror. The copy costs ``n * k`` elements against the ``n * n`` result."""
    sa = a.shape
    sb = b.shape
    if len(sa) < 2 or len(sb) < 2:
        return b
    n = sa[-2]
    if n < 1024 or sb[-1] != n or 8 * sa[-1] > n:  # syrk's half of the flops wins past k ~ n/8
        return b
    if a.__array_interface__["data"][0] != b.__array_interface__["data"][0]:
        return b
    return b.copy()


def _matmul_kernel(be, a, b):
    if be is CPU:
        b = _no_syrk(a, b)
    if a.dtype == _BF16_NP:  # products and sums in float32, one rounding at the end (as torch)
        f32 = be.xp.float32
        return be.xp.asarray(be.xp.matmul(a.astype(f32), b.astype(f32))).astype(a.dtype)
    return be.xp.asarray(be.xp.matmul(a, b))


def _matmul_input_backward(grad, input, other):
    a, b = input, other
    if a.ndim == 1 and b.ndim == 1:
        return grad * b
    if b.ndim == 1:  # (..., n, m) @ (m,) -> (..., n)
        return matmul(_unsqueeze(grad, -1), _unsqueeze(b, 0))
    if a.ndim == 1:  # (m,) @ (..., m, p) -> (..., p); the engine sums the batch dims
        return _squeeze(matmul(_unsqueeze(grad, -2), mT(b)), -2)
    return matmul(grad, mT(b))


def _matmul_other_backward(grad, input, other):
    a, b = input, other
    if a.ndim == 1 and b.ndim == 1:
        return grad * a
    if a.ndim == 1:
        return matmul(_unsqueeze(a, -1), _unsqueeze(grad, -2))
    if b.ndim == 1:
        return _squeeze(matmul(mT(a), _unsqueeze(grad, -1)), -1)
    return matmul(mT(a), grad)


_matmul_op = defop(
    "matmul", {SS: _matmul_kernel, **_sparse(_spl.matmul_sparse)}, inputs=("input", "other"),
    grads={"input": _matmul_input_backward, "other": _matmul_other_backward},
)
def _plain_product(a, b, ta, tb):
    """``a @ b`` (``a``/``b`` transposed in their last two dims where ``ta``/``tb``) on the
    payloads, in a plain backward (no create_graph, no profiling) over strided float32/float64
    CPU tensors of one dtype; None otherwise (the formula then runs with ops) (issue 14)."""
    p = None if _grad_enabled() or _profiler.ACTIVE is not None else cpu_float_payloads(a, b)
    if p is None:
        return None
    x, y = p
    if x.ndim < 2 or x.ndim != y.ndim:
        return None
    return wrap(_np_matmul(x.swapaxes(-1, -2) if ta else x, y.swapaxes(-1, -2) if tb else y),
                a.dtype, CPU_DEVICE, strided)


def _mm_grad_input(grad, mat2, _f=None):
    r = _plain_product(grad, mat2, False, True)
    return r if r is not None else (_f or mm)(grad, mT(mat2))


def _mm_grad_mat2(grad, input, _f=None):
    r = _plain_product(input, grad, True, False)
    return r if r is not None else (_f or mm)(mT(input), grad)


_mm_op = defop(
    "mm", {SS: _matmul_kernel, **_sparse(_spl.mm_sparse)}, inputs=("input", "mat2"),
    grads={"input": lambda grad, mat2: _mm_grad_input(grad, mat2),
           "mat2": lambda grad, input: _mm_grad_mat2(grad, input)},
)
_bmm_op = defop(
    "bmm", {SS: _matmul_kernel, **_spl.BMM_KERNELS}, inputs=("input", "mat2"),
    grads={"input": lambda grad, mat2: _mm_grad_input(grad, mat2, bmm),
           "mat2": lambda grad, input: _mm_grad_mat2(grad, input, bmm)},
)


def _mm_apply(node, grad_outputs):
    """MmBackward0 / BmmBackward0 when both inputs need a gradient, in a plain backward over
    strided float32/float64 CPU tensors: the two products on the payloads in one call, and
    mat2's gradient as ``(grad^T @ input)^T`` when mat2 is a transposed view (``bmm(T,
    T.transpose(1, 2))``, ``q @ k.t()``): that gradient then has mat2's memory order, so the
    transpose's backward hands a contiguous array to the sum with T's other gradient (DLRM batch
    128: 13 -> 1.4 us), and the product reads grad transposed instead of T (26 -> 16 us) (issue
    14). Same products, same values. Otherwise the formulas run."""
    grad = grad_outputs[0]
    ci, cm = node.calls
    if node._released or grad is None or grad.__class__ is not Tensor or ci is None or cm is None \
            or _grad_enabled() or _profiler.ACTIVE is not None:
        return _OpNode.apply(node, grad_outputs)
    saved = node.saved
    ms, xs = saved[ci[1][1] - 1], saved[cm[1][1] - 1]
    if ms.__class__ is not _Saved or xs.__class__ is not _Saved:
        return _OpNode.apply(node, grad_outputs)
    mat2, inp = ms.unpack(node), xs.unpack(node)
    p = cpu_float_payloads(grad, inp, mat2)
    if p is None:
        return _OpNode.apply(node, grad_outputs)
    g, x, m = p
    dt = grad.dtype
    if g.ndim < 2 or x.ndim != g.ndim or m.ndim != g.ndim:
        return _OpNode.apply(node, grad_outputs)
    mt = m.swapaxes(-1, -2)
    gi = _np_matmul(g, mt)
    if mt.flags.c_contiguous and not m.flags.c_contiguous:
        gm = _np_matmul(g.swapaxes(-1, -2), x).swapaxes(-1, -2)
    else:
        gm = _np_matmul(x.swapaxes(-1, -2), g)
    return [wrap(gi, dt, CPU_DEVICE, strided), wrap(gm, dt, CPU_DEVICE, strided)]


for _op in (_mm_op, _bmm_op):
    _op.node_cls = type(_op.node_cls.__name__, (_op.node_cls,), {"__slots__": (), "apply": _mm_apply})
del _op


_mv_op = defop(
    "mv", {SS: _matmul_kernel, **_sparse(_spl.mv_sparse)}, inputs=("input", "vec"),
    grads={"input": lambda grad, vec: outer(grad, vec),
           "vec": lambda grad, input: mv(mT(input), grad)},
)
_dot_op = defop(
    "dot", {SS: _matmul_kernel}, inputs=("input", "other"),
    grads={"input": lambda grad, other: grad * other.conj(),
           "other": lambda grad, input: grad * input.conj()},
    holomorphic=False,  # the formulas already follow torch's conjugate convention
)


def _fast(op, a, b):
    """Two strided tensors of one floating dtype on one device: skip the generic dispatcher."""
    dev = a.device
    t = wrap(_matmul_kernel(CPU if dev is CPU_DEVICE else get_backend(dev), a._data, b._data),
             a.dtype, dev, strided)
    if a._rg or b._rg:
        record_if_grad(op, t, (a, b), ())
    return t


def _lean(op, input, mat2, nd):
    """mm/bmm's fast path: two strided ``nd``-D tensors of one floating dtype on one device whose
    inner sizes agree (read once from the payloads); None sends the call down the checked path."""
    dt = input.dtype
    if dt is not mat2.dtype or not dt.is_floating_point or input.layout is not strided \
            or mat2.layout is not strided or _profiler.ACTIVE is not None:
        return None
    dev = input.device
    a = input._data
    b = mat2._data
    sa = a.shape
    sb = b.shape
    if dev is not mat2.device or len(sa) != nd or len(sb) != nd or sa[-1] != sb[-2] or sa[:-2] != sb[:-2]:
        return None
    if dev is CPU_DEVICE and dt is not bfloat16:
        data = _small_nt(a, b) if nd == 3 and (dt is _F32 or dt is _F64) else None
        if data is None:
            data = _np_matmul(a, _no_syrk(a, b) if sb[-1] == sa[-2] > 1023 else b)
    else:
        data = _matmul_kernel(CPU if dev is CPU_DEVICE else get_backend(dev), a, b)
    t = wrap(data, dt, dev, strided)
    if input._rg or mat2._rg:
        record_if_grad(op, t, (input, mat2), ())
    return t


def _small_nt(a, b):
    """``a @ b`` by the small-matrix kernel when ``b`` is a batch of transposed C-contiguous
    matrices (``bmm(T, T.transpose(1, 2))``, where NumPy's transposed BLAS calls are slow), else
    None (``dense/_small_bmm.py``)."""
    sa = a.shape
    n = b.shape[2]
    if sa[0] < _sb.MIN_BATCH or sa[1] * sa[2] * n > _sb.MAX_WORK or not a.flags.c_contiguous:
        return None
    bt = b.transpose(0, 2, 1)
    if not bt.flags.c_contiguous:
        return None
    k = _sb.nt_kernel()
    if k is None:
        return None
    return k(a, bt, CPU.xp.empty((sa[0], sa[1], n), a.dtype), a.dtype.type(0))


def _fast_ok(a, b):  # profiling: the generic path, which call() times
    return (_profiler.ACTIVE is None
            and a.__class__ is Tensor and b.__class__ is Tensor and a.dtype is b.dtype
            and a.dtype.is_floating_point and a.layout is strided and b.layout is strided
            and a.device is b.device)


@method
def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors ``(n, m) @ (m, p)``. COO and CSR operands: sparse @
    sparse stays sparse (CSR @ CSR is CSR, else COO); sparse @ strided and strided @ sparse give
    a strided result."""
    if _ac_active():  # autocast: torch's lower-precision list (sparsetorch/_autocast.py)
        return _ac.run(mm, _ac.LOWER, (input, mat2), {"out": out})
    if out is None and isinstance(input, Tensor) and isinstance(mat2, Tensor):  # (Parameters too)
        t = _lean(_mm_op, input, mat2, 2)
        if t is not None:
            return t
    check_tensor(input, "mm")
    check_tensor(mat2, "mm", "mat2")
    if input.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm() got a {input.ndim}-D input)")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix (mm() got a {mat2.ndim}-D mat2)")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_dims_str(input.shape)} and "
            f"{_dims_str(mat2.shape)})"
        )
    _same_dtype(input, mat2)
    return with_out(call(_mm_op, (input, mat2)), out, "mm")


def _broadcast_batch(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {max(len(a), len(b)) - i}"
            )
        out.append(max(x, y))
    return tuple(reversed(out))


@method
def matmul(input, other, *, out=None):
    """Matrix product with torch's rules: 1-D . 1-D is a dot product, a 1-D operand is treated
    as a row (left) or column (right) vector and its dim removed afterwards, and batch dims
    (all but the last two) broadcast. COO and CSR operands as :func:`mm`."""
    if _ac_active():
        return _ac.run(matmul, _ac.LOWER, (input, other), {"out": out})
    if _fast_ok(input, other) and out is None:
        na, nb = input.ndim, other.ndim
        if na >= 2 and nb >= 2 and input.shape[-1] == other.shape[-2] and (
                na == 2 or nb == 2 or input.shape[:-2] == other.shape[:-2]):
            return _fast(_mm_op if na == 2 and nb == 2 else _matmul_op, input, other)
    check_tensor(input, "matmul")
    check_tensor(other, "matmul", "other")
    na, nb = input.ndim, other.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D"
        )
    if na == 1 and nb == 1:
        return with_out(dot(input, other), out, "matmul")
    if na == 2 and nb == 1:
        return with_out(mv(input, other), out, "matmul")
    m_a = input.shape[-1]
    m_b = other.shape[-2] if nb >= 2 else other.shape[0]
    if m_a != m_b:
        sa = input.shape if na >= 2 else (1,) + tuple(input.shape)
        sb = other.shape if nb >= 2 else tuple(other.shape) + (1,)
        rows = 1
        for s in sa[:-1]:
            rows *= s
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and {_dims_str(sb[-2:])})"
        )
    _broadcast_batch(tuple(input.shape[:-2]), tuple(other.shape[:-2]))
    _same_dtype(input, other)
    op = _mm_op if na == 2 and nb == 2 else _matmul_op  # 2-D @ 2-D is torch's mm node (MmBackward0)
    return with_out(call(op, (input, other)), out, "matmul")


def rmatmul(input, other):
    """``other @ input`` for a non-Tensor ``other`` (array-like), as ``Tensor.__rmatmul__``."""
    from .creation import as_tensor

    if isinstance(other, Tensor):
        return matmul(other, input)
    return matmul(as_tensor(other, dtype=input.dtype, device=input.device), input)


@method
def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)``. Sparse operands as
    :func:`mm` (sparse @ sparse stays sparse, with a strided operand the result is strided)."""
    if _ac_active():
        return _ac.run(bmm, _ac.LOWER, (input, mat2), {"out": out})
    if out is None and isinstance(input, Tensor) and isinstance(mat2, Tensor):  # (Parameters too)
        t = _lean(_bmm_op, input, mat2, 3)
        if t is not None:
            return t
    check_tensor(input, "bmm")
    check_tensor(mat2, "bmm", "mat2")
    if input.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm() got {input.ndim}-D)")
    if mat2.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor (bmm() got {mat2.ndim}-D)")
    b, _, m = input.shape
    if tuple(mat2.shape[:2]) != (b, m):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {m}] but got: "
            f"[{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    _same_dtype(input, mat2)
    return with_out(call(_bmm_op, (input, mat2)), out, "bmm")


@method
def mv(input, vec, *, out=None):
    """Matrix-vector product ``(n, m) @ (m,)``; a COO or CSR matrix gives a strided vector."""
    check_tensor(input, "mv")
    check_tensor(vec, "mv", "vec")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}"
        )
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({_dims_str(input.shape)}), "
            f"vec ({vec.shape[0]})"
        )
    _same_dtype(input, vec)
    return with_out(call(_mv_op, (input, vec)), out, "mv")


def _check_vectors(input, other, fname):
    check_tensor(input, fname)
    check_tensor(other, fname, "other")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
        )
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively"
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"{fname} : expected both vectors to have same dtype, but found "
            f"{input.dtype.scalar_name} and {other.dtype.scalar_name}"
        )


@method
def dot(input, other, *, out=None):
    """Dot product of two 1-D tensors of the same size and dtype."""
    _check_vectors(input, other, "dot")
    return with_out(call(_dot_op, (input, other)), out, "dot")


@method
def vdot(input, other, *, out=None):
    """``dot(conj(input), other)`` (the same as ``dot`` for real tensors)."""
    _check_vectors(input, other, "vdot")
    return with_out(dot(input.conj(), other), out, "vdot")


@method
@_ac.policy(_ac.LOWER)
def inner(input, other, *, out=None):
    """Sum of products over the last dims (``input.shape[:-1] + other.shape[:-1]``)."""
    check_tensor(input, "inner")
    check_tensor(other, "inner", "other")
    if input.ndim == 0 or other.ndim == 0:
        return with_out(input * other, out, "inner")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return with_out(tensordot(input, other, ([-1], [-1])), out, "inner")


@method
def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors (types promote)."""
    check_tensor(input, "outer")
    check_tensor(vec2, "outer", "vec2")
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return with_out(reshape_to(input, (input.shape[0], 1)) * vec2, out, "outer")


ger = method(outer, "ger")


# ---- beta * input + alpha * product ----

def _axpby_kernel(be, c, p, beta, alpha):
    xp = be.xp
    r = xp.asarray(p * alpha) if alpha != 1 else p  # p: a fresh product nothing else holds
    if beta != 0:  # beta == 0 ignores input entirely (NaN/inf in it do not propagate)
        cb = c * beta if beta != 1 else c
        if r.ndim:
            r += cb  # c broadcasts to r's shape (checked by the caller)
        else:
            r = xp.asarray(r + cb)
    return r


def _add_product_mixed(input, product, beta, alpha):
    """``beta * input + alpha * product``, one strided and one sparse: the result is dense."""
    return call(_axpby_op, (to_dense(input), to_dense(product)), (beta, alpha))


def add_product_sparse(input, product, beta, alpha):
    """``beta * input + alpha * product``, both sparse (addmm's last step): sparse."""
    if tuple(input.shape) != tuple(product.shape):
        raise RuntimeError(
            f"addmm: a sparse input must have the product's shape {list(product.shape)}, got "
            f"{list(input.shape)}"
        )
    both_csr = input.layout is sparse_csr and product.layout is sparse_csr
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
        v = cat([iv * beta if beta != 1 else iv, pv * alpha if alpha != 1 else pv])
        r = coalesce(with_values(_pattern(q, pc), v))
    return to_sparse_csr(r) if both_csr else r


_BOTH_SPARSE = composite(add_product_sparse)
_axpby_op = defop(
    "_add_product",
    {SS: _axpby_kernel, **_sparse(_add_product_mixed),  # one strided operand: a dense result
     **{(a, b): _BOTH_SPARSE for a in (sparse_coo, sparse_csr) for b in (sparse_coo, sparse_csr)}},
    inputs=("input", "product"), params=("beta", "alpha"),
    grads={"input": lambda grad, beta: grad * beta, "product": lambda grad, alpha: grad * alpha},
)


# ---- addmm / baddbmm of three strided tensors: one node (AddmmBackward0 / BaddbmmBackward0) ----

def _addmm_kernel(be, c, a, b, beta, alpha):
    return _axpby_kernel(be, c, _matmul_kernel(be, a, b), beta, alpha)


def _scaled(grad, alpha):
    return grad * alpha if alpha != 1 else grad


_ADDMM = dict(
    kernels={(strided, strided, strided): _addmm_kernel}, inputs=("input", "mat1", "mat2"),
    params=("beta", "alpha"),
    grads={"input": lambda grad, beta: grad * beta,  # the engine sums a broadcast input's back
           "mat1": lambda grad, mat2, alpha: _mm_grad_input(_scaled(grad, alpha), mat2, matmul),
           "mat2": lambda grad, mat1, alpha: _mm_grad_mat2(_scaled(grad, alpha), mat1, matmul)},
)
_addmm_op = defop("addmm", **_ADDMM)
_baddbmm_op = defop("baddbmm", **_ADDMM)


def _one_node(input, a, b, nd):
    """True when ``input + a @ b`` can be the single addmm/baddbmm node: three strided tensors of
    one floating (or complex) dtype on one device, ``nd``-D products whose sizes agree and an
    ``input`` that broadcasts to the product. Anything else takes the checked two-node path."""
    if input.__class__ is not Tensor or a.__class__ is not Tensor or b.__class__ is not Tensor:
        return False
    dt = a.dtype
    if b.dtype is not dt or input.dtype is not dt or not (dt.is_floating_point or dt.is_complex) \
            or a.layout is not strided or b.layout is not strided or input.layout is not strided \
            or a.device is not b.device or input.device is not a.device:
        return False
    sa = a.shape
    sb = b.shape
    if len(sa) != nd or len(sb) != nd or sa[-1] != sb[-2] or sa[:-2] != sb[:-2]:
        return False
    target = tuple(sa[:-1]) + (sb[-1],)
    shape = tuple(input.shape)
    return len(shape) <= nd and all(
        s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def _scale(x, dt):
    if dt.is_floating_point or dt.is_complex:
        return x
    if isinstance(x, float) and not x.is_integer():
        raise RuntimeError(
            f"For integral input tensors, argument alpha/beta must not be a floating point number "
            f"(got {x})"
        )
    return int(x)


def _add_product(fname, input, product, beta, alpha, out):
    check_tensor(input, fname)
    target = tuple(product.shape)
    shape = tuple(input.shape)
    ok = len(shape) <= len(target) and all(
        s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))
    if not ok:
        raise RuntimeError(
            f"{fname}: The expanded size of the tensor cannot match: input of shape {list(shape)} "
            f"does not broadcast to the product's shape {list(target)}"
        )
    if input.dtype is not product.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {input.dtype.scalar_name} and "
            f"{product.dtype.scalar_name}"
        )
    dt = product.dtype
    r = call(_axpby_op, (input, product), (_scale(beta, dt), _scale(alpha, dt)))
    return with_out(r, out, fname)


@method(inplace=True)
@_ac.policy(_ac.LOWER)
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to ``(n, p)``."""
    if _one_node(input, mat1, mat2, 2):
        return with_out(call(_addmm_op, (input, mat1, mat2), (beta, alpha)), out, "addmm")
    prof = _profiler.ACTIVE
    if prof is not None and prof.named(addmm):
        return prof.run_named("aten::addmm", addmm, (input, mat1, mat2),
                              {"beta": beta, "alpha": alpha, "out": out})
    return _add_product("addmm", input, mm(mat1, mat2), beta, alpha, out)


@method(inplace=True)
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    return _add_product("addmv", input, mv(mat, vec), beta, alpha, out)


@method(inplace=True)
@_ac.policy(_ac.LOWER)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    if _one_node(input, batch1, batch2, 3):
        return with_out(call(_baddbmm_op, (input, batch1, batch2), (beta, alpha)), out, "baddbmm")
    return _add_product("baddbmm", input, bmm(batch1, batch2), beta, alpha, out)


@method(inplace=True)
@_ac.policy(_ac.LOWER)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (the batch products summed)."""
    check_tensor(batch1, "addbmm", "batch1")
    check_tensor(batch2, "addbmm", "batch2")
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, m = batch1.shape
    if batch2.shape[0] != b:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {b} and {batch2.shape[0]}")
    if batch2.shape[1] != m:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({n}x{m} and {batch2.shape[1]}x{batch2.shape[2]})")
    # one (n, b*m) @ (b*m, p) product is the sum of the b products
    lhs = batch1.permute(1, 0, 2).reshape(n, b * m)
    rhs = batch2.reshape(b * m, batch2.shape[2])
    return _add_product("addbmm", input, mm(lhs, rhs), beta, alpha, out)


@method(inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _add_product("addr", input, outer(vec1, vec2), beta, alpha, out)
