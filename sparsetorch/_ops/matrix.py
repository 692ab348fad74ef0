"""Matrix structure: diagonal (a writable view), diag, diag_embed, trace, tril/triu (and their
in-place forms), cross, kron. Below ``linalg.py``, which uses them.
"""

from .. import _dtype as D
from .. import _autocast as _ac
from .. import _torch_warnings
from .._dispatch import call, defop
from .._layout import strided
from ._reduce import reshape_to, sum_dtype
from ._util import check_tensor, norm_dim, with_out
from ..dense.linalg import (  # noqa: F401 - the strided kernels of these ops
    _diag_view, _diag_embed_kernel,
)
from .._variants import method

S = (strided,)
SS = (strided, strided)

__all__ = [
    "diag", "diagonal", "diag_embed", "trace", "tril", "triu", "cross", "kron",
]


# ---- diagonals and triangles ----


_diagonal_op = defop(
    "diagonal", {S: lambda be, x, offset, dim1, dim2, shape: _diag_view(be, x, offset, dim1, dim2)},
    params=("offset", "dim1", "dim2", "shape"), view=True,  # shape: the input's (for backward)
    grads={"input": lambda grad, offset, dim1, dim2, shape: _embed(grad, shape, offset, dim1, dim2)},
)
_embed_op = defop(
    "diag_embed", {S: _diag_embed_kernel}, params=("shape", "offset", "dim1", "dim2"),
    grads={"input": lambda grad, offset, dim1, dim2: _diagonal(grad, offset, dim1, dim2)},
)


def _embed(x, shape, offset, d1, d2):
    return call(_embed_op, (x,), (shape, offset, d1, d2))


def _diagonal(x, offset, d1, d2):
    return call(_diagonal_op, (x,), (offset, d1, d2, tuple(x.shape)))


@method
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over (dim1, dim2) as the last dim; a view sharing memory with ``input``."""
    check_tensor(input, "diagonal")
    d1 = norm_dim(dim1, input.ndim, "diagonal")
    d2 = norm_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(input, int(offset), d1, d2)


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


@method
def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with ``input`` on the ``diagonal``-th diagonal; 2-D input: that
    diagonal as a 1-D tensor (a copy)."""
    check_tensor(input, "diag")
    if input.ndim == 1:
        n = input.shape[0] + abs(diagonal)
        r = _embed(input, (n, n), int(diagonal), 0, 1)
    elif input.ndim == 2:
        from .conversion import clone

        r = clone(_diagonal(input, int(diagonal), 0, 1))
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return with_out(r, out, "diag")


def _trace_kernel(be, x, shape):
    d = be.xp.diagonal(x)
    if x.dtype in D.REDUCED_NP:  # float32 accumulator, as sum
        return be.xp.asarray(d.sum(dtype=be.xp.float32).astype(x.dtype))
    return be.xp.asarray(d.sum())


def _trace_grad(grad, shape):
    # the diagonal's backward: ``grad`` on the main diagonal of a zero (n, m) matrix
    return _embed(grad.expand(min(shape)), shape, 0, 0, 1)


_trace_op = defop(  # one node, torch's TraceBackward0
    "trace", {S: _trace_kernel}, params=("shape",),
    grads={"input": lambda grad, shape: _trace_grad(grad, shape)},
)


@method
@_ac.policy(_ac.FP32)
def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integer input gives int64)."""
    check_tensor(input, "trace")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    dt = sum_dtype(input.dtype, None)
    return call(_trace_op, (input,), (tuple(input.shape),), dt, dt)


_tril_op = defop("tril", {S: lambda be, x, k: be.xp.tril(x, k)}, params=("diagonal",),
                 grads={"input": lambda grad, diagonal: tril(grad, diagonal)}, zero_preserving=True)
_triu_op = defop("triu", {S: lambda be, x, k: be.xp.triu(x, k)}, params=("diagonal",),
                 grads={"input": lambda grad, diagonal: triu(grad, diagonal)}, zero_preserving=True)


def _tri(op, input, diagonal, out, fname):
    check_tensor(input, fname)
    if input.ndim < 2:
        raise RuntimeError(f"{fname}: input tensor must have at least 2 dimensions")
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"{fname}(): argument 'diagonal' must be an int, not {type(diagonal).__name__}")
    # a diagonal beyond the matrix keeps everything or nothing; clip so NumPy's C long can't overflow
    m, n = input.shape[-2], input.shape[-1]
    diagonal = max(-m - 1, min(n + 1, diagonal))
    return with_out(call(op, (input,), (diagonal,)), out, fname)


@method(inplace=True)
def tril(input, diagonal=0, *, out=None):
    """Lower triangle (elements on and below the ``diagonal``-th diagonal) of the last two dims."""
    return _tri(_tril_op, input, diagonal, out, "tril")


@method(inplace=True)
def triu(input, diagonal=0, *, out=None):
    """Upper triangle (elements on and above the ``diagonal``-th diagonal) of the last two dims."""
    return _tri(_triu_op, input, diagonal, out, "triu")


# ---- cross ----

_cross_op = defop(
    "cross", {SS: lambda be, a, b, dim: be.xp.cross(a, b, axis=dim)}, inputs=("input", "other"),
    params=("dim",),
    grads={"input": lambda grad, other, dim: cross(other, grad, dim),
           "other": lambda grad, input, dim: cross(grad, input, dim)},
)


@method
def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3), broadcasting."""
    check_tensor(input, "cross")
    check_tensor(other, "cross", "other")
    if dim is None:  # torch's deprecation (once per process)
        _torch_warnings.cross_default_dim()
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


# ---- kron ----

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
