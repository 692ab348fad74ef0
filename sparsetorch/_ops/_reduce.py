"""Shared machinery of the reduction modules: dim normalization, keepdim shapes, the private
reshape/expand/transpose ops that derivative formulas use (``reshape_to``, ``mT``), the ``sum``
op (declared here with its strided and sparse kernels, since formulas use it), and torch's dtype
names.

Private: the reduction and linalg modules (``reduction.py``, ``statistics.py``, ``linalg.py``,
``sparse_linalg.py``, ...) import from here; the public ``sum`` is ``reduction.py``'s. Above
``sparse_reduction.py``, whose sparse ``sum`` entries the declaration takes.
"""

import math

from .. import _dtype as D
from .._dispatch import call, defop, wrap
from .._layout import strided
from ..autograd.grad_mode import GRAD_ENABLED
from ._util import backend_of, norm_dim, norm_dims, quiet  # noqa: F401 - re-exported
from .sparse_reduction import SUM_KERNELS

S = (strided,)
_grad_enabled = GRAD_ENABLED.get


def is_float(dt):
    return dt.is_floating_point or dt.is_complex


# ---- dim handling ----

def reduce_axes(input, dim, fname):
    """``dim`` (None / int / tuple / list; empty means all) -> sorted axes tuple, or None for all."""
    nd = input.ndim
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return None
        axes = norm_dims(dim, nd, fname)
    else:
        axes = (norm_dim(dim, nd, fname),)
    if nd == 0 or len(axes) == nd:
        return None
    return axes


def keep_shape(shape, axes):
    """``shape`` with the reduced ``axes`` set to 1 (what ``keepdim=True`` gives)."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def reduced_count(shape, axes):
    n = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            n *= s
    return n


def check_nonempty(input, axes, fname, explicit_dim):
    """torch's errors for max-like reductions (no identity) over empty input."""
    shape = input.shape
    if input.numel() != 0:
        return
    if not explicit_dim:
        raise RuntimeError(
            f"{fname}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for i, s in enumerate(shape):
        if s == 0 and (axes is None or i in axes):
            raise IndexError(f"{fname}(): Expected reduction dim {i} to have non-zero size.")


# ---- private helpers used by derivative formulas ----

_reshape_op = defop(
    "_reshape_alias", {S: lambda be, x, shape, src_shape: x.reshape(shape)},
    params=("shape", "src_shape"),
    grads={"input": lambda grad, src_shape: reshape_to(grad, src_shape)},
)


def reshape_to(x, shape):
    """``x`` reshaped to ``shape`` (internal; used by formulas so it needs no shape module)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    return call(_reshape_op, (x,), (shape, tuple(x.shape)))


def keepdims(grad, shape, axes, keepdim):
    """A reduced gradient with its reduced dims restored as size 1 (broadcastable to ``shape``)."""
    if keepdim:
        return grad
    return reshape_to(grad, keep_shape(shape, axes))


def _expand_kernel(be, g, shape, axes, keepdim):
    if not keepdim and axes is not None:
        g = g.reshape(keep_shape(shape, axes))
    if math.prod(shape) >= _VIEW_FROM:
        # a read-only broadcast view (torch's expand: stride 0, nothing written); a leaf's .grad
        # never takes over a view (the engine copies it), as torch clones an expanded gradient
        return be.xp.broadcast_to(g, shape)
    out = be.xp.empty(shape, g.dtype)  # small: a fresh array a leaf's .grad takes over as it is
    out[...] = g
    return out


_VIEW_FROM = 1 << 16  # elements: below, writing the array costs less than the leaf's copy of a view


_expand_op = defop(
    "_expand_reduced", {S: _expand_kernel}, params=("shape", "axes", "keepdim"),
    grads={"input": lambda grad, axes, keepdim: sum_axes(grad, axes, keepdim)},
)


def expand_reduced(grad, shape, axes, keepdim):
    """The gradient of a sum: ``grad`` broadcast back over the reduced ``axes`` of ``shape``."""
    if grad._rg and _grad_enabled() or grad.layout is not strided:
        return call(_expand_op, (grad,), (shape, axes, keepdim))
    return wrap(_expand_kernel(backend_of(grad), grad._data, shape, axes, keepdim), grad.dtype,
                grad.device, strided)


# ---- the sum op (shared by formulas) ----

def _sum_kernel(be, x, axes, keepdim, shape):
    if x.dtype in D.REDUCED_NP:  # accumulate in float32 as torch does: no overflow midway
        return be.xp.asarray(x.sum(axes, be.xp.float32, None, keepdim).astype(x.dtype))
    return be.xp.asarray(x.sum(axes, None, None, keepdim))


_SUM = dict(
    kernels={S: _sum_kernel, **SUM_KERNELS}, params=("axes", "keepdim", "shape"),
    grads={"input": lambda grad, shape, axes, keepdim: expand_reduced(grad, shape, axes, keepdim)},
    zero_preserving=True,
)
_sum_op = defop("sum", **_SUM)  # sum(): SumBackward0
_sum_dim_op = defop("sum", node_name="SumBackward1", **_SUM)  # torch's sum(dim) overload


def sum_dtype(dt, dtype):
    """torch's accumulate dtype: ``dtype`` if given, else floats keep theirs, ints/bool -> int64."""
    if dtype is not None:
        return dtype
    return dt if (dt.is_floating_point or dt.is_complex) else D.int64


def sum_axes(x, axes, keepdim=False):
    """``sum`` over already-normalized ``axes`` (None: all), as the formulas need it."""
    dt = sum_dtype(x.dtype, None)
    return call(_sum_op, (x,), (axes, keepdim, tuple(x.shape)), dt, dt)


# ---- the matrix transpose of the last two dims (formulas of linalg and sparse_linalg) ----

_mT_op = defop("_mT", {S: lambda be, x: be.xp.swapaxes(x, -1, -2)},
               grads={"input": lambda grad: mT(grad)})


def mT(x):
    """``x`` with its last two dims swapped (internal)."""
    return call(_mT_op, (x,))
