"""Conversions: dtype/device (``to``), clone/contiguous, Python and NumPy interop, DLPack,
pickling and deepcopy. The repr lives in ``_repr.py``."""

import copy as _copy

import numpy as np  # host-side interop (numpy(), __array__, item, repr); kernels never import it

from .. import _dtype as D
from .._backend import get_backend, move
from .._device import CPU, as_device, device
from .._dispatch import call, composite, defop, wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from .._variants import method
from ..sparse._payload import COO, CSR
from .sparse_values import values_kernels
from . import sparse_shape as _sps
from ._repr import set_printoptions, tensor_repr  # noqa: F401 - Tensor.__repr__
from ._util import check_tensor

__all__ = ["clone", "contiguous", "from_dlpack", "set_printoptions", "to"]


S = (strided,)


# ---- clone, contiguous, to ----


def _astype_kernel(be, x, np_dtype):
    return x.astype(np_dtype)


_to_dtype_op = defop(
    "_to_copy",
    {S: _astype_kernel,  # sparse: the values are cast (the param is the sparsetorch dtype there)
     **values_kernels(lambda v, dtype: v.to(dtype), linear=True)},
    params=("np_dtype",),
    grads={"input": lambda grad: grad},
    zero_preserving=True,
)
# order="K" keeps the strides of a dense non-contiguous input (torch's preserve_format)
_clone_op = defop(
    "clone",
    {S: lambda be, x: x.copy(order="K"), (sparse_coo,): composite(_sps.coo_clone),
     (sparse_csr,): composite(_sps.csr_clone)},
    grads={"input": lambda grad: grad},
    zero_preserving=True,
)
_contiguous_op = defop(  # torch's contiguous() records its copy as clone: CloneBackward0
    "contiguous",
    {S: lambda be, x: be.xp.ascontiguousarray(x)},
    grads={"input": lambda grad: grad},
    zero_preserving=True, node_name="CloneBackward0",
)


def _to_device_kernel(be, x, target, source):
    dst = get_backend(target)
    if dst is be:
        return x.copy()
    if x.__class__ is COO:  # sparse payloads: move each array, keep the invariants' flags
        return COO(move(x.indices, be, dst), move(x.values, be, dst), x.shape, x.coalesced)
    if x.__class__ is CSR:
        return CSR(move(x.crow, be, dst), move(x.col, be, dst), move(x.values, be, dst), x.shape)
    return move(x, be, dst)


_to_device_op = defop(
    "_to_device",
    {S: _to_device_kernel, (sparse_coo,): _to_device_kernel, (sparse_csr,): _to_device_kernel},
    params=("target", "source"),
    grads={"input": lambda grad, source: grad.to(source)},
    zero_preserving=True,
)


def clone(input, *, memory_format=None):
    """A copy of ``input`` that is part of the graph (gradient flows back unchanged); COO and CSR
    input give a copy of the same layout (indices and values)."""
    check_tensor(input, "clone")
    return call(_clone_op, (input,))


def contiguous(input, memory_format=None):
    """``input`` itself if it is C-contiguous, else a contiguous copy (differentiable)."""
    check_tensor(input, "contiguous")
    if input.layout is not strided or input._data.flags.c_contiguous:
        return input
    return call(_contiguous_op, (input,))


def _bad_to(args, kwargs):
    got = ", ".join(
        [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    )
    return TypeError(
        f"to() received an invalid combination of arguments - got ({got}), but expected one of: "
        "(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None), "
        "(dtype, non_blocking=False, copy=False, *, memory_format=None), "
        "(Tensor other, non_blocking=False, copy=False, *, memory_format=None)"
    )


def _is_device(x):
    return isinstance(x, (str, device)) or (x.__class__ is int)


def _parse_to(args, kwargs):
    """torch's three ``to`` overloads -> (dtype, device, copy)."""
    kw = dict(kwargs)
    opts = {k: kw.pop(k) for k in ("non_blocking", "copy", "memory_format") if k in kw}
    dtype = dev = None
    if args and isinstance(args[0], Tensor):
        names = ("other", "non_blocking", "copy")
        if kw:
            raise _bad_to(args, kwargs)
        dtype, dev = args[0].dtype, args[0].device
    elif args and isinstance(args[0], D.dtype):
        names = ("dtype", "non_blocking", "copy")
        if kw:
            raise _bad_to(args, kwargs)
        dtype = args[0]
    else:
        names = ("device", "dtype", "non_blocking", "copy")
        dev = kw.pop("device", None)
        dtype = kw.pop("dtype", None)
        if kw:
            raise _bad_to(args, kwargs)
        if args:
            dev = args[0]
        if len(args) > 1:
            dtype = args[1]
        if dev is not None and not _is_device(dev):
            raise _bad_to(args, kwargs)
        if dtype is not None and not isinstance(dtype, D.dtype):
            raise _bad_to(args, kwargs)
    if len(args) > len(names):
        raise _bad_to(args, kwargs)
    for name, a in zip(names[1:], args[1:]):
        if name in ("non_blocking", "copy"):
            if not isinstance(a, bool) or name in opts:
                raise _bad_to(args, kwargs)
            opts[name] = a
    return dtype, (as_device(dev) if dev is not None else None), bool(opts.get("copy", False))


def to(input, *args, **kwargs):
    """Performs dtype and/or device conversion.

    Overloads: ``to(dtype)``, ``to(device=None, dtype=None)``, ``to(other)``, each with
    ``non_blocking=False, copy=False``. Returns ``input`` itself when nothing changes and
    ``copy`` is False; the conversion is differentiable.
    """
    check_tensor(input, "to")
    dtype, dev, copy = _parse_to(args, kwargs)
    r = input
    if dev is not None and dev != input.device:
        r = call(_to_device_op, (r,), (dev, input.device))
        r.device = dev
        copy = False
    if dtype is not None and dtype is not r.dtype:
        param = dtype.np if r.layout is strided else dtype
        r = call(_to_dtype_op, (r,), (param,), dtype)
        copy = False
    if copy:
        r = clone(r)
    return r


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def type_name(t):
    """``'torch.FloatTensor'``, ``'torch.sparse.DoubleTensor'``, ``'torch.cuda.LongTensor'``...
    (a CSR tensor is named as a dense one: torch has no typed class for it)."""
    mid = ".cuda" if t.device.type == "cuda" else ""
    if t.layout is sparse_coo:
        mid += ".sparse"
    return f"torch{mid}.{_TYPE_NAMES[t.dtype.name]}"


def parse_type_name(name):
    """``'torch.cuda.sparse.FloatTensor'`` -> ``(dtype, is_cuda, is_sparse)``; None if invalid.
    ``sparsetorch.`` names are accepted too; ``'torch.Tensor'`` is the default dtype."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] not in ("torch", "sparsetorch"):
        return None
    rest = parts[1:]
    cuda = rest[0] == "cuda"
    rest = rest[1:] if cuda else rest
    sparse = bool(rest) and rest[0] == "sparse"
    rest = rest[1:] if sparse else rest
    if len(rest) != 1:
        return None
    if rest[0] == "Tensor":
        return (D.get_default_dtype(), cuda, sparse) if not (cuda or sparse) else None
    dtype = getattr(D, _BY_TYPE_NAME.get(rest[0], "?"), None)
    return None if dtype is None else (dtype, cuda, sparse)


def _class_name(cls):
    name = getattr(cls, "_legacy_name", None)  # the typed classes of sparsetorch/_legacy.py
    if isinstance(name, str):
        return name
    if cls is Tensor:
        return "torch.Tensor"
    if cls.__module__.split(".")[0] == "numpy":
        return f"numpy.{cls.__name__}"
    return cls.__name__


def type_(input, dtype=None, non_blocking=False):
    """``x.type()`` -> the type name; ``x.type(T)`` -> ``x`` converted to ``T`` (a dtype, a type
    name or a typed class; ``x`` itself when nothing changes). ``non_blocking`` is accepted for
    torch's signature (copies are synchronous here)."""
    if dtype is None:
        return type_name(input)
    if isinstance(dtype, D.dtype):
        return to(input, dtype)
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, type):
        name = _class_name(dtype)
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    parsed = parse_type_name(name)
    if parsed is None:
        raise ValueError(f"invalid type: {name!r}")
    dt, cuda, _ = parsed
    r = input
    if cuda != (input.device.type == "cuda"):
        r = to(r, "cuda" if cuda else "cpu")
    return to(r, dt)


# ---- Python scalars and NumPy ----


# torch's names of the sparse layouts in its conversion errors
_TORCH_LAYOUT_NAMES = {"sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
                       "sparse_csc": "SparseCsc", "sparse_bsr": "SparseBsr",
                       "sparse_bsc": "SparseBsc"}


def _host(t):
    """The payload of a dense tensor as a NumPy array (copied from the GPU if needed)."""
    if t.layout is not strided:
        name = _TORCH_LAYOUT_NAMES.get(t.layout.name, t.layout.name)
        raise TypeError(
            f"can't convert {name} layout tensor to numpy. Use Tensor.to_dense() first."
        )
    a = t._data
    return a if isinstance(a, np.ndarray) else a.get()


@method
def item(input):
    """The value of a one-element tensor as a Python number."""
    n = input.numel()
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return _host(input).item(0) if input.layout is strided else _host(input.to_dense()).item(0)


@method
def tolist(input):
    """The tensor as (nested) Python lists of numbers (a number for a 0-d tensor)."""
    if input.layout is not strided:  # torch's error (a sparse tensor has no storage)
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage "
                           "(a sparse tensor: call .to_dense().tolist())")
    return _host(input).tolist()


def to_numpy(input, force=False):
    """``x.numpy()``: a NumPy array sharing memory with a CPU tensor.

    ``force=True`` also detaches and copies from the GPU (torch's semantics).
    """
    if not force:
        if input._rg:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if input.device.type != "cpu":
            raise TypeError(
                f"can't convert {input.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
    if input.dtype is D.bfloat16 and input.layout is strided:  # NumPy has no bfloat16 of its own
        raise TypeError("Got unsupported ScalarType BFloat16")
    return _host(input)


def array_protocol(input, dtype=None, copy=None):
    """``np.asarray(x)`` for dense CPU tensors, with NumPy 2's ``copy=`` semantics:
    ``copy=False`` raises ValueError when a copy (dtype conversion) would be needed."""
    a = to_numpy(input)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError(
                f"Unable to avoid copy while creating an array as requested: the tensor has dtype "
                f"{a.dtype} but {np.dtype(dtype)} was requested (copy=False)."
            )
        return a.astype(dtype)
    return a.copy() if copy else a


def to_bool(input):
    n = input.numel()
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return bool(item(input))


def scalar_value(input, kind):
    if input.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return item(input)


def index_value(input):
    if input.numel() != 1 or input.dtype.is_floating_point or input.dtype.is_complex:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(input))


def payload_numpy(t):
    return _host(t)


# ---- DLPack ----


def dlpack(input, stream=None, max_version=None, dl_device=None, copy=None):
    """``x.__dlpack__()``: export a dense tensor through its array's DLPack (zero-copy)."""
    if input.layout is not strided:
        raise BufferError(
            f"Can't export tensors with layout {input.layout.name} via DLPack; "
            "call .to_dense() first"
        )
    if input._rg:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    a = input._data
    if any(s < 0 for s in a.strides):
        if not copy:  # several consumers (torch among them) cannot import negative strides
            raise BufferError(
                "Can't export a tensor with negative strides via DLPack without "
                "a copy; call .contiguous() first or pass copy=True"
            )
        a = a.copy()
    kw = {
        k: v
        for k, v in (
            ("stream", stream),
            ("max_version", max_version),
            ("dl_device", dl_device),
            ("copy", copy),
        )
        if v is not None
    }
    try:
        return a.__dlpack__(**kw)
    except TypeError:  # an array library that predates the DLPack 1.0 keywords
        return a.__dlpack__() if stream is None else a.__dlpack__(stream=stream)


def dlpack_device(input):
    if input.layout is not strided:
        raise BufferError(f"{input.layout.name} tensors have no DLPack device")
    return input._data.__dlpack_device__()


class _Capsule:
    """A legacy DLPack capsule (``to_dlpack()`` output), taken to live on the CPU."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with any object that supports DLPack (NumPy, torch, CuPy, ...).

    >>> t = from_dlpack(np.arange(3.0)); t.dtype
    sparsetorch.float64
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack(): expected an object with __dlpack__ (or a DLPack capsule), got "
            f"{type(ext_tensor).__name__}"
        )
    dev_type, dev_id = ext_tensor.__dlpack_device__()
    if int(dev_type) == 1:  # kDLCPU
        arr, dev = np.from_dlpack(ext_tensor), CPU
    elif int(dev_type) in (2, 3, 13):  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
        dev = device("cuda", int(dev_id))
        arr = get_backend(dev).xp.from_dlpack(ext_tensor)
    else:
        raise RuntimeError(f"from_dlpack(): unsupported DLPack device type {int(dev_type)}")
    return wrap(arr, D.from_numpy_dtype(arr.dtype), dev, strided)


# ---- pickling and deepcopy ----


def _rebuild_tensor(cls, data, dtype, lay, dev, requires_grad, state):
    t = wrap(data, dtype, dev, lay)
    if cls is not Tensor:
        t = _as_subclass(t, cls)
    t._rg = requires_grad
    if state:
        t.__dict__.update(state)
    return t


def _as_subclass(t, cls):
    s = object.__new__(cls)
    for k in ("_data", "dtype", "device", "layout", "_rg", "grad", "grad_fn", "_vc", "_extra"):
        setattr(s, k, getattr(t, k))
    return s


def reduce_tensor(t):
    """``__reduce_ex__``: data (the view's own elements), dtype, layout, device, requires_grad
    and instance attributes. The graph (``grad_fn``) and ``.grad`` are not pickled."""
    state = getattr(t, "__dict__", None) or None
    return (_rebuild_tensor, (type(t), t._data, t.dtype, t.layout, t.device, t._rg, state))


def _deepcopy_array(a, memo):
    """Copy an ndarray; views of one buffer copied under the same ``memo`` keep sharing it."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.base is not None or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return a.copy(order="K")
    new_root = memo.get(id(root))
    if new_root is None:
        new_root = root.copy(order="K")
        memo[id(root)] = new_root
        memo.setdefault(id(memo), []).append(root)  # keep the id valid (copy._keep_alive)
    if root is a:
        return new_root
    off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(
        a.shape, a.dtype, buffer=new_root.ravel(order="K"), offset=off, strides=a.strides
    )


def deepcopy_tensor(t, memo):
    """``copy.deepcopy``: copies data (keeping views of one buffer sharing it), requires_grad,
    ``.grad`` and attributes. Only graph leaves can be deep-copied, as in torch."""
    if t.grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    hit = memo.get(id(t))
    if hit is not None:
        return hit
    data = t._data
    if isinstance(data, np.ndarray):
        data = _deepcopy_array(data, memo)
    else:
        data = _copy.deepcopy(data, memo)
    new = wrap(data, t.dtype, t.device, t.layout)
    if type(t) is not Tensor:
        new = _as_subclass(new, type(t))
    new._rg = t._rg
    memo[id(t)] = new
    if t.grad is not None:
        new.grad = deepcopy_tensor(t.grad, memo)
    d = getattr(t, "__dict__", None)
    if d:
        new.__dict__.update(_copy.deepcopy(d, memo))
    return new
