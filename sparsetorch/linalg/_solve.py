"""Inverses, determinants and solvers: ``inv``, ``det``, ``slogdet``, ``solve``,
``matrix_power``, ``pinv``, ``cholesky``, ``matrix_rank``, ``lstsq``.

Each op is declared once with its strided kernel (``be.xp.linalg``, which broadcasts over
leading batch dims) and its derivative written with sparsetorch ops, so double backward works.
Sparse inputs are refused by ``check_matrix`` with the ``.to_dense()`` hint.
"""

from .._dispatch import call, defop
from .. import _autocast as _ac
from .._ops._util import with_out
from .._ops.linalg import matmul
from .._ops.matrix import diag_embed, diagonal, tril
from ._common import (
    SS,
    LinAlgError,
    S,
    check_matrix,
    lstsq_return,
    mT,
    np_linalg_error,
    slogdet_return,
)

__all__ = [
    "cholesky",
    "det",
    "inv",
    "lstsq",
    "matrix_power",
    "matrix_rank",
    "pinv",
    "slogdet",
    "solve",
]


def _mat(x):
    """A (batch of) scalars as (batch of) 1x1 matrices, for broadcasting against matrices."""
    return x.unsqueeze(-1).unsqueeze(-1)


# ---- inv, det, slogdet ----

def _inv_kernel(be, a):
    try:
        return be.xp.linalg.inv(a)
    except np_linalg_error(be):
        raise LinAlgError(
            "linalg.inv: The diagonal element is zero, the inversion could not be completed "
            "because the input matrix is singular.") from None


_inv_op = defop("linalg_inv", {S: _inv_kernel}, inputs=("A",),
                grads={"A": lambda grad, result: -matmul(matmul(mT(result), grad), mT(result))})


@_ac.policy(_ac.FP32)
def inv(A, *, out=None):
    """Computes the inverse of a square matrix (or of each matrix of a batch).

    Raises ``LinAlgError`` if a matrix is not invertible."""
    check_matrix(A, "linalg.inv", square=True, complex_grad=True)
    return with_out(call(_inv_op, (A,)), out, "linalg.inv")


def _cofactor(A):
    """The cofactor matrix ``adj(A)^T`` of a (possibly singular) square A, through its SVD
    ``A = U diag(s) Vh``: ``det(U) det(Vh) U diag(prod_{j != i} s_j) Vh``."""
    from .._ops.creation import eye
    from ._decomp import svd

    U, s, Vh = svd(A)
    eye_ = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    others = (s.unsqueeze(-2) * (1 - eye_) + eye_).prod(-1)  # s_i replaced by 1 in row i
    return _mat(det(U) * det(Vh)) * matmul(U * others.unsqueeze(-2), Vh)


def _det_backward(grad, result, A):
    # G * det * A^-T where A is invertible; the cofactor form (G * adj(A)^T) where it is not
    if not bool((result == 0).any()):
        try:
            return _mat(grad * result) * mT(inv(A))
        except LinAlgError:
            pass
    return _mat(grad) * _cofactor(A)


_det_op = defop("linalg_det", {S: lambda be, a: be.xp.asarray(be.xp.linalg.det(a))},
                inputs=("A",), grads={"A": _det_backward})


def det(A, *, out=None):
    """Computes the determinant of a square matrix (or of each matrix of a batch)."""
    check_matrix(A, "linalg.det", square=True, complex_grad=True)
    return with_out(call(_det_op, (A,)), out, "linalg.det")


def _sign_backward(grad, result, A):
    """The sign of a complex determinant moves with its phase: d sign = i sign Im tr(A^-1 dA);
    a real sign is piecewise constant (zero gradient, as torch)."""
    if not A.dtype.is_complex:
        return (_mat(grad) * A) * 0
    return _mat((result.conj() * grad).imag * 1j) * mT(inv(A)).conj()


# not holomorphic (|det|, a phase): torch's formulas, with A^-H for complex A
_sign_op = defop("linalg_slogdet_sign",
                 {S: lambda be, a: be.xp.asarray(be.xp.linalg.slogdet(a)[0])}, inputs=("A",),
                 grads={"A": _sign_backward}, holomorphic=False)
_logabsdet_op = defop("linalg_slogdet", {S: lambda be, a: be.xp.asarray(be.xp.linalg.slogdet(a)[1])},
                      inputs=("A",), grads={"A": lambda grad, A: _mat(grad) * mT(inv(A)).conj()},
                      holomorphic=False)


def slogdet(A, *, out=None):
    """Computes the sign and natural logarithm of the absolute value of the determinant.

    Returns the named tuple ``(sign, logabsdet)``; a singular matrix gives ``(0, -inf)``. Both are
    differentiable: a real sign is piecewise constant (zero gradient), a complex one follows the
    determinant's phase."""
    check_matrix(A, "linalg.slogdet", square=True, complex_grad=True)
    if out is not None:
        raise TypeError("linalg.slogdet(): out= is not supported; assign the results instead")
    return slogdet_return((call(_sign_op, (A,)), call(_logabsdet_op, (A,), (), A.dtype.to_real())))


# ---- solve ----

def _solve_kernel(be, a, b):
    try:
        return be.xp.linalg.solve(a, b)
    except np_linalg_error(be):
        raise LinAlgError(
            "torch.linalg.solve: The solver failed because the input matrix is singular.") from None


def _solve_A_backward(grad, result, A):
    gB = _solve(mT(A), grad)
    return -matmul(gB, mT(result))


_solve_op = defop("linalg_solve", {SS: _solve_kernel}, inputs=("A", "B"),
                  grads={"A": _solve_A_backward, "B": lambda grad, A: _solve(mT(A), grad)})


def _solve(A, B):
    return call(_solve_op, (A, B))


@_ac.policy(_ac.FP32)
def solve(A, B, *, left=True, out=None):
    """Computes the solution ``X`` of ``A X = B`` (``left=False``: ``X A = B``) for square,
    invertible ``A``. ``B`` is a (batch of) vector(s) when it has one dim fewer than ``A`` and
    the matching shape; batch dims broadcast. Raises ``LinAlgError`` for a singular ``A``."""
    fname = "linalg.solve"
    check_matrix(A, fname, square=True, complex_grad=True)
    check_matrix(B, fname, "B", complex_grad=True) if B.ndim >= 2 else None
    if A.dtype is not B.dtype:
        
        raise RuntimeError(
            f"{fname}: Expected A and B to have the same dtype, but found A of type "
            f"{A.dtype.scalar_name} and B of type {B.dtype.scalar_name} instead.")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        if not left:
            raise RuntimeError(f"{fname}: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        B = B.unsqueeze(-1)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            f"{fname}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]})")
    X = _solve(A, B) if left else mT(_solve(mT(A), mT(B)))
    if vector:
        X = X.squeeze(-1)
    return with_out(X, out, fname)


# ---- matrix_power ----

def matrix_power(A, n, *, out=None):
    """Computes the ``n``-th power of a square matrix for an integer ``n`` (``n < 0``: the
    power of the inverse; ``n = 0``: the identity), by repeated squaring."""
    fname = "linalg.matrix_power"
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fname}(): argument 'n' must be int, not {type(n).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        from .._ops.creation import eye, zeros_like

        # the identity whatever A holds (inf/nan included); like torch's, not connected to A
        r = zeros_like(A) + eye(A.shape[-1], dtype=A.dtype, device=A.device)
    else:
        base = inv(A) if n < 0 else A
        n = abs(n)
        r = None
        while n:
            if n & 1:
                r = base if r is None else matmul(r, base)
            n >>= 1
            if n:
                base = matmul(base, base)
    return with_out(r, out, fname)


# ---- pinv ----

def _pinv_kernel(be, a, atol, rtol):
    xp = be.xp
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    tol = xp.maximum(atol, rtol * smax)
    s_inv = xp.where(s > tol, 1 / xp.where(s > tol, s, 1), 0)  # no division by zero
    v, uh = xp.swapaxes(vh, -1, -2), xp.swapaxes(u, -1, -2)
    if a.dtype.kind == "c":  # V S^-1 U^H
        v, uh = v.conj(), uh.conj()
    return xp.matmul(v * s_inv[..., None, :], uh)


def _pinv_backward(grad, result, A):
    # d(A+) for constant rank: -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P; its
    # adjoint, with the identities multiplied out so no eye() is needed:
    # (complex A: the adjoint takes conjugate transposes, torch's convention, so not holomorphic)
    P, G = result, grad
    Pt, Gt = mT(P).conj(), mT(G).conj()
    GtPPt = matmul(matmul(Gt, P), Pt)
    PtPGt = matmul(matmul(Pt, P), Gt)
    return (-matmul(matmul(Pt, G), Pt) + GtPPt - matmul(matmul(A, P), GtPPt)
            + PtPGt - matmul(matmul(PtPGt, P), A))


_pinv_op = defop("linalg_pinv", {S: _pinv_kernel}, inputs=("A",), params=("atol", "rtol"),
                 grads={"A": _pinv_backward}, holomorphic=False)


def _tolerances(A, atol, rtol):
    for name, v in (("atol", atol), ("rtol", rtol)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TypeError(f"linalg: argument '{name}' must be a float or None (tensor "
                            f"tolerances are not supported), not {type(v).__name__}")
    if rtol is None:
        # torch: rtol defaults to 0 when a positive atol is given, else to eps * max(m, n)
        rtol = 0.0 if atol is not None and atol > 0 else _eps(A) * max(A.shape[-2], A.shape[-1])
    return float(atol or 0.0), float(rtol)


def _eps(A):
    from .._dtype import finfo

    return finfo(A.dtype.to_real()).eps


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Computes the pseudoinverse (Moore-Penrose inverse) of a matrix, through its SVD.

    Singular values below ``max(atol, rtol * sigma_max)`` are treated as zero (default ``rtol``:
    ``eps * max(m, n)``). The derivative assumes the rank is constant near ``A``."""
    check_matrix(A, "linalg.pinv", complex_grad=True)
    atol, rtol = _tolerances(A, atol, rtol)
    return with_out(call(_pinv_op, (A,), (atol, rtol)), out, "linalg.pinv")


@_ac.policy(_ac.FP32)
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Computes the numerical rank of a matrix: the number of singular values above
    ``max(atol, rtol * sigma_max)``. Returns an int64 tensor."""
    check_matrix(A, "linalg.matrix_rank")
    from .._dtype import int64
    from ._decomp import svdvals

    atol, rtol = _tolerances(A, atol, rtol)
    s = svdvals(A.detach())
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    tol = (smax * rtol).clamp(min=atol)
    r = (s > tol).sum(-1).to(int64)
    return with_out(r, out, "linalg.matrix_rank")


@_ac.policy(_ac.FP32)
def lstsq(A, B, rcond=None, *, driver=None):
    """Computes a least-squares solution of ``A X = B`` (through the pseudoinverse).

    Returns ``(solution, residuals, rank, singular_values)`` as torch's default CPU driver
    ``'gelsy'`` does: ``residuals`` and ``singular_values`` are empty."""
    fname = "linalg.lstsq"
    check_matrix(A, fname)
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{fname}: input.size(-2) should match other.size(-2)")
    X = matmul(pinv(A, rtol=rcond), Bm)
    if vector:
        X = X.squeeze(-1)
    from .._ops.creation import empty

    return lstsq_return((X, empty(0, dtype=A.dtype), matrix_rank(A, rtol=rcond),
                         empty(0, dtype=A.dtype)))


# ---- cholesky ----

def _cholesky_kernel(be, a):
    try:
        return be.xp.linalg.cholesky(a)
    except np_linalg_error(be):
        raise LinAlgError(
            "linalg.cholesky: The factorization could not be completed because the input is not "
            "positive-definite.") from None


def _phi(X):
    """The lower triangle of ``X`` with its diagonal halved."""
    return tril(X) - 0.5 * diag_embed(diagonal(X, 0, -2, -1))


def _cholesky_backward(grad, result):
    L = result
    Linv = inv(L)
    S_ = matmul(matmul(mT(Linv), _phi(matmul(mT(L), grad))), Linv)
    return 0.5 * (S_ + mT(S_))


_cholesky_op = defop("linalg_cholesky", {S: _cholesky_kernel}, inputs=("A",),
                     grads={"A": _cholesky_backward})


@_ac.policy(_ac.FP32)
def cholesky(A, *, upper=False, out=None):
    """Computes the Cholesky factor ``L`` (``A = L L^T``) of a symmetric positive-definite
    matrix, or ``U = L^T`` with ``upper=True``. Only the lower triangle of ``A`` is read.
    Raises ``LinAlgError`` if a matrix is not positive-definite."""
    check_matrix(A, "linalg.cholesky", square=True)
    L = call(_cholesky_op, (A,))
    return with_out(mT(L).contiguous() if upper else L, out, "linalg.cholesky")
