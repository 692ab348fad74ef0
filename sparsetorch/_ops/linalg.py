"""Linear algebra: mm, matmul, bmm, mv, dot, outer, the add-product family, einsum, tensordot,
diagonals and triangles, trace, cross, kron.

Products require equal dtypes (as torch); ``outer``/``kron``/``cross`` promote. Kernels are keyed
by layout tuple (only strided for now: sparse ``mm``/``addmm`` are later dict entries).
Gradients are named ``_<op>_<input>_backward`` functions written with sparsetorch ops, so they
give higher derivatives. ``diagonal`` is a true (writable) view, built with ``as_strided``.
"""

import inspect

from .. import _dtype as D
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, defop, record, wrap
from .._layout import strided
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD_ENABLED
from ._util import check_tensor, inplace_of, norm_dim, with_out
from .reduction import TORCH_NAME, reshape_to, sum_dtype

S = (strided,)
SS = (strided, strided)
_grad_enabled = GRAD_ENABLED.get

__all__ = [
    "mm", "matmul", "rmatmul", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
    "addmv", "baddbmm", "addr", "addmm_", "addmv_", "baddbmm_", "addr_", "einsum", "tensordot",
    "diag", "diagonal", "diag_embed", "trace", "tril", "triu", "tril_", "triu_", "cross", "kron",
]

CPP_NAME = {  # torch's C++ type names, used in the mm dtype message ("float != double")
    "float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
    "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
    "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {CPP_NAME[a.dtype.name]} != "
            f"{CPP_NAME[b.dtype.name]}"
        )


def _dims_str(shape):
    return "x".join(map(str, shape))


# ---- private helpers for formulas ----

_mT_op = defop("_mT", {S: lambda be, x: be.xp.swapaxes(x, -1, -2)},
               grads={"input": lambda grad: mT(grad)})


def mT(x):
    """``x`` with its last two dims swapped (internal)."""
    return call(_mT_op, (x,))


def _unsqueeze(x, d):
    shape = list(x.shape)
    shape.insert(d % (len(shape) + 1), 1)
    return reshape_to(x, shape)


def _squeeze(x, d):
    shape = list(x.shape)
    del shape[d]
    return reshape_to(x, shape)


# ---- matrix products ----

def _matmul_kernel(be, a, b):
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
    "matmul", {SS: _matmul_kernel}, inputs=("input", "other"),
    grads={"input": _matmul_input_backward, "other": _matmul_other_backward},
)
_mm_op = defop(
    "mm", {SS: _matmul_kernel}, inputs=("input", "mat2"),
    grads={"input": lambda grad, mat2: mm(grad, mT(mat2)),
           "mat2": lambda grad, input: mm(mT(input), grad)},
)
_bmm_op = defop(
    "bmm", {SS: _matmul_kernel}, inputs=("input", "mat2"),
    grads={"input": lambda grad, mat2: bmm(grad, mT(mat2)),
           "mat2": lambda grad, input: bmm(mT(input), grad)},
)
_mv_op = defop(
    "mv", {SS: _matmul_kernel}, inputs=("input", "vec"),
    grads={"input": lambda grad, vec: outer(grad, vec),
           "vec": lambda grad, input: mv(mT(input), grad)},
)
_dot_op = defop(
    "dot", {SS: _matmul_kernel}, inputs=("input", "other"),
    grads={"input": lambda grad, other: grad * other.conj(),
           "other": lambda grad, input: grad * input.conj()},
)


def _fast(op, a, b):
    """Two strided tensors of one floating dtype on one device: skip the generic dispatcher."""
    dev = a.device
    t = wrap(_matmul_kernel(CPU if dev is CPU_DEVICE else get_backend(dev), a._data, b._data),
             a.dtype, dev, strided)
    if (a._rg or b._rg) and _grad_enabled():
        record(op, t, (a, b), ())
    return t


def _fast_ok(a, b):
    return (a.__class__ is Tensor and b.__class__ is Tensor and a.dtype is b.dtype
            and a.dtype.is_floating_point and a.layout is strided and b.layout is strided
            and a.device is b.device)


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors ``(n, m) @ (m, p)``."""
    if _fast_ok(input, mat2) and input.ndim == 2 and mat2.ndim == 2 \
            and input.shape[1] == mat2.shape[0] and out is None:
        return _fast(_mm_op, input, mat2)
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


def matmul(input, other, *, out=None):
    """Matrix product with torch's rules: 1-D . 1-D is a dot product, a 1-D operand is treated
    as a row (left) or column (right) vector and its dim removed afterwards, and batch dims
    (all but the last two) broadcast."""
    if _fast_ok(input, other) and out is None:
        na, nb = input.ndim, other.ndim
        if na >= 2 and nb >= 2 and input.shape[-1] == other.shape[-2] and (
                na == 2 or nb == 2 or input.shape[:-2] == other.shape[:-2]):
            return _fast(_matmul_op, input, other)
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
    return with_out(call(_matmul_op, (input, other)), out, "matmul")


def rmatmul(input, other):
    """``other @ input`` for a non-Tensor ``other`` (array-like), as ``Tensor.__rmatmul__``."""
    from .creation import as_tensor

    if isinstance(other, Tensor):
        return matmul(other, input)
    return matmul(as_tensor(other, dtype=input.dtype, device=input.device), input)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)``."""
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


def mv(input, vec, *, out=None):
    """Matrix-vector product ``(n, m) @ (m,)``."""
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
            f"{TORCH_NAME[input.dtype.name]} and {TORCH_NAME[other.dtype.name]}"
        )


def dot(input, other, *, out=None):
    """Dot product of two 1-D tensors of the same size and dtype."""
    _check_vectors(input, other, "dot")
    return with_out(call(_dot_op, (input, other)), out, "dot")


def vdot(input, other, *, out=None):
    """``dot(conj(input), other)`` (the same as ``dot`` for real tensors)."""
    _check_vectors(input, other, "vdot")
    return with_out(dot(input.conj(), other), out, "vdot")


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


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors (types promote)."""
    check_tensor(input, "outer")
    check_tensor(vec2, "outer", "vec2")
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return with_out(reshape_to(input, (input.shape[0], 1)) * vec2, out, "outer")


ger = outer


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


_axpby_op = defop(
    "_add_product", {SS: _axpby_kernel}, inputs=("input", "product"), params=("beta", "alpha"),
    grads={"input": lambda grad, beta: grad * beta, "product": lambda grad, alpha: grad * alpha},
)


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
            f"self and mat2 must have the same dtype, but got {TORCH_NAME[input.dtype.name]} and "
            f"{TORCH_NAME[product.dtype.name]}"
        )
    dt = product.dtype
    r = call(_axpby_op, (input, product), (_scale(beta, dt), _scale(alpha, dt)))
    return with_out(r, out, fname)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to ``(n, p)``."""
    return _add_product("addmm", input, mm(mat1, mat2), beta, alpha, out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    return _add_product("addmv", input, mv(mat, vec), beta, alpha, out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return _add_product("baddbmm", input, bmm(batch1, batch2), beta, alpha, out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _add_product("addr", input, outer(vec1, vec2), beta, alpha, out)


addmm_ = inplace_of(addmm)
addmv_ = inplace_of(addmv)
baddbmm_ = inplace_of(baddbmm)
addr_ = inplace_of(addr)


# ---- einsum and tensordot ----

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Equation -> (list of input subscripts, output subscripts) with '...' spelled out."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(
            f"einsum(): more operands were provided than specified in the equation"
            if len(shapes) > len(terms) else
            "einsum(): fewer operands were provided than specified in the equation"
        )
    for t in terms + [rhs]:
        bad = [c for c in t.replace("...", "") if c not in _LETTERS]
        if bad:
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad[0])} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    if not arrow:  # implicit output: '...' first, then the letters used once, sorted
        counts = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        rhs = ("..." if any("..." in t for t in terms) else "") + "".join(
            sorted((c for c, n in counts.items() if n == 1), key=lambda c: (c.isupper(), c)))
    used = set(eq)
    fresh = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, shape in zip(terms, shapes):
        explicit = len(t.replace("...", ""))
        if "..." in t:
            n_ell = max(n_ell, len(shape) - explicit)
        elif explicit != len(shape):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({explicit}) does not match "
                f"the number of dimensions ({len(shape)}) for operand {terms.index(t)} and no "
                "ellipsis was given"
            )
    ell = "".join(fresh[:n_ell])

    def spell(t, nd):
        if "..." not in t:
            return t
        k = nd - len(t.replace("...", ""))
        return t.replace("...", ell[n_ell - k:] if k else "")

    ins = [spell(t, len(s)) for t, s in zip(terms, shapes)]
    return ins, rhs.replace("...", ell)


def _einsum_kernel(be, *args):
    # payloads..., then the params (equation, ins, out_sub); ins/out_sub are for the formulas
    arrays, eq = args[:-3], args[-3]
    return be.xp.asarray(be.xp.einsum(eq, *arrays, optimize=len(arrays) > 2))


def _einsum_backward(i, grad, operands, ins, out_sub):
    """d/d operand i: einsum of ``grad`` with the other operands, onto operand i's subscripts.

    Letters only operand i uses (summed inside it) are broadcast back with ones; a letter
    repeated in operand i (a diagonal) is put back on the diagonal with identity matrices.
    """
    from .creation import eye, ones

    target = ins[i]
    uniq = "".join(dict.fromkeys(target))
    sizes = {c: operands[i].shape[k] for k, c in enumerate(target)}
    terms, ops = [out_sub], [grad]
    for j, (t, op) in enumerate(zip(ins, operands)):
        if j != i:
            terms.append(t)
            ops.append(op)
    have = set("".join(terms))
    for c in uniq:
        if c not in have:
            terms.append(c)
            ops.append(ones(sizes[c], dtype=grad.dtype, device=grad.device))
    if len(uniq) == len(target):
        return einsum(",".join(terms) + "->" + target, *ops)
    g = einsum(",".join(terms) + "->" + uniq, *ops)
    used = set("".join(ins) + out_sub)
    fresh = iter(c for c in _LETTERS if c not in used)
    spelled, eyes, eye_terms, seen = [], [], [], set()
    for c in target:
        if c in seen:
            f = next(fresh)
            spelled.append(f)
            eye_terms.append(c + f)
            eyes.append(eye(sizes[c], dtype=grad.dtype, device=grad.device))
        else:
            seen.add(c)
            spelled.append(c)
    return einsum(",".join([uniq] + eye_terms) + "->" + "".join(spelled), g, *eyes)


_EINSUM_OPS = {}


def _einsum_op(n):
    """The einsum op for ``n`` operands (inputs op0..op{n-1}; one formula per operand)."""
    op = _EINSUM_OPS.get(n)
    if op is not None:
        return op
    names = [f"op{k}" for k in range(n)]
    grads = {}
    for k in range(n):
        def formula(grad, ins, out_sub, *operands, _k=k):
            return _einsum_backward(_k, grad, operands, ins, out_sub)

        formula.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for p in ["grad", "ins", "out_sub"] + names])
        grads[names[k]] = formula
    op = defop("einsum", {(strided,) * n: _einsum_kernel}, inputs=names,
               params=("equation", "ins", "out_sub"), grads=grads)
    _EINSUM_OPS[n] = op
    return op


def _sublist_equation(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) -> (equation, operands)."""
    ops, terms = [], []
    it = list(args)
    out = None
    while it:
        if isinstance(it[0], Tensor):
            ops.append(it.pop(0))
            terms.append("".join(_LETTERS[s] if s is not Ellipsis else "..." for s in it.pop(0)))
        else:
            out = "".join(_LETTERS[s] if s is not Ellipsis else "..." for s in it.pop(0))
    return ",".join(terms) + ("" if out is None else "->" + out), ops


def einsum(equation, *operands):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``; operands may also be one list, and
    torch's sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted."""
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for k, t in enumerate(operands):
        check_tensor(t, "einsum", f"operands[{k}]")
        if t.dtype is not operands[0].dtype:
            raise RuntimeError(
                f"expected scalar type {TORCH_NAME[operands[0].dtype.name]} but found "
                f"{TORCH_NAME[t.dtype.name]}"
            )
    ins, out_sub = _parse_einsum(equation, [tuple(t.shape) for t in operands])
    sizes = {}
    for k, (t, sub) in enumerate(zip(operands, ins)):
        for c, s in zip(sub, t.shape):
            seen = sizes.get(c)
            if seen is not None and seen != s and seen != 1 and s != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {s} for operand {k} which does not "
                    f"broadcast with previously seen size {seen}"
                )
            sizes[c] = s if seen in (None, 1) else seen
    eq = ",".join(ins) + "->" + out_sub
    return call(_einsum_op(len(operands)), tuple(operands), (eq, tuple(ins), out_sub))


def tensordot(a, b, dims=2, out=None):
    """Sum of products over ``dims`` (an int: the last ``dims`` of ``a`` with the first of ``b``;
    or two lists of dims)."""
    check_tensor(a, "tensordot", "a")
    check_tensor(b, "tensordot", "b")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [norm_dim(d, a.ndim, "tensordot") for d in da]
    db = [norm_dim(d, b.ndim, "tensordot") for d in db]
    sa = list(_LETTERS[:a.ndim])
    sb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                f"and second has size {b.shape[y]} in dim {y}"
            )
        sb[y] = sa[x]
    rest = [c for k, c in enumerate(sa) if k not in da] + [c for k, c in enumerate(sb) if k not in db]
    return with_out(einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(rest), a, b), out,
                    "tensordot")


def kron(input, other, *, out=None):
    """Kronecker product: blocks ``input[i] * other`` (types promote)."""
    check_tensor(input, "kron")
    check_tensor(other, "kron", "other")
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = reshape_to(input, [v for s in sa for v in (s, 1)])
    b = reshape_to(other, [v for s in sb for v in (1, s)])
    return with_out(reshape_to(a * b, [x * y for x, y in zip(sa, sb)]), out, "kron")


# ---- diagonals and triangles ----

def _diag_view(be, x, offset, d1, d2):
    """A writable view of the diagonal of ``x`` over dims (d1, d2), appended as the last dim."""
    sl = [slice(None)] * x.ndim
    if offset >= 0:
        sl[d2] = slice(offset, None)
    else:
        sl[d1] = slice(-offset, None)
    xs = x[tuple(sl)]
    n = max(min(xs.shape[d1], xs.shape[d2]), 0)
    rest = [i for i in range(x.ndim) if i != d1 and i != d2]
    shape = [xs.shape[i] for i in rest] + [n]
    strides = [xs.strides[i] for i in rest] + [xs.strides[d1] + xs.strides[d2]]
    return be.xp.lib.stride_tricks.as_strided(xs, shape, strides)


def _diag_embed_kernel(be, g, shape, offset, d1, d2):
    out = be.xp.zeros(shape, g.dtype)
    _diag_view(be, out, offset, d1, d2)[...] = g
    return out


_diagonal_op = defop(
    "diagonal", {S: lambda be, x, offset, dim1, dim2: _diag_view(be, x, offset, dim1, dim2)},
    params=("offset", "dim1", "dim2"), view=True,
    grads={"input": lambda grad, input, offset, dim1, dim2:
           _embed(grad, tuple(input.shape), offset, dim1, dim2)},
)
_embed_op = defop(
    "diag_embed", {S: _diag_embed_kernel}, params=("shape", "offset", "dim1", "dim2"),
    grads={"input": lambda grad, offset, dim1, dim2: call(_diagonal_op, (grad,), (offset, dim1, dim2))},
)


def _embed(x, shape, offset, d1, d2):
    return call(_embed_op, (x,), (shape, offset, d1, d2))


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over (dim1, dim2) as the last dim; a view sharing memory with ``input``."""
    check_tensor(input, "diagonal")
    d1 = norm_dim(dim1, input.ndim, "diagonal")
    d2 = norm_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return call(_diagonal_op, (input,), (int(offset), d1, d2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals over (dim1, dim2) hold the last dim of ``input``; zeros elsewhere."""
    check_tensor(input, "diag_embed")
    if input.ndim == 0:
        raise RuntimeError("diag_embed(): input must have at least 1 dimension, got a 0-d tensor")
    nd = input.ndim + 1
    d1 = norm_dim(dim1, nd, "diag_embed")
    d2 = norm_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(n if i in (d1, d2) else next(rest) for i in range(nd))
    return _embed(input, shape, int(offset), d1, d2)


def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with ``input`` on the ``diagonal``-th diagonal; 2-D input: that
    diagonal as a 1-D tensor (a copy)."""
    check_tensor(input, "diag")
    if input.ndim == 1:
        n = input.shape[0] + abs(diagonal)
        r = _embed(input, (n, n), int(diagonal), 0, 1)
    elif input.ndim == 2:
        from .conversion import clone

        r = clone(call(_diagonal_op, (input,), (int(diagonal), 0, 1)))
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return with_out(r, out, "diag")


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integer input gives int64)."""
    check_tensor(input, "trace")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    from .reduction import sum as _sum

    return _sum(call(_diagonal_op, (input,), (0, 0, 1)), dtype=sum_dtype(input.dtype, None))


_tril_op = defop("tril", {S: lambda be, x, k: be.xp.tril(x, k)}, params=("diagonal",),
                 grads={"input": lambda grad, diagonal: tril(grad, diagonal)}, zero_preserving=True)
_triu_op = defop("triu", {S: lambda be, x, k: be.xp.triu(x, k)}, params=("diagonal",),
                 grads={"input": lambda grad, diagonal: triu(grad, diagonal)}, zero_preserving=True)


def _tri(op, input, diagonal, out, fname):
    check_tensor(input, fname)
    if input.ndim < 2:
        raise RuntimeError(f"{fname}: input tensor must have at least 2 dimensions")
    return with_out(call(op, (input,), (int(diagonal),)), out, fname)


def tril(input, diagonal=0, *, out=None):
    """Lower triangle (elements on and below the ``diagonal``-th diagonal) of the last two dims."""
    return _tri(_tril_op, input, diagonal, out, "tril")


def triu(input, diagonal=0, *, out=None):
    """Upper triangle (elements on and above the ``diagonal``-th diagonal) of the last two dims."""
    return _tri(_triu_op, input, diagonal, out, "triu")


tril_ = inplace_of(tril)
triu_ = inplace_of(triu)


# ---- cross ----

_cross_op = defop(
    "cross", {SS: lambda be, a, b, dim: be.xp.cross(a, b, axis=dim)}, inputs=("input", "other"),
    params=("dim",),
    grads={"input": lambda grad, other, dim: cross(other, grad, dim),
           "other": lambda grad, input, dim: cross(grad, input, dim)},
)


def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3), broadcasting."""
    check_tensor(input, "cross")
    check_tensor(other, "cross", "other")
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions, got {input.ndim} "
            f"and {other.ndim}"
        )
    shape = []
    for x, y in zip(input.shape, other.shape):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"linalg.cross: shapes {list(input.shape)} and {list(other.shape)} "
                               "do not broadcast")
        shape.append(max(x, y))
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = norm_dim(dim, len(shape), "cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
            f"{other.shape[d]}"
        )
    dt = D.promote_types(input.dtype, other.dtype)
    return with_out(call(_cross_op, (input, other), (d,), dt, dt), out, "cross")
