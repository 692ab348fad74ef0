"""torch's legacy constructors and type names (ops floor).

- ``legacy_new(dtype, device, layout, args, kwargs)``: the argument forms of the typed
  constructors (``FloatTensor(2, 3)``, ``FloatTensor(Size)``, ``FloatTensor(data)``,
  ``FloatTensor(tensor)``, ``FloatTensor()``; ``sparse.FloatTensor(indices, values[, size])``,
  ``sparse.FloatTensor(*sizes)``) with torch's ``TypeError`` / ``RuntimeError`` for the others.
  The typed classes themselves (``sparsetorch.FloatTensor`` & co.) live in
  ``sparsetorch/_legacy.py``.
- ``tensor_new``: ``x.new(...)`` (the same forms with ``x``'s dtype, device and layout);
  ``tensor_ctor``: ``Tensor(...)`` (the default dtype; a tensor argument is returned as is);
  ``tensor_new_zeros``: ``x.new_zeros`` / ``x.new_empty`` keep a sparse ``x``'s layout.
- The type names (``x.type()``, ``x.type(T)``) are ``conversion.type_``'s.
"""

import numbers
import sys
import warnings

import numpy as np  # host-side type checks of constructor arguments (np.generic); not a kernel

from .. import _dtype as D
from .._device import CPU, as_device
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Size, Tensor
from ._data import parse_size
from .creation import empty, from_numpy, tensor, zeros
from .sparse_core import sparse_coo_tensor, sparse_csr_tensor

__all__ = []

_DENSE_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    " * (torch.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)
_SPARSE_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    " * (Tensor indices, Tensor values, *, torch.device device = None)\n"
    " * (Tensor indices, Tensor values, tuple of ints size, *, torch.device device = None)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
)
_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr"}


# ---- argument checks and torch's messages ----

def _tname(x):
    """torch's name of an argument's type in its parser messages."""
    t = type(x)
    if isinstance(x, Tensor):
        return "Tensor"
    if t is Size:
        return "torch.Size"
    if isinstance(x, D.dtype):
        return "torch.dtype"
    mod = t.__module__
    if mod.split(".")[0] == "numpy":
        return f"numpy.{t.__name__}"
    return t.__name__


def _is_int(x):
    """An int for a size: ints, NumPy ints and integer 0-d tensors; not bools."""
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Integral):
        return True
    return (isinstance(x, Tensor) and x.ndim == 0 and x.layout is strided
            and not (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype is D.bool))


def _combination(args, kwargs, signatures):
    """torch's parser error; its "didn't match" line sits under the signature it tried (the
    first dense one; for the sparse constructor, the last one, and only for three arguments)."""
    got = ", ".join([_tname(a) for a in args] + [f"{k}={_tname(v)}" for k, v in kwargs.items()])
    if kwargs:
        why = f"some of the keywords were incorrect: {', '.join(kwargs)}"
    else:
        marked = ", ".join(f"!{_tname(a)}!" for a in args)
        why = f"some of the arguments have invalid types: ({marked})"
    why = f"      didn't match because {why}\n"
    if signatures is _DENSE_SIGNATURES:
        first, rest = signatures.split("\n", 1)
        signatures = f"{first}\n{why}{rest}"
    elif len(args) == 3:
        signatures += why
    return TypeError(
        f"new() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n{signatures}"
    )


def _unpack_error(pos, x):
    return TypeError(
        f"new(): argument 'size' failed to unpack the object at pos {pos} with error \"type must "
        f"be tuple of ints,but got {_tname(x)}\""
    )


def _sizes(args):
    """Several positional sizes (the first is an int): a tuple of ints, or torch's TypeError."""
    for i, a in enumerate(args):
        if not (_is_int(a) or (i and isinstance(a, bool))):
            raise _unpack_error(i + 1, a)
    return tuple(int(a) for a in args)


def _scalar(dtype):
    """torch's ScalarType name (``Long``, ``Float``...)."""
    return dtype.scalar_name


def _options(dtype, device, layout):
    return (
        f"TensorOptions(dtype={dtype.cpp_name}, device={device}, "
        f"layout={_LAYOUT_NAMES[layout.name]}, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def _device_arg(device, kwargs):
    """The ``device=`` keyword: of the constructor's device type (else torch's RuntimeError)."""
    given = kwargs.pop("device", None)
    if given is None:
        return device, False
    dev = as_device(given)
    if dev.type != device.type:
        raise RuntimeError(
            f"legacy constructor expects device type: {device.type} but device type: {dev.type} "
            "was passed"
        )
    return dev, True


# ---- the constructors ----

def legacy_new(dtype, device, layout, args, kwargs, warn=True):
    """A tensor of ``dtype``/``device``/``layout`` from a legacy constructor's arguments.
    ``warn=False`` (``x.new(...)``): no deprecation warning for the sparse forms, as torch's
    ``new``, which warns only from the ``torch.sparse.<T>Tensor`` constructors."""
    kwargs = dict(kwargs)
    device, given = _device_arg(device, kwargs)
    if layout is strided:
        return _dense(dtype, device, given, args, kwargs)
    if layout is sparse_coo:
        return _sparse(dtype, device, args, kwargs, warn)
    raise RuntimeError(f"new(): legacy constructors do not support the {layout.name} layout")


def _dense(dtype, device, given, args, kwargs):
    for key in ("size", "data", "other"):
        if key in kwargs:
            if args:
                raise _combination(args, kwargs, _DENSE_SIGNATURES)
            value = kwargs.pop(key)
            args = (Size(value),) if key == "size" else (value,)
            break
    if kwargs:
        raise _combination(args, kwargs, _DENSE_SIGNATURES)
    if not args:
        return empty(0, dtype=dtype, device=device)
    a = args[0]
    if len(args) > 1:
        if not _is_int(a):
            raise _combination(args, kwargs, _DENSE_SIGNATURES)
        return empty(_sizes(args), dtype=dtype, device=device)
    if isinstance(a, Tensor):
        return _alias(a, dtype, device, strided, given)
    if isinstance(a, Size) or _is_int(a):
        return empty(tuple(a) if isinstance(a, Size) else (int(a),), dtype=dtype, device=device)
    if isinstance(a, str):
        raise TypeError(f"new(): invalid data type '{_tname(a)}'")
    if a is None or isinstance(a, (numbers.Number, np.generic)):
        raise TypeError(f"new(): data must be a sequence (got {_tname(a)})")
    if isinstance(a, np.ndarray) and device.type == "cpu" and _np_dtype_is(a.dtype, dtype):
        return from_numpy(a)  # as torch: an array of the class's dtype is shared, not copied
    return tensor(a, dtype=dtype, device=device)


def _np_dtype_is(np_dtype, dtype):
    try:
        return D.from_numpy_dtype(np_dtype) is dtype
    except TypeError:
        return False


def _alias(t, dtype, device, layout, given):
    if given:
        raise RuntimeError(
            "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
            "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead."
        )
    if t.dtype is not dtype or t.layout is not layout or t.device.type != device.type:
        raise TypeError(
            f"expected {_options(dtype, device, layout)} "
            f"(got {_options(t.dtype, t.device, t.layout)})"
        )
    return t.view_as(t)


_WARNED = set()


def _deprecated(form, hint):
    """torch's deprecation warning of the legacy sparse constructor, at the user's line; once
    per form and process, as torch's (TORCH_WARN_ONCE)."""
    if form in _WARNED:
        return
    _WARNED.add(form)
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("sparsetorch."):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"torch.sparse.SparseTensor({form}) is deprecated.  Please use "
        f"torch.sparse_coo_tensor({hint}).",
        UserWarning,
        stacklevel=level,
    )


def _no_warning(form, hint):
    return None


def _sparse(dtype, device, args, kwargs, warn=True):
    _warn = _deprecated if warn else _no_warning
    if "size" in kwargs and not args:
        args = (Size(kwargs.pop("size")),)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not args:
        _warn("", "(0,), dtype=")
        return _empty_sparse((0,), dtype, device)
    a = args[0]
    if isinstance(a, Tensor):
        if len(args) in (2, 3) and isinstance(args[1], Tensor):
            size = None
            if len(args) == 3:
                s = args[2]
                if isinstance(s, Tensor):
                    raise _combination(args, kwargs, _SPARSE_SIGNATURES)
                if not isinstance(s, (tuple, list)) or not all(_is_int(v) for v in s):
                    raise _unpack_error(2, args[1])
                size = tuple(int(v) for v in s)
            indices, values = args[0], args[1]
            if indices.dtype is not D.int64:
                raise RuntimeError("indices must be an int64 tensor" if size is not None else
                                   f"expected scalar type Long but found {_scalar(indices.dtype)}")
            if values.device.type != device.type:
                raise RuntimeError(
                    f"legacy constructor expects device type: {device.type} but device type: "
                    f"{values.device.type} was passed"
                )
            if size is None:
                _warn("indices, values, *, device=", "indices, values, dtype=, device=")
            else:
                _warn("indices, values, shape, *, device=",
                      "indices, values, shape, dtype=, device=")
            return sparse_coo_tensor(indices, values, size, device=values.device)
        raise _combination(args, kwargs, _SPARSE_SIGNATURES)
    if isinstance(a, Size) and len(args) == 1:
        shape = tuple(a)
    elif isinstance(a, (list, tuple)) and len(args) == 1 and all(_is_int(v) for v in a):
        raise TypeError("torch.sparse.SparseTensor(sequence) only accepts sizes.  Please use "
                        "torch.sparse_coo_tensor() or construct a strided tensor and convert it "
                        "to sparse via to_sparse.")
    elif _is_int(a):
        shape = _sizes(args)
    else:
        raise _combination(args, kwargs, _SPARSE_SIGNATURES)
    _warn("shape, *, device=", "shape, dtype=, device=")
    return _empty_sparse(shape, dtype, device)


def _empty_sparse(shape, dtype, device):
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(shape)}"
            )
    indices = empty((len(shape), 0), dtype=D.int64, device=device)
    return sparse_coo_tensor(indices, empty((0,), dtype=dtype, device=device), shape,
                             device=device)


def tensor_new(self, *args, **kwargs):
    """``x.new(...)``: a legacy constructor with ``x``'s dtype, device and layout."""
    if self.layout is sparse_csr:
        raise RuntimeError("new(): legacy constructors do not support the sparse_csr layout")
    return legacy_new(self.dtype, self.device, self.layout, args, kwargs, False)


def tensor_ctor(cls, args, kwargs):
    """``Tensor(...)``: the legacy constructor of the default dtype. As torch, a tensor argument
    is returned whatever its dtype (other typed constructors check it)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        t = args[0]
    else:
        dev = kwargs.get("device")
        t = legacy_new(D.get_default_dtype(), CPU if dev is None else as_device(dev), strided,
                       args, kwargs)
    if cls is not Tensor and t.__class__ is not cls:
        t2 = object.__new__(cls)
        for s in ("_data", "dtype", "device", "layout", "_rg", "grad", "grad_fn", "_vc", "_extra"):
            setattr(t2, s, getattr(t, s))
        return t2
    return t


def tensor_new_zeros(self, size, dtype, device, requires_grad, fname):
    """``x.new_zeros(size)`` / ``x.new_empty(size)``: of ``x``'s layout (a sparse tensor gives a
    sparse tensor with no stored entries, as torch), dtype and device unless given."""
    dtype = dtype or self.dtype
    device = device or self.device
    if self.layout is strided:
        f = zeros if fname == "new_zeros" else empty
        return f(*size, dtype=dtype, device=device, requires_grad=requires_grad)
    shape = parse_size(size, fname)
    if self.layout is sparse_coo:
        r = zeros(shape, dtype=dtype, device=device, layout=sparse_coo)
    else:
        if len(shape) != 2:
            raise RuntimeError(
                f"{fname}(): a sparse_csr tensor is 2-D here, got size {list(shape)}"
            )
        r = sparse_csr_tensor(zeros(shape[0] + 1, dtype=D.int64, device=device),
                              empty(0, dtype=D.int64, device=device),
                              empty(0, dtype=dtype, device=device), shape)
    return r.requires_grad_(True) if requires_grad else r
