"""PyTorch's pickle vocabulary, implemented here: the globals a torch checkpoint may name.

A torch file names functions such as ``torch._utils._rebuild_tensor_v2``; the loader never
imports them. Each allowed name maps to an object below (our own implementation, which checks
its arguments as a file defect: :class:`SerializationError`). ``TORCH_NAMES`` is the allowlist
(no larger than ``torch.load(weights_only=True)``'s), ``CALLABLE`` the objects that may be called.
"""

from collections import Counter, OrderedDict

import numpy as np

from .. import _dtype as D
from .._device import device
from .._dispatch import wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._ops import sparse_core
from .._tensor import Size, Tensor
from ..nn.parameter import Parameter
from ._format import SerializationError
from ._place import construct, place, sorted_unique

__all__ = ["CALLABLE", "STORAGE_NAMES", "TORCH_NAMES", "Storage", "StorageType", "bad"]

_CPU = device("cpu")
_MAX_DIMS = 64

# torch's legacy storage class per dtype (the name a checkpoint uses for a storage's type)
STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "bfloat16": "BFloat16Storage",
    "complex128": "ComplexDoubleStorage", "complex64": "ComplexFloatStorage",
}


def bad(what):
    raise SerializationError(f"invalid PyTorch checkpoint: {what}")


class StorageType:
    """What ``torch.FloatStorage`` & co. stand for in a file: a dtype."""

    __slots__ = ("dtype", "name")

    def __init__(self, dt, name):
        self.dtype, self.name = dt, name

    def __repr__(self):
        return f"StorageType({self.name})"


class Storage:
    """A loaded storage: flat bytes (``raw``, uint8) plus the dtype and location it was saved
    with; ``ctx`` applies ``map_location``."""

    __slots__ = ("ctx", "dtype", "location", "raw")

    def __init__(self, raw, dt, location, ctx):
        self.raw, self.dtype, self.location, self.ctx = raw, dt, location, ctx

    def as_dtype(self, dt):
        if self.raw.size % dt.itemsize:
            bad(f"a storage of {self.raw.size} bytes cannot hold {dt.name} elements")
        return self.raw.view(dt.np)


def _ints(x, what, n=None):
    if type(x) not in (tuple, list, Size) or len(x) > _MAX_DIMS or (n is not None and len(x) != n):
        bad(f"{what} must be a tuple of at most {_MAX_DIMS} ints, got {type(x).__name__}")
    for s in x:
        if type(s) is not int or not 0 <= s < 1 << 62:
            bad(f"{what} must hold non-negative ints, got {list(x)!r}")
    return tuple(x)


def _tensor(storage, offset, size, stride, dt=None):
    if type(storage) is not Storage:
        bad(f"a tensor's storage is a {type(storage).__name__}, not a storage")
    dt = storage.dtype if dt is None else dt
    if type(offset) is not int or offset < 0:
        bad(f"storage offset must be a non-negative int, got {offset!r}")
    size = _ints(size, "tensor size")
    stride = _ints(stride, "tensor stride", len(size))
    flat = storage.as_dtype(dt)
    if all(size):
        hi = offset + sum(s * (n - 1) for s, n in zip(stride, size))
        if hi >= flat.size:
            bad(f"a tensor of size {list(size)}, stride {list(stride)}, offset {offset} reaches element "
                f"{hi} of a storage holding {flat.size}")
        isz = dt.itemsize
        a = np.ndarray(size, dt.np, buffer=flat, offset=offset * isz, strides=[s * isz for s in stride])
    else:
        a = np.empty(size, dt.np)
    if dt is D.bool and a.size and int(a.view(np.uint8).max()) > 1:
        bad("a bool tensor holds bytes other than 0 and 1")
    return place(wrap(a, dt, _CPU, strided), storage.location, storage.ctx)


def _hooks_and_rg(requires_grad, hooks):
    if type(requires_grad) is not bool:
        bad(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
    if hooks is not None and not isinstance(hooks, dict):
        bad(f"backward hooks must be an OrderedDict, got {type(hooks).__name__}")


def _grad(t, requires_grad):
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            bad(f"requires_grad=True on a {t.dtype.name} tensor")
        t.requires_grad_(True)
    return t


def rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(storage, storage_offset, size, stride)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _hooks_and_rg(requires_grad, backward_hooks)
    if metadata:
        bad(f"tensor metadata {metadata!r} (conjugate/negative views) is not supported")
    return _grad(_tensor(storage, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                      metadata=None):
    if type(dtype) is not D.dtype:
        bad(f"tensor dtype must be a dtype, got {type(dtype).__name__}")
    _hooks_and_rg(requires_grad, backward_hooks)
    if metadata:
        bad(f"tensor metadata {metadata!r} (conjugate/negative views) is not supported")
    return _grad(_tensor(storage, storage_offset, size, stride, dtype), requires_grad)


def _attrs(obj, state):
    """Instance attributes from a file: str names that shadow nothing the class defines."""
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        if slots:
            bad("slot state on a tensor is not supported")
    if not state:
        return obj
    if not isinstance(state, dict):
        bad(f"object state must be a dict, got {type(state).__name__}")
    for k in state:
        if type(k) is not str or hasattr(type(obj), k) or k.startswith("__"):
            bad(f"attribute {k!r} is not a str or shadows a {type(obj).__name__} attribute")
    obj.__dict__.update(state)
    return obj


def _plain(data, what):
    if type(data) is not Tensor:
        bad(f"{what} must be a tensor, got {type(data).__name__}")
    return data


def rebuild_parameter(data, requires_grad, backward_hooks):
    _hooks_and_rg(requires_grad, backward_hooks)
    return Parameter(_plain(data, "a parameter's data"), requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _attrs(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func, new_type, args, state):
    if func not in _TENSOR_FUNCS:
        bad(f"_rebuild_from_type_v2 names {func!r}, not a tensor rebuild function")
    if not isinstance(args, tuple):
        bad("_rebuild_from_type_v2 arguments must be a tuple")
    t = func(*args)
    if new_type is Parameter and type(t) is Tensor:
        t = Parameter(t, t.requires_grad)
    elif new_type is not type(t):
        bad(f"tensor subclass {new_type!r} is not supported")
    return _attrs(t, state)


def _sparse_part(x, what, kinds):
    _plain(x, what)
    if x.layout is not strided or x._data.dtype not in kinds:
        bad(f"{what} must be a strided tensor of {'/'.join(str(k) for k in kinds)}, got {x.dtype.name}")
    return x


def rebuild_sparse_tensor(layout, data):
    if not isinstance(data, tuple):
        bad("sparse tensor data must be a tuple")
    if layout is sparse_coo:
        if len(data) == 3:
            (indices, values, size), coalesced = data, None
        elif len(data) == 4:
            indices, values, size, coalesced = data
        else:
            bad(f"COO tensor data has {len(data)} items, expected 3 or 4")
        _sparse_part(indices, "COO indices", (np.dtype(np.int64),))
        _plain(values, "COO values")
        if coalesced is not None and type(coalesced) is not bool:
            bad("COO 'is_coalesced' must be a bool or None")
        t = construct(sparse_core.sparse_coo_tensor, indices, values, _ints(size, "sparse size"))
        idx = t._data.indices
        if coalesced and idx.shape[1] > 1 and not sorted_unique(idx):
            bad("COO tensor marked coalesced has unsorted or duplicate indices")
        if coalesced is not None:
            t._data.coalesced = coalesced
        return t
    if layout is sparse_csr:
        if len(data) != 4:
            bad(f"CSR tensor data has {len(data)} items, expected 4")
        crow, col, values, size = data
        for x, w in ((crow, "CSR crow_indices"), (col, "CSR col_indices")):
            _sparse_part(x, w, (np.dtype(np.int32), np.dtype(np.int64)))
        return construct(sparse_core.sparse_csr_tensor, crow, col, _plain(values, "CSR values"),
                                  _ints(size, "sparse size"))
    bad(f"sparse layout {layout!r} is not supported by sparsetorch (it has sparse_coo and sparse_csr)")


def rebuild_device_tensor_from_cpu_tensor(data, dtype, device_, requires_grad):
    _plain(data, "tensor data")
    if type(dtype) is not D.dtype or type(requires_grad) is not bool:
        bad("_rebuild_device_tensor_from_cpu_tensor: bad dtype or requires_grad")
    return _grad(place(data.to(dtype), str(device_), None), requires_grad)


_LAYOUT_NAMES = {"torch.strided": strided, "torch.sparse_coo": sparse_coo, "torch.sparse_csr": sparse_csr}


def get_layout(name):
    lay = _LAYOUT_NAMES.get(name) if type(name) is str else None
    if lay is None:
        bad(f"layout {name!r} is not supported by sparsetorch (it has {', '.join(_LAYOUT_NAMES)})")
    return lay


def make_size(items=()):
    return Size(_ints(items, "torch.Size"))


def make_device(type_, index=None):
    if type(type_) is not str or (index is not None and type(index) is not int):
        bad(f"torch.device arguments must be (str[, int]), got {type_!r}, {index!r}")
    try:
        return device(type_) if index is None else device(type_, index)
    except (RuntimeError, TypeError, ValueError) as e:
        bad(f"bad device {type_!r}: {e}")


def codecs_encode(obj, encoding="utf-8"):
    if type(obj) is not str or encoding not in ("latin1", "latin-1"):
        bad("_codecs.encode is only allowed on (str, 'latin1'): how pickle protocol 2 stores bytes")
    return obj.encode("latin1")


def make_bytearray(x=b"", encoding=None):
    if type(x) is str and encoding in ("latin1", "latin-1"):
        return bytearray(x.encode("latin1"))
    if type(x) is not bytes or encoding is not None:
        bad(f"bytearray from {type(x).__name__}")
    return bytearray(x)


def make_set(items=()):
    if type(items) not in (list, tuple):
        bad(f"set from {type(items).__name__}")
    try:
        return set(items)
    except TypeError:
        bad("set holds an unhashable item")


def make_complex(re=0.0, im=0.0):
    if type(re) not in (int, float) or type(im) not in (int, float):
        bad("complex from non-numbers")
    return complex(re, im)


def make_odict(items=()):
    if items:
        bad("OrderedDict arguments are not supported (items come through SETITEMS)")
    return OrderedDict()


def make_counter(items=()):
    if items:
        bad("Counter arguments are not supported (items come through SETITEMS)")
    return Counter()


_TENSOR_FUNCS = {rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3, rebuild_parameter,
                 rebuild_parameter_with_state, rebuild_sparse_tensor}

TORCH_NAMES = {
    "collections.OrderedDict": make_odict,
    "collections.Counter": make_counter,
    "torch.nn.parameter.Parameter": Parameter,
    "torch.serialization._get_layout": get_layout,
    "torch.Size": make_size,
    "torch.Tensor": Tensor,
    "torch.device": make_device,
    "_codecs.encode": codecs_encode,
    "builtins.bytearray": make_bytearray,
    "builtins.set": make_set,
    "builtins.complex": make_complex,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
    "torch._utils._rebuild_sparse_tensor": rebuild_sparse_tensor,
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": rebuild_device_tensor_from_cpu_tensor,
    "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
}
for _d in D.ALL:
    TORCH_NAMES[f"torch.{_d.name}"] = _d
    TORCH_NAMES[f"torch.{STORAGE_NAMES[_d.name]}"] = StorageType(_d, STORAGE_NAMES[_d.name])

# what REDUCE may call: our functions (never a class from the file, never a file-built object)
CALLABLE = {id(v): v for v in TORCH_NAMES.values()
            if callable(v) and not isinstance(v, (type, D.dtype, StorageType))}
