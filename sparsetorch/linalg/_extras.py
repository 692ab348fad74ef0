"""``solve_triangular``, ``cond``, ``tensorinv``, ``tensorsolve`` and ``vander``."""

import math

from .._dispatch import call, defop
from .._ops._util import with_out
from .._ops.linalg import matmul
from .._ops.matrix import tril, triu
from ._common import SS, LinAlgError, check_matrix, mT, np_linalg_error

__all__ = ["cond", "solve_triangular", "tensorinv", "tensorsolve", "vander"]


# ---- solve_triangular ----

def _broadcast(a, b):
    """The broadcast of two batch shapes (they are known to broadcast: solve accepted them)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _substitute(xp, t, b, upper):
    """Forward / back substitution, vectorized over batch and right-hand sides: what a
    triangular solver gives for a singular matrix (inf / nan, no error, as torch)."""
    n = t.shape[-1]
    batch = _broadcast(t.shape[:-2], b.shape[:-2])
    x = xp.zeros(batch + b.shape[-2:], xp.result_type(t, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = slice(i + 1, n) if upper else slice(0, i)
        s = b[..., i, :] - xp.matmul(t[..., i:i + 1, rest], x[..., rest, :])[..., 0, :]
        x[..., i, :] = s / t[..., i:i + 1, i]
    return x


def _tri_kernel(be, a, b, upper, unit):
    xp = be.xp
    t = xp.triu(a) if upper else xp.tril(a)  # only the triangle is read, as LAPACK's trtrs
    if unit:
        n = t.shape[-1]
        t[..., xp.arange(n), xp.arange(n)] = 1
    try:  # (inf/nan warnings of a singular A are silenced for sparsetorch's modules)
        return xp.linalg.solve(t, b)
    except np_linalg_error(be):
        return _substitute(xp, t, b, upper)


def _tri_A_backward(grad, result, A, upper, unitriangular):
    gB = _tri(mT(A), grad, not upper, unitriangular)
    gA = -matmul(gB, mT(result))
    off = (1 if upper else -1) if unitriangular else 0  # a unit diagonal is not read
    return triu(gA, off) if upper else tril(gA, off)


_tri_op = defop(
    "linalg_solve_triangular", {SS: _tri_kernel}, inputs=("A", "B"),
    params=("upper", "unitriangular"),
    grads={"A": _tri_A_backward,
           "B": lambda grad, A, upper, unitriangular: _tri(mT(A), grad, not upper, unitriangular)},
)


def _tri(A, B, upper, unit):
    return call(_tri_op, (A, B), (upper, unit))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Computes the solution of a triangular system ``A X = B`` (``left=False``: ``X A = B``).

    Only the ``upper`` (or lower) triangle of ``A`` is read; ``unitriangular=True`` takes its
    diagonal to be ones. A singular ``A`` gives inf / nan entries, not an error (as torch)."""
    fname = "linalg.solve_triangular"
    check_matrix(A, fname, square=True, complex_grad=True)
    check_matrix(B, fname, "B", complex_grad=True)
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"{fname}: Expected A and B to have the same dtype, but found A of type "
            f"{A.dtype.scalar_name} and B of type {B.dtype.scalar_name} instead.")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    upper, unit = bool(upper), bool(unitriangular)
    X = _tri(A, B, upper, unit) if left else mT(_tri(mT(A), mT(B), not upper, unit))
    return with_out(X, out, fname)


# ---- cond ----

def cond(A, p=None, *, out=None):
    """Computes the condition number of a matrix with respect to the norm ``p``.

    ``p`` None or 2: ``sigma_max / sigma_min`` (-2: the inverse), any rectangular matrix;
    otherwise (``'fro'``, ``'nuc'``, inf, -inf, 1, -1): ``norm(A, p) * norm(inv(A), p)`` for
    square matrices, inf for a singular one."""
    fname = "linalg.cond"
    check_matrix(A, fname)
    from ._decomp import svdvals
    from ._norms import matrix_norm

    if p is None or p == 2 or p == -2:
        s = svdvals(A)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return with_out(r, out, fname)
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1) or isinstance(p, bool):
        raise RuntimeError(f"{fname} got an invalid norm type: {p}")
    check_matrix(A, fname, square=True)
    from ._solve import inv

    try:
        r = matrix_norm(A, p) * matrix_norm(inv(A), p)
    except LinAlgError:
        if A.ndim > 2:  # torch: inf only for the singular matrices of the batch
            from .._ops._join import stack

            flat = A.reshape((-1,) + tuple(A.shape[-2:]))
            r = stack([cond(flat[i], p) for i in range(flat.shape[0])]).reshape(A.shape[:-2])
        else:
            r = A.new_full((), math.inf).to(A.dtype.to_real())
    return with_out(r, out, fname)


# ---- tensor forms ----

def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def tensorinv(A, ind=2, *, out=None):
    """Computes the multiplicative inverse of ``A`` with respect to ``tensordot``: the inverse
    of ``A`` reshaped to ``(prod(A.shape[:ind]), prod(A.shape[ind:]))``, with shape
    ``A.shape[ind:] + A.shape[:ind]``."""
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    m, n = _prod(shape[:ind]), _prod(shape[ind:])
    if m != n:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {n} != {m}")
    from ._solve import inv

    return with_out(inv(A.reshape(m, n)).reshape(shape[ind:] + shape[:ind]), out,
                    "linalg.tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    """Computes the solution ``X`` of ``tensordot(A, X, X.ndim) = B``; ``dims`` are dims of
    ``A`` moved to the end first. ``X`` has shape ``A.shape[B.ndim:]``."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    xshape = tuple(A.shape[B.ndim:])
    m, n = _prod(tuple(B.shape)), _prod(xshape)
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or m != n:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(result_shape) == prod(other.shape) "
            f"with result_shape = self.shape[other.ndim:], but got {n} != {m}")
    from ._solve import solve

    X = solve(A.reshape(m, n), B.reshape(m)).reshape(xshape)
    return with_out(X, out, "linalg.tensorsolve")


def vander(x, *, N=None):
    """Generates a Vandermonde matrix: columns ``x ** 0, x ** 1, ..., x ** (N - 1)`` (``N``
    defaults to ``x.shape[-1]``), batched over the leading dims of ``x``."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .._ops.creation import ones_like
    from .._ops._join import stack

    cols = [ones_like(x)]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    return stack(cols, -1)
