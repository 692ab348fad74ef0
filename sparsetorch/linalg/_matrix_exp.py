"""``matrix_exp``: the matrix exponential, by scaling and squaring of a Taylor polynomial.

The kernel uses only ``xp.matmul`` (no SciPy), so it runs on every backend and batches. The
derivative is the classic block-matrix identity: the gradient of ``<G, exp(A)>`` is the upper
right block of ``exp([[A^T, G], [0, A^T]])``; it is computed with ``matrix_exp`` itself, so
higher derivatives work.
"""

import math

from .._dispatch import call, defop
from .._ops._util import with_out
from ._common import S, check_matrix, mT

__all__ = ["matrix_exp"]

_TAYLOR_DEGREE = 18  # with ||A / 2^s||_1 <= 1/2 the remainder is below 0.5^19 / 19! ~ 1e-23


def _expm_kernel(be, a):
    xp = be.xp
    n = a.shape[-1]
    eye = xp.eye(n, dtype=a.dtype)
    if a.size == 0:
        return xp.broadcast_to(eye, a.shape).copy()
    norm = float(xp.abs(a).sum(-2).max())  # the largest 1-norm of the batch
    s = max(0, math.ceil(math.log2(norm / 0.5))) if math.isfinite(norm) and norm > 0.5 else 0
    x = a / (2.0 ** s)
    r = eye
    for k in range(_TAYLOR_DEGREE, 0, -1):  # Horner: I + x (I + x/2 (I + x/3 (...)))
        r = eye + xp.matmul(x, r) / k
    for _ in range(s):
        r = xp.matmul(r, r)
    return r


def _expm_backward(grad, A):
    from .._ops._join import cat
    from .._ops.creation import zeros_like

    n = A.shape[-1]
    At = mT(A)
    big = cat([cat([At, grad], -1), cat([zeros_like(At), At], -1)], -2)
    return matrix_exp(big).narrow(-2, 0, n).narrow(-1, n, n)


_expm_op = defop("linalg_matrix_exp", {S: _expm_kernel}, inputs=("A",),
                 grads={"A": _expm_backward})


def matrix_exp(A, *, out=None):
    """Computes the matrix exponential ``sum_k A^k / k!`` of a square matrix (or batch)."""
    check_matrix(A, "linalg.matrix_exp", square=True, complex_grad=True)
    return with_out(call(_expm_op, (A,)), out, "linalg.matrix_exp")
