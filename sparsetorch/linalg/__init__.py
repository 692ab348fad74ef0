"""``sparsetorch.linalg``: torch.linalg's API on dense (strided) tensors.

Kernels are the backend's ``xp.linalg`` routines (batched over leading dims); derivatives are
written with sparsetorch ops (double backward works). Sparse inputs raise NotImplementedError
with the ``.to_dense()`` hint: sparsetorch never densifies silently. ``LinAlgError`` (a
RuntimeError, as torch's) reports singular / not positive-definite matrices.
"""

from ._common import LinAlgError
from ._decomp import eigh, eigvalsh, qr, svd, svdvals
from ._extras import cond, solve_triangular, tensorinv, tensorsolve, vander
from ._matrix_exp import matrix_exp
from ._norms import matrix_norm, norm, vector_norm
from ._products import cross, diagonal, matmul, multi_dot, vecdot
from ._solve import cholesky, det, inv, lstsq, matrix_power, matrix_rank, pinv, slogdet, solve

__all__ = [
    "LinAlgError",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]
