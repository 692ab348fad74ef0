"""Decompositions: ``qr``, ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``.

Each kernel returns its outputs packed into one payload (``_common.pack``); the public function
slices them out with differentiable ops. The derivative formulas (real inputs) are the standard
ones, written with sparsetorch ops: eigh and svd assume distinct eigen/singular values, qr
assumes ``m >= n`` (reduced or square).
"""

from .._dispatch import call, defop
from ..autograd.grad_mode import GRAD_ENABLED
from .. import _autocast as _ac
from .._ops._util import with_out
from .._ops.linalg import matmul
from .._ops.matrix import diag_embed, tril
from ._common import (
    S,
    check_matrix,
    decompose,
    eigh_return,
    mT,
    packed,
    qr_return,
    svd_return,
    unpack,
)

__all__ = ["eigh", "eigvalsh", "qr", "svd", "svdvals"]


def _real_only(A, fname):
    # the real eigen/singular values share one payload with the (complex) vectors, and
    # sparsetorch has no complex -> real view op yet to take them back out
    if A.dtype.is_complex:
        raise NotImplementedError(f"{fname}: complex inputs are not supported by sparsetorch yet")


def _off_diag_inverse(E):
    """``1 / E`` off the diagonal, 0 on it (E's diagonal holds differences of equal values)."""
    from .._ops.creation import eye

    n = E.shape[-1]
    I = eye(n, dtype=E.dtype, device=E.device)
    return (1 - I) / (E + I)


# ---- eigh ----

def _eigh_raw(be, a, uplo):
    return be.xp.linalg.eigh(a, UPLO=uplo)


def _eigh_backward(grad, result, input):
    n = input.shape[-1]
    w, V = unpack(result, ((n,), (n, n)))
    gw, gV = unpack(grad, ((n,), (n, n)))
    F = _off_diag_inverse(w.unsqueeze(-2) - w.unsqueeze(-1))  # F_ij = 1 / (w_j - w_i)
    VtgV = matmul(mT(V), gV)
    # as torch: project onto the skew-symmetric matrices, so the gradient is symmetric
    inner = diag_embed(gw) + F * (0.5 * (VtgV - mT(VtgV)))
    return matmul(matmul(V, inner), mT(V))


_eigh_op = defop("linalg_eigh", {S: packed(_eigh_raw)}, params=("UPLO",),
                 grads={"input": _eigh_backward})


@_ac.policy(_ac.FP32)
def eigh(A, UPLO="L", *, out=None):
    """Computes the eigenvalues (ascending) and eigenvectors of a symmetric matrix (or batch).

    Only the ``UPLO`` ('L' or 'U') triangle of ``A`` is read. The gradient (symmetric, as
    torch's) needs distinct eigenvalues, and is well-defined only for losses that do not depend
    on the sign chosen for each eigenvector."""
    check_matrix(A, "linalg.eigh", square=True)
    _real_only(A, "linalg.eigh")
    if out is not None:
        raise TypeError("linalg.eigh(): out= is not supported for this multi-output op; assign the "
                        "returned tuple instead")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    n = A.shape[-1]
    w, V = decompose(_eigh_op, _eigh_raw, A, (UPLO,), ((n,), (n, n)))
    return eigh_return((w, V))


@_ac.policy(_ac.FP32)
def eigvalsh(A, UPLO="L", *, out=None):
    """Computes the eigenvalues (ascending) of a symmetric matrix (or batch)."""
    check_matrix(A, "linalg.eigvalsh", square=True)
    return with_out(eigh(A, UPLO)[0], out, "linalg.eigvalsh")


# ---- svd ----

def _svd_raw(be, a, full):
    return be.xp.linalg.svd(a, full_matrices=full)


def _svd_shapes(m, n, full):
    k = min(m, n)
    return ((m, m if full else k), (k,), (n if full else k, n))


def _svd_backward(grad, result, input, full_matrices):
    m, n = input.shape[-2], input.shape[-1]
    k = min(m, n)
    shapes = _svd_shapes(m, n, full_matrices)
    U, s, Vh = unpack(result, shapes)
    gU, gs, gVh = unpack(grad, shapes)
    if full_matrices:  # as torch: the extra columns/rows of U / Vh get no gradient
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    V, gV = mT(Vh), mT(gVh)
    UtgU = matmul(mT(U), gU)
    VtgV = matmul(Vh, gV)
    UtgU = UtgU - mT(UtgU)
    VtgV = VtgV - mT(VtgV)
    s2 = s * s
    F = _off_diag_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1))
    inner = (UtgU * s.unsqueeze(-2) + s.unsqueeze(-1) * VtgV) * F + diag_embed(gs)
    gA = matmul(U, inner)
    if m > k:
        gUs = gU / s.unsqueeze(-2)
        gA = gA + gUs - matmul(U, matmul(mT(U), gUs))
    gA = matmul(gA, Vh)
    if n > k:
        gVs = gV / s.unsqueeze(-2)
        gA = gA + matmul(U, mT(gVs - matmul(V, matmul(Vh, gVs))))
    return gA


_svd_op = defop("linalg_svd", {S: packed(_svd_raw)}, params=("full_matrices",),
                grads={"input": _svd_backward})


@_ac.policy(_ac.FP32)
def svd(A, full_matrices=True, *, driver=None, out=None):
    """Computes the singular value decomposition ``A = U diag(S) Vh`` (``S`` descending).

    ``full_matrices=False`` gives the reduced factors (``k = min(m, n)`` columns of ``U``).
    The gradient assumes distinct nonzero singular values."""
    check_matrix(A, "linalg.svd")
    _real_only(A, "linalg.svd")
    if out is not None:
        raise TypeError("linalg.svd(): out= is not supported for this multi-output op; assign the "
                        "returned tuple instead")
    m, n = A.shape[-2], A.shape[-1]
    full = bool(full_matrices)
    U, s, Vh = decompose(_svd_op, _svd_raw, A, (full,), _svd_shapes(m, n, full))
    return svd_return((U, s, Vh))


# complex input: the singular values are real, so they are their own op (the packed svd keeps
# one dtype for U, S and Vh); its derivative U diag(gS) Vh is torch's, with U and Vh from a
# non-differentiable op (first order, as torch's svdvals backward for complex input needs)
_svd_uv_op = defop("linalg_svd_uv", {S: packed(lambda be, a: be.xp.linalg.svd(
    a, full_matrices=False)[::2])})


def _svdvals_complex_backward(grad, input):
    if GRAD_ENABLED.get():  # create_graph: U and Vh below are constants, the result would be wrong
        raise NotImplementedError("linalg.svdvals: the second derivative for complex inputs is not "
                                  "implemented in sparsetorch (create_graph=True); use real inputs")
    m, n = input.shape[-2], input.shape[-1]
    k = min(m, n)
    U, Vh = unpack(call(_svd_uv_op, (input.detach(),)), ((m, k), (k, n)))
    return matmul(U * grad.unsqueeze(-2).to(input.dtype), Vh)


_svdvals_complex_op = defop(
    "linalg_svdvals", {S: lambda be, a: be.xp.linalg.svd(a, compute_uv=False)},
    grads={"input": _svdvals_complex_backward}, holomorphic=False)


@_ac.policy(_ac.FP32)
def svdvals(A, *, driver=None, out=None):
    """Computes the singular values of a matrix (or batch), in descending order (real, also for
    a complex input)."""
    check_matrix(A, "linalg.svdvals", complex_grad=True)
    if A.dtype.is_complex:
        return with_out(call(_svdvals_complex_op, (A,), (), A.dtype.to_real()), out,
                        "linalg.svdvals")
    return with_out(svd(A, full_matrices=False)[1], out, "linalg.svdvals")


# ---- qr ----

def _qr_raw(be, a, mode):
    return be.xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")


def _qr_shapes(m, n, mode):
    k = min(m, n)
    return ((m, m if mode == "complete" else k), (m if mode == "complete" else k, n))


def _qr_backward(grad, result, input, mode):
    m, n = input.shape[-2], input.shape[-1]
    if m < n or (mode == "complete" and m > n):
        raise RuntimeError(
            "linalg.qr: The derivative of linalg.qr is implemented only for inputs with "
            "m >= n and mode='reduced' (or square inputs). Use mode='reduced'.")
    Q, R = unpack(result, _qr_shapes(m, n, mode))
    gQ, gR = unpack(grad, _qr_shapes(m, n, mode))
    M = matmul(R, mT(gR)) - matmul(mT(gQ), Q)
    copyltu = tril(M, -1) + mT(tril(M, -1)) + diag_embed(M.diagonal(0, -2, -1))
    b = gQ + matmul(Q, copyltu)
    return matmul(b, mT(R.inverse()))  # linalg.inv (a method: _solve.py imports this module)


_qr_op = defop("linalg_qr", {S: packed(_qr_raw)}, params=("mode",), grads={"input": _qr_backward})


@_ac.policy(_ac.FP32)
def qr(A, mode="reduced", *, out=None):
    """Computes the QR decomposition ``A = Q R`` (``Q`` orthonormal columns, ``R`` upper
    triangular). ``mode``: 'reduced' (default), 'complete' or 'r' (only ``R``; ``Q`` empty)."""
    check_matrix(A, "linalg.qr")
    if out is not None:
        raise TypeError("linalg.qr(): out= is not supported for this multi-output op; assign the "
                        "returned tuple instead")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    m, n = A.shape[-2], A.shape[-1]
    Q, R = decompose(_qr_op, _qr_raw, A, (mode,), _qr_shapes(m, n, mode))
    if mode == "r":
        from .._ops.creation import empty

        Q = empty(0, dtype=A.dtype)
    return qr_return((Q, R))
