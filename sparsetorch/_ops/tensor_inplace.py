"""In-place Tensor methods of issue 15: ``fill_diagonal_`` and ``set_``.

``fill_diagonal_`` is derived through ``_dispatch.inplace`` from a differentiable ``masked_fill``
(the filled entries get a zero gradient, as torch's CopySlices does).

``set_`` makes ``self`` share ``source``'s payload (sparsetorch tensors have no separate
storage object: a Tensor's elements are its storage). Forms: ``set_()`` (empty), ``set_(source)``
and ``set_(source, storage_offset, size, stride=None)``, the last reading ``source``'s contiguous
elements as the storage. Storage sources are refused with a clear error. As in torch, the
derivative of ``set_`` is not implemented: backward through it raises.
"""

import numbers

from .. import _dtype as D
from .. import _dispatch
from .._backend import get_backend
from .._dispatch import call, defop, inplace
from .._layout import strided
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD_ENABLED
from .._variants import method
from ._data import checked_fill_value
from ._util import check_tensor

__all__ = []  # Tensor methods only (torch has no torch.fill_diagonal_ / torch.set_)

_grad_enabled = GRAD_ENABLED.get


# ---- fill_diagonal_ ----

def _diagonal_mask(input, wrap):
    """A bool tensor of ``input``'s shape, True on the (possibly wrapped) main diagonal."""
    be = get_backend(input.device)
    xp = be.xp
    shape = tuple(input.shape)
    numel = 1
    for s in shape:
        numel *= s
    mask = xp.zeros(numel, dtype=bool)
    if numel:
        step = sum(_c_strides(shape))  # flat distance between consecutive diagonal entries
        n = min(shape)
        end = numel if wrap and len(shape) == 2 and shape[0] > shape[1] else n * step - step + 1
        mask[0:end:step] = True
    return _dispatch.wrap(mask.reshape(shape), D.bool, input.device, strided)


def _c_strides(shape):
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return out[::-1]


def _fill_diagonal(input, mask, value):
    return input.masked_fill(mask, value)


@method
def fill_diagonal_(input, fill_value, wrap=False):
    """Fills the main diagonal of a tensor with at least 2 dimensions (all of equal length
    when more than 2); ``wrap`` restarts the diagonal after N columns for tall matrices."""
    check_tensor(input, "fill_diagonal_", "self")
    if isinstance(fill_value, Tensor):
        if fill_value.numel() != 1:
            raise RuntimeError("a Tensor with " f"{fill_value.numel()} elements cannot be "
                               "converted to Scalar")
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number):
        raise TypeError("fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        f"not {type(fill_value).__name__}")
    if input.layout is not strided:
        raise NotImplementedError(
            f"fill_diagonal_: not implemented for layouts ({input.layout.name}). Convert the "
            "sparse input with .to_dense() first.")
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    fill_value = checked_fill_value(fill_value, input.dtype)
    mask = _diagonal_mask(input, wrap)
    return inplace(_fill_diagonal, input, (mask, fill_value), None, "fill_diagonal_")


# ---- set_ ----

def _no_set_derivative(grad):
    raise RuntimeError("derivative for set_ is not implemented")


_set_op = defop("set", {(strided,): lambda be, s: s}, inputs=("source",),
                grads={"source": _no_set_derivative})

_CTYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
          "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
          "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
          "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}

_SIGNATURES = (
    " * ()\n"
    " * (torch.Storage source)\n"
    " * (torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = "
    "None)\n"
    " * (Tensor source)\n"
    " * (Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n")


def _bad_args(got):
    return TypeError(f"set_() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{_SIGNATURES}")


def _strided_payload(source, storage_offset, size, stride):
    """``source``'s elements (C order) read as the storage of a (size, stride, offset) view."""
    be = get_backend(source.device)
    flat = source._data.reshape(-1)  # a view when source is contiguous
    if not be.xp.shares_memory(flat, source._data) and source.numel() > 1:
        raise RuntimeError("set_(source, storage_offset, size, stride): sparsetorch reads a "
                           "non-contiguous source's elements as the storage; call "
                           ".contiguous() on the source first")
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in (stride if stride is not None else _c_strides(size)))
    if len(stride) != len(size):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    need = storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride)) \
        if all(s > 0 for s in size) else 0
    item = flat.dtype.itemsize
    if need > flat.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {item} requiring a storage size of {need * item} "
            f"are out of bounds for storage of size {flat.size * item}")
    base = flat[storage_offset:]
    return be.xp.lib.stride_tricks.as_strided(base, size, tuple(s * item for s in stride))


@method
def set_(input, source=None, storage_offset=None, size=None, stride=None):
    """Makes ``input`` share ``source``'s elements (and take its size), or become empty when
    called without a source. See the module docstring for the forms."""
    check_tensor(input, "set_", "self")
    if source is None:
        if storage_offset is not None or size is not None or stride is not None:
            raise _bad_args("NoneType, ...")
        be = get_backend(input.device)
        new = _dispatch.wrap(be.xp.empty((0,), dtype=input.dtype.np), input.dtype, input.device,
                             strided)
        return _assign(input, new, None)
    if not isinstance(source, Tensor):
        if type(source).__name__.endswith("Storage"):
            raise NotImplementedError(
                "set_(): storage sources are not supported: sparsetorch tensors have no separate "
                "storage object. Pass a Tensor source (set_(source) or set_(source, "
                "storage_offset, size, stride)).")
        raise _bad_args(type(source).__name__)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"Could not set tensor of type {_CTYPE.get(source.dtype.name)} to a "
                           f"tensor of type {_CTYPE.get(input.dtype.name)}")
    if source.layout is not strided or input.layout is not strided:
        raise NotImplementedError(
            f"set_: not implemented for layouts ({input.layout.name}, {source.layout.name}); "
            "sparse tensors have no strided storage to share.")
    if source.device != input.device:
        raise RuntimeError(f"Attempted to call `variable.set_data(tensor)`, but `variable` and "
                           f"`tensor` have incompatible tensor type.")
    if storage_offset is None:
        if size is not None or stride is not None:
            raise _bad_args("Tensor, NoneType, ...")
        return _assign(input, source, source)
    if size is None:
        raise _bad_args("Tensor, int")
    if not isinstance(storage_offset, numbers.Integral):
        raise _bad_args(f"Tensor, {type(storage_offset).__name__}, ...")
    data = _strided_payload(source, int(storage_offset), size, stride)
    return _assign(input, _dispatch.wrap(data, source.dtype, source.device, strided), source)


def _assign(self, new, source):
    recording = _grad_enabled() and (self._rg or (source is not None and source._rg))
    if recording:
        _dispatch.check_inplace_allowed(self, "set_")
    r = call(_set_op, (new,)) if recording and new._rg else new
    self._data = r._data
    ex = self._extra
    if ex and ex.get("base") is not None:  # no longer a view of its old base
        ex.pop("base", None)
        ex.pop("view_fn", None)
    _dispatch.bump_version(self)
    if recording:
        if r.grad_fn is not None:
            _dispatch.take_history(self, r)
        else:
            self.grad_fn = None
            self._rg = False
    return self
