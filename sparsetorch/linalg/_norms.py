"""Norms: ``vector_norm``, ``matrix_norm`` and ``norm`` (torch.linalg's signatures).

Composed from differentiable ops (the vector p-norm op of ``_ops/statistics.py``, ``abs``,
``sum``, ``amax``/``amin`` and ``svdvals``), so they need no derivative of their own.
"""

import math

from .._ops._reduce import reduce_axes
from .._ops._util import norm_dim, with_out
from .._ops.statistics import vector_norm as _vector_norm_op
from ._common import check_float, check_matrix

__all__ = ["matrix_norm", "norm", "vector_norm"]

_inf = math.inf


def _cast(x, dtype, fname):
    if dtype is None:
        return x
    if dtype.is_floating_point is False and not dtype.is_complex:
        raise RuntimeError(
            f"{fname}: dtype should be floating point or complex, but got {dtype.scalar_name}")
    return x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Computes a vector norm of ``x`` over ``dim`` (all elements, flattened, if None).

    ``ord``: any real number; ``inf`` / ``-inf`` are ``max(|x|)`` / ``min(|x|)``, 0 counts the
    nonzeros. Complex inputs give real results; ``dtype`` casts ``x`` before the computation.
    """
    check_float(x, "linalg.vector_norm", "x")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(
            f"linalg.vector_norm(): argument 'ord' must be a number, not {type(ord).__name__}")
    x = _cast(x, dtype, "linalg.vector_norm")
    axes = reduce_axes(x, dim, "linalg.vector_norm")
    r = _vector_norm_op(x, float(ord), axes, keepdim)
    return with_out(r, out, "linalg.vector_norm")


def _matrix_dims(A, dim, fname):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{fname}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = norm_dim(dim[0], A.ndim, fname), norm_dim(dim[1], A.ndim, fname)
    if d0 == d1:
        raise RuntimeError(f"{fname}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _restore(r, d0, d1, keepdim):
    """``r`` reduced over dims ``d0``, ``d1`` (removed); ``keepdim`` puts them back as size 1."""
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Computes a matrix norm of each matrix of ``A`` (the matrices span the two dims ``dim``).

    ``ord``: ``'fro'`` (Frobenius), ``'nuc'`` (nuclear: sum of singular values), ``inf`` /
    ``-inf`` (max / min absolute row sum), ``1`` / ``-1`` (max / min absolute column sum),
    ``2`` / ``-2`` (largest / smallest singular value).
    """
    fname = "linalg.matrix_norm"
    check_matrix(A, fname, composite=ord not in ("nuc", 2, -2), complex_grad=True)
    A = _cast(A, dtype, fname)
    d0, d1 = _matrix_dims(A, dim, fname)
    if ord == "fro":
        r = _vector_norm_op(A, 2.0, tuple(sorted((d0, d1))), keepdim)
    elif ord == "nuc" or ord in (2, -2):
        from ._decomp import svdvals

        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        if ord == "nuc":
            r = s.sum(-1)
        else:
            r = s.amax(-1) if ord == 2 else s.amin(-1)
        r = _restore(r, d0, d1, keepdim)
    elif ord in (1, -1, _inf, -_inf) and not isinstance(ord, (bool, str)):
        # 1: columns (sum over rows d0, extreme over d1); inf: rows (sum over d1, extreme over d0)
        s_dim, m_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(s_dim, keepdim=True)
        r = s.amax(m_dim, keepdim=True) if ord > 0 else s.amin(m_dim, keepdim=True)
        if not keepdim:
            r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    else:
        raise RuntimeError(f"{fname}: Order {ord} not supported.")
    return with_out(r, out, fname)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Computes a vector or matrix norm.

    With ``dim`` an int or 1-tuple (or ``dim=None`` and a 1-D input, or ``ord=None``): a vector
    norm (``ord=None`` is the 2-norm of the flattened input). With ``dim`` a 2-tuple (or
    ``dim=None`` and a 2-D input with ``ord`` given): a matrix norm (``ord=None`` is ``'fro'``).
    """
    fname = "linalg.norm"
    check_float(A, fname)
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
        if isinstance(ord, str):  # 'fro' / 'nuc' name matrix norms, as torch
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"{fname}: If dim is not specified but ord is, the input must be 1D or 2D. "
                f"Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"{fname}: Order {ord} not supported for vector norms.")
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    raise RuntimeError(f"{fname}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
