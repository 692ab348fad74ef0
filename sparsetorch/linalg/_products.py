"""Products in torch.linalg: ``matmul``, ``vecdot``, ``multi_dot``, ``cross``, ``diagonal``
(thin compositions of the core ops, with torch.linalg's argument conventions)."""

from .. import _autocast as _ac
from .._ops import linalg as _core
from .._ops import matrix as _matrix
from .._tensor import Tensor

__all__ = ["cross", "diagonal", "matmul", "multi_dot", "vecdot"]


def matmul(input, other, *, out=None):
    """Alias for :func:`sparsetorch.matmul`."""
    return _core.matmul(input, other, out=out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Alias for :func:`sparsetorch.diagonal` with defaults ``dim1=-2, dim2=-1`` (the diagonal
    of each matrix of a batch)."""
    return _matrix.diagonal(A, offset, dim1, dim2)


def cross(input, other, *, dim=-1, out=None):
    """Computes the cross product of two 3-vectors along ``dim`` (default -1; batch dims
    broadcast)."""
    return _matrix.cross(input, other, dim=dim, out=out)


@_ac.policy(_ac.LOWER)
def vecdot(x, y, *, dim=-1, out=None):
    """Computes the dot product of two batches of vectors along ``dim``: ``sum(x.conj() * y)``
    (batch dims broadcast)."""
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg.vecdot(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.name} and y of type {y.dtype.name} instead")
    r = ((x.conj() if x.dtype.is_complex else x) * y).sum(dim)
    if out is not None:
        from .._ops._util import with_out

        return with_out(r, out, "linalg.vecdot")
    return r


def multi_dot(tensors, *, out=None):
    """Efficiently multiplies two or more matrices (left to right). The first argument may be
    1-D (a row vector) and the last 1-D (a column vector); the others must be 2-D."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec = tensors[0].ndim == 1
    last_vec = tensors[-1].ndim == 1
    if first_vec:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vec:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D" if 0 < i < len(tensors) - 1
                else f"multi_dot(): {'first' if i == 0 else 'last'} tensor must be 1D or 2D but "
                f"got {t.ndim}D")
    r = tensors[0]
    for t in tensors[1:]:
        r = _core.mm(r, t)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    if out is not None:
        from .._ops._util import with_out

        return with_out(r, out, "linalg.multi_dot")
    return r
