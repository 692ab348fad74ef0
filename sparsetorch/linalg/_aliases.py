"""torch's top-level linear-algebra names (``torch.inverse``, ``torch.det``, ``torch.svd``, ...)
and the targets of the matching Tensor methods, in terms of ``sparsetorch.linalg``."""

from .._ops.sorting import return_type
from .. import _autocast as _ac
from . import _decomp, _solve
from ._matrix_exp import matrix_exp  # torch.matrix_exp is linalg.matrix_exp

__all__ = [
    "cholesky",
    "det",
    "inverse",
    "logdet",
    "matrix_exp",
    "matrix_power",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
]

_slogdet_return = return_type("slogdet", ("sign", "logabsdet"))
_qr_return = return_type("qr", ("Q", "R"))
_svd_return = return_type("svd", ("U", "S", "V"))


def inverse(input, *, out=None):
    """Alias for :func:`sparsetorch.linalg.inv`."""
    return _solve.inv(input, out=out)


def det(input):
    """Alias for :func:`sparsetorch.linalg.det`."""
    return _solve.det(input)


def slogdet(input):
    """Alias for :func:`sparsetorch.linalg.slogdet`."""
    return _slogdet_return(_solve.slogdet(input))


def logdet(input):
    """Computes the log determinant of a square matrix (or batch): ``nan`` for a negative
    determinant, ``-inf`` for a singular matrix."""
    sign, logabsdet = _solve.slogdet(input)
    return logabsdet + sign.log()  # log(-1) = nan, log(0) = -inf; a real sign has zero gradient


@_ac.policy(_ac.FP32)
def pinverse(input, rcond=1e-15):
    """Computes the pseudoinverse; singular values below ``rcond * sigma_max`` count as 0."""
    return _solve.pinv(input, rtol=rcond)


def matrix_power(input, n):
    """Alias for :func:`sparsetorch.linalg.matrix_power`."""
    return _solve.matrix_power(input, n)


def cholesky(input, upper=False, *, out=None):
    """Computes the Cholesky factor (``upper=True``: the upper one) of a symmetric
    positive-definite matrix (deprecated in torch in favour of ``linalg.cholesky``)."""
    return _solve.cholesky(input, upper=upper, out=out)


def qr(input, some=True, *, out=None):
    """Computes the QR decomposition; ``some=False`` gives the complete one."""
    return _qr_return(_decomp.qr(input, "reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True, *, out=None):
    """Computes the SVD ``input = U diag(S) V^T``: note ``V``, not ``Vh`` (torch.svd's
    convention). ``some=False`` gives full ``U`` and ``V``; ``compute_uv=False`` returns
    zero-filled ``U`` (m x m) and ``V`` (n x n), as torch."""
    if not compute_uv:
        from .._ops.creation import zeros

        S = _decomp.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return _svd_return((zeros(batch + (m, m), dtype=input.dtype),
                            S, zeros(batch + (n, n), dtype=input.dtype)))
    U, S, Vh = _decomp.svd(input, full_matrices=not some)
    return _svd_return((U, S, Vh.mT))
