"""Einstein summation and tensordot; gradients by einsum of ``grad`` with the other operands.

Equations are parsed once (``'...'`` spelled out as fresh letters, implicit outputs resolved as
torch does: ellipsis dims first, then the letters used once, sorted), so the kernel and the
derivative formulas see explicit subscripts only.
"""

import inspect

from .. import _autocast as _ac
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from ._util import check_tensor, norm_dim, with_out
from ..dense.linalg import (  # noqa: F401 - the strided kernels of these ops
    _einsum_kernel,
)

__all__ = ["einsum", "tensordot"]


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Equation -> (list of input subscripts, output subscripts) with '...' spelled out."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation"
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


def _einsum_backward(i, grad, operands, ins, out_sub):
    """d/d operand i: einsum of ``grad`` with the other operands, onto operand i's subscripts.

    Letters only operand i uses (summed inside it), or that other operands broadcast from size
    1, are expanded back with ones; a letter
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
    have = {}
    for t, op in zip(terms, ops):
        for c, n in zip(t, op.shape):
            have[c] = max(have.get(c, 1), n)
    for c in uniq:  # summed inside operand i only, or broadcast (size 1) everywhere else
        if c not in have or have[c] < sizes[c]:
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


@_ac.policy(_ac.LOWER)  # torch's einsum runs through bmm, on its autocast list
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
                f"expected scalar type {operands[0].dtype.scalar_name} but found "
                f"{t.dtype.scalar_name}"
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


@_ac.policy(_ac.LOWER)
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
