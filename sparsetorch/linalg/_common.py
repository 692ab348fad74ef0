"""Shared pieces of ``sparsetorch.linalg``: the error type, named result tuples, input checks
and the packing of several outputs into one differentiable payload."""

from .._dispatch import call, kernel_error, wrap
from .._layout import strided
from .._ops._reduce import backend_of
from .._ops.linalg import mT  # noqa: F401 - re-exported for the formula modules
from .._ops.sorting import return_type
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD_ENABLED


class LinAlgError(RuntimeError):
    """Raised when a linear-algebra routine fails numerically (a singular matrix, a matrix
    that is not positive-definite), as ``torch.linalg.LinAlgError``."""


S = (strided,)
SS = (strided, strided)

slogdet_return = return_type("linalg_slogdet", ("sign", "logabsdet"))
qr_return = return_type("linalg_qr", ("Q", "R"))
eigh_return = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
svd_return = return_type("linalg_svd", ("U", "S", "Vh"))
lstsq_return = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def np_linalg_error(be):
    """The backend's own LinAlgError class (NumPy's subclasses ValueError)."""
    return getattr(be.xp.linalg, "LinAlgError", ValueError)


def check_float(A, fname, arg="A"):
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be a Tensor, not {type(A).__name__}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{A.dtype.scalar_name}"
        )
    if A.layout is not strided:
        raise NotImplementedError(
            f"{fname}: not implemented for layout {A.layout.name}; sparsetorch never densifies "
            f"silently: call .to_dense() on the input first if a dense result is what you want."
        )


def check_matrix(A, fname, arg="A", square=False, composite=False, complex_grad=False):
    """A floating (batch of) matrix; ``square``: batches of square matrices, as torch checks.

    LAPACK-backed ops refuse half precision (as torch), and their derivative formulas are
    written for real inputs, so a complex input that requires grad is refused. ``composite``:
    the op is a composition of elementwise ops and reductions, which handle both. ``complex_grad``:
    the op's formulas are holomorphic, so the table's conjugate rule (``defop``) makes them right
    for complex inputs too (checked against torch by tests/autograd/test_complex_grad.py)."""
    check_float(A, fname, arg)
    if composite:
        pass
    elif A.dtype.name in ("float16", "bfloat16"):
        raise RuntimeError(
            f"{fname}: Low precision dtypes not supported. Got {A.dtype.scalar_name}")
    elif A.dtype.is_complex and A.requires_grad and not complex_grad:
        raise NotImplementedError(
            f"{fname}: the derivative for complex inputs is not implemented in sparsetorch; "
            f"compute it on real inputs, or detach() the input if no gradient is needed.")
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {arg} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{fname}: {arg} must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )


# ---- several outputs in one payload ----
# The op table records one result per op. A decomposition with several differentiable outputs
# (eigh, svd, qr) returns them flattened and concatenated along a last axis; the public function
# slices them out with differentiable ops, so the formula sees one gradient (zeros where an
# output was not used) and double backward works through the slices.

def pack(xp, arrays, batch):
    nb = len(batch)
    flat = []
    for a in arrays:
        size = 1
        for d in a.shape[nb:]:
            size *= d
        flat.append(a.reshape(batch + (size,)))  # not -1: a batch dim may be 0
    return xp.concatenate(flat, -1)


def packed(raw):
    """The op-table kernel of a decomposition whose ``raw(be, a, *params)`` returns a tuple."""

    def kernel(be, a, *params):
        return pack(be.xp, _run(raw, be, a, params), a.shape[:-2])

    return kernel


def _run(raw, be, a, params):
    try:
        return tuple(raw(be, a, *params))
    except np_linalg_error(be) as e:  # e.g. "SVD did not converge" (a nan input)
        raise LinAlgError(f"linalg.{raw.__name__.strip('_').split('_')[0]}: {e}") from None


def decompose(op, raw, A, params, shapes):
    """The outputs of decomposition ``op``: through the op table (one node, outputs sliced out
    of the packed result) when a gradient is recorded; else straight from ``raw`` (no copies)."""
    if A._rg and GRAD_ENABLED.get():
        return unpack(call(op, (A,), params), shapes)
    try:
        arrays = _run(raw, backend_of(A), A._data, params)
    except (ValueError, TypeError) as e:
        raise kernel_error(op, (A,), e) from None
    dt = A.dtype
    return [wrap(x if x.dtype == dt.np else x.astype(dt.np), dt, A.device, strided)
            for x in arrays]


def unpack(packed, shapes):
    """The tensors packed by ``pack``; ``shapes`` are the per-matrix trailing shapes."""
    batch = tuple(packed.shape[:-1])
    out = []
    start = 0
    for shape in shapes:
        size = 1
        for s in shape:
            size *= s
        out.append(packed.narrow(-1, start, size).reshape(batch + tuple(shape)))
        start += size
    return out
