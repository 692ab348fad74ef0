"""index_select/index_add/index_copy/index_fill and take/take_along_dim of the indexing family
(above :mod:`.indexing` and :mod:`._scatter`, whose helpers it uses). Gradients: index_select <-> index_add; index_copy and
index_fill zero the written slices of the input's gradient."""

from .. import _autocast as _ac
from .. import _dispatch
from .. import _dtype as D
from .._backend import CPU
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, composite, defop
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from ..autograd import profiler as _profiler
from ..autograd.grad_mode import GRAD_ENABLED
from . import _sparse_slicing as _sps
from ._scatter import _check_bounds, _check_index, gather
from ._util import check_tensor, norm_dim, with_out
from .indexing import _value_for
from ..dense.indexing import (  # noqa: F401 - the strided kernels of these ops
    _along, _index_select_kernel, _index_add_kernel, _index_copy_kernel, _index_fill_kernel,
)
from .._variants import method

__all__ = [
    "index_add", "index_copy", "index_fill", "index_select", "take", "take_along_dim",
]

S2 = (strided, strided)
S3 = (strided, strided, strided)
_np = CPU.xp
_min = _np.minimum.reduce
_grad_enabled = GRAD_ENABLED.get


# ---- index_select / index_add / index_copy / index_fill ----


def _index_select_backward(grad, index, dim, in_shape):
    if not in_shape:
        return grad
    if grad.layout is strided and grad.device is CPU_DEVICE and index.layout is strided \
            and not _grad_enabled() and _profiler.ACTIVE is None:
        # a plain backward on the CPU: into zeros on the payloads, one assignment where the
        # (validated, non-negative) indices are distinct, np.add.at where some repeat (issue 14)
        idx = index._data.reshape(-1)
        g = grad._data
        out = _np.zeros(in_shape, g.dtype)
        where = (slice(None),) * dim + (idx,)
        n = idx.size
        # distinct ids: a set of a short list (~0.3 us) is faster than bincount + max (~1 us)
        if n < 2 or (len(set(idx.tolist())) == n if n <= 64
                     else _np.bincount(idx, minlength=in_shape[dim]).max() < 2):
            out[where] = g
        else:
            _np.add.at(out, where, g)
        return _dispatch.wrap(out, grad.dtype, CPU_DEVICE, strided)
    return grad.new_zeros(in_shape).index_add(dim, index, grad)


_index_select_op = defop(
    "index_select",
    {S2: _index_select_kernel, (sparse_coo, strided): composite(_sps.coo_index_select),
     (sparse_csr, strided): composite(_sps.csr_index_select)},
    inputs=("input", "index"), params=("dim", "in_shape"),
    grads={"input": _index_select_backward}, zero_preserving=True,
)


def _vector_index(index, fname, dtypes, message, error=RuntimeError):
    _check_index(index, fname, dtypes, message, error)
    if index.ndim > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector")


@method
def index_select(input, dim, index, *, out=None):
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``. COO and CSR
    input give a result of the same layout."""
    if out is None and index.__class__ is Tensor and isinstance(input, Tensor) \
            and _profiler.ACTIVE is None:
        t = _lean_index_select(input, dim, index)
        if t is not None:
            return t
    check_tensor(input, "index_select")
    _vector_index(index, "index_select", (D.int64, D.int32),
                  "index_select(): Expected dtype int32 or int64 for index")
    d = norm_dim(dim, input.ndim, "index_select")
    if input.ndim == 0 and index.numel() != 1:
        raise IndexError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    size = input.shape[d] if input.ndim else 1
    idx = index._data
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError("index out of range in self")
    return with_out(call(_index_select_op, (input, index), (d, tuple(input.shape))), out, "index_select")


def _lean_index_select(input, dim, index):
    """index_select's fast path (issue 14): a strided CPU input of >= 1 dim, a 1-D int64 CPU
    index inside ``[0, size)`` (``take`` refuses larger ones), an int ``dim``; None sends the call
    down the checked path (and its errors)."""
    if input.layout is not strided or index.layout is not strided or index.dtype is not D.int64 \
            or input.device is not CPU_DEVICE or index.device is not CPU_DEVICE \
            or dim.__class__ is not int:
        return None
    x = input._data
    idx = index._data
    nd = x.ndim
    n = idx.size
    # (no negative ids: a short index's list min, ~0.3 us, skips the ufunc reduction's setup)
    if idx.ndim != 1 or not nd or not -nd <= dim < nd \
            or (n and (min(idx.tolist()) if n <= 64 else _min(idx)) < 0):
        return None
    d = dim + nd if dim < 0 else dim
    try:
        data = x.take(idx, axis=d)
    except IndexError:
        return None
    t = _dispatch.wrap(data, input.dtype, CPU_DEVICE, strided)
    if input._rg:
        _dispatch.record_if_grad(_index_select_op, t, (input, index), (d, x.shape))
    return t


_index_add_op = defop(
    "index_add", {S3: _index_add_kernel}, inputs=("input", "index", "source"), params=("dim", "alpha"),
    grads={"input": lambda grad: grad,
           "source": lambda grad, index, dim, alpha: _index_add_source_backward(grad, index, dim, alpha)},
)


def _index_add_source_backward(grad, index, dim, alpha):
    g = grad.index_select(dim, index) if grad.ndim else grad
    return g if alpha == 1 else g * alpha


def _source_checks(input, d, index, source, fname, same_dtype_msg):
    check_tensor(source, fname, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(same_dtype_msg.format(input.dtype.name, source.dtype.name))
    n = index.numel()
    if source.ndim and input.ndim and n != source.shape[d]:
        raise RuntimeError(
            f"{fname}(): Number of indices ({n}) should be equal to source.size(dim): "
            f"({source.shape[d]}), for dim: {d}"
        )
    if source.ndim and any(source.shape[k] != input.shape[k] for k in range(input.ndim) if k != d) \
            or (source.ndim and source.ndim != input.ndim):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}"
        )


@method(inplace=True)
def index_add(input, dim, index, source, *, alpha=1, out=None):
    """A copy of ``input`` with ``alpha * source`` added at the positions ``index`` along ``dim``."""
    check_tensor(input, "index_add")
    _vector_index(index, "index_add_", (D.int64, D.int32),
                  "index_add_(): Expected dtype int32/int64 for index but got: {}")
    d = norm_dim(dim, input.ndim, "index_add")
    _source_checks(input, d, index, source, "index_add_",
                   "index_add_(): self ({}) and source ({}) must have the same scalar type")
    _check_bounds(index._data, input.shape[d] if input.ndim else 1, d)
    r = call(_index_add_op, (input, index, source), (d, alpha))
    return with_out(r, out, "index_add")


_index_copy_op = defop(
    "index_copy", {S3: _index_copy_kernel}, inputs=("input", "index", "source"), params=("dim",),
    grads={"input": lambda grad, index, dim: grad.index_fill(dim, index, 0),
           "source": lambda grad, index, dim: grad.index_select(dim, index) if grad.ndim else grad},
)


@method(inplace=True)
@_ac.policy(_ac.PROMOTE)
def index_copy(input, dim, index, source, *, out=None):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` replaced by ``source``'s."""
    check_tensor(input, "index_copy")
    _vector_index(index, "index_copy_", (D.int64,), "index_copy_(): Expected a long tensor for index, but got {}")
    d = norm_dim(dim, input.ndim, "index_copy")
    _source_checks(input, d, index, source, "index_copy_",
                   "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}")
    _check_bounds(index._data, input.shape[d] if input.ndim else 1, d, error=IndexError, prefix="index_copy_(): ")
    return with_out(call(_index_copy_op, (input, index, source), (d,)), out, "index_copy")


def _index_fill_value_backward(grad, index, dim):
    xp = _dispatch.get_backend(index.device).xp
    uniq = _dispatch.wrap(xp.unique(index._data.reshape(-1)), index.dtype, index.device, strided)
    return (grad.index_select(dim, uniq) if grad.ndim else grad).sum()


_index_fill_op = defop(
    "index_fill", {S2: _index_fill_kernel}, inputs=("input", "index"), params=("dim", "value"),
    grads={"input": lambda grad, index, dim: grad.index_fill(dim, index, 0)},
)
_index_fill_t_op = defop(
    "index_fill", {S3: lambda be, x, idx, v, dim: _index_fill_kernel(be, x, idx, dim, v.astype(x.dtype))},
    inputs=("input", "index", "value"), params=("dim",),
    grads={"input": lambda grad, index, dim: grad.index_fill(dim, index, 0),
           "value": _index_fill_value_backward},
)


@method(inplace=True)
def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` (a number or 0-d tensor) at ``index`` along ``dim``."""
    check_tensor(input, "index_fill")
    _vector_index(index, "index_fill_", (D.int64,), "index_fill_(): Expected dtype int64 for index.", IndexError)
    d = norm_dim(dim, input.ndim, "index_fill")
    _check_bounds(index._data, input.shape[d] if input.ndim else 1, d, negative=True, error=IndexError)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        return call(_index_fill_t_op, (input, index, value), (d,), input.dtype)
    return call(_index_fill_op, (input, index), (d, _value_for(input, value, "index_fill")))


# ---- take / take_along_dim (composites) ----

@method
def take(input, index):
    """The elements of ``input`` (as if flattened) at ``index``; the result has ``index``'s shape."""
    check_tensor(input, "take")
    check_tensor(index, "take", "index")
    if index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.name}")
    n = input.numel()
    idx = index._data
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if hi >= n or lo < -n:
            raise IndexError(
                f"out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} elements."
            )
    xp = _dispatch.get_backend(index.device).xp
    flat = _dispatch.wrap(xp.where(idx < 0, idx + n, idx).reshape(-1), D.int64, index.device, strided)
    return index_select(input.reshape(-1), 0, flat).reshape(tuple(index.shape))


@method
def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of ``input`` at ``indices`` along ``dim`` (other dims broadcast); flattened if dim is None."""
    check_tensor(input, "take_along_dim")
    check_tensor(indices, "take_along_dim", "indices")
    if indices.dtype is not D.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype.name}"
        )
    if dim is None:
        return with_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out, "take_along_dim")
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    d = norm_dim(dim, input.ndim, "take_along_dim")
    from ._join import broadcast_shapes

    si, sx = list(indices.shape), list(input.shape)
    si[d] = sx[d] = 1
    b = list(broadcast_shapes(tuple(si), tuple(sx)))
    bx, bi = list(b), list(b)
    bx[d], bi[d] = input.shape[d], indices.shape[d]
    return with_out(gather(input.expand(bx), d, indices.expand(bi)), out, "take_along_dim")
