"""Conversions: dtype/device (``to``), clone/contiguous, Python and NumPy interop, repr."""

import numbers

import numpy as np  # host-side interop (numpy(), __array__, item); kernels never import it

from .. import _dtype as D
from .._backend import get_backend
from .._device import as_device, device
from .._dispatch import call, defop, wrap
from .._layout import strided
from .._tensor import Tensor
from ._util import check_tensor

__all__ = ["clone", "contiguous", "to"]

S = (strided,)


def _astype_kernel(be, x, np_dtype):
    return x.astype(np_dtype)


_to_dtype_op = defop("_to_copy", {S: _astype_kernel}, params=("np_dtype",),
                     grads={"input": lambda grad: grad}, zero_preserving=True)
_clone_op = defop("clone", {S: lambda be, x: x.copy()}, grads={"input": lambda grad: grad},
                  zero_preserving=True)
_contiguous_op = defop("contiguous", {S: lambda be, x: be.xp.ascontiguousarray(x)},
                       grads={"input": lambda grad: grad}, zero_preserving=True)


def _to_device_kernel(be, x, target, source):
    dst = get_backend(target)
    if dst is be:
        return x.copy()
    if be.name == "cuda":  # device -> host
        x = x.get()
    return dst.xp.asarray(x)


_to_device_op = defop("_to_device", {S: _to_device_kernel}, params=("target", "source"),
                      grads={"input": lambda grad, source: grad.to(source)}, zero_preserving=True)


def clone(input, *, memory_format=None):
    """A copy of ``input`` that is part of the graph (gradient flows back unchanged)."""
    check_tensor(input, "clone")
    return call(_clone_op, (input,))


def contiguous(input):
    check_tensor(input, "contiguous")
    if input.layout is not strided or _is_c_contiguous(input._data):
        return input
    return call(_contiguous_op, (input,))


def _is_c_contiguous(a):
    return a.flags.c_contiguous


def _parse_to(args, kwargs):
    """Parse torch's overloads: to(dtype), to(device, dtype), to(tensor), plus keywords."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, device)) or (isinstance(a, int) and not isinstance(a, bool)):
            dev = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, bool):
            copy = a if len(args) > 1 else copy
        elif a is None:
            continue
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments: got {type(a).__name__}; "
                "expected a dtype, a device, or a Tensor"
            )
    return dtype, (as_device(dev) if dev is not None else None), copy


def to(input, *args, **kwargs):
    """Convert dtype and/or device; returns ``input`` itself when nothing changes (unless copy)."""
    check_tensor(input, "to")
    dtype, dev, copy = _parse_to(args, dict(kwargs))
    r = input
    if dev is not None and dev != input.device:
        r = call(_to_device_op, (r,), (dev, input.device))
        r.device = dev
        copy = False
    if dtype is not None and dtype is not r.dtype:
        if r.layout is strided:
            r = call(_to_dtype_op, (r,), (dtype.np,), dtype)
        else:
            r = call(_to_dtype_op, (r,), (dtype,), dtype)
        copy = False
    if copy:
        r = clone(r)
    return r


def type_(input, dtype=None):
    """``x.type()`` -> type string; ``x.type(dtype)`` -> converted tensor."""
    if dtype is None:
        return "sparsetorch." + _TYPE_NAMES.get(input.dtype.name, input.dtype.name)
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        for k, v in _TYPE_NAMES.items():
            if v == name:
                return to(input, getattr(D, k))
        raise ValueError(f"invalid type: {dtype!r}")
    return to(input, dtype)


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


# ---- Python scalars and NumPy ----

def _host(t):
    """The payload of a dense tensor as a NumPy array (copied from the GPU if needed)."""
    if t.layout is not strided:
        raise TypeError(
            f"can't convert {t.layout.name} layout tensor to numpy. Use Tensor.to_dense() first."
        )
    a = t._data
    return a if isinstance(a, np.ndarray) else a.get()


def item(input):
    """The value of a one-element tensor as a Python number."""
    if input.numel() != 1:
        raise RuntimeError(
            f"a Tensor with {input.numel()} elements cannot be converted to Scalar"
        )
    return _host(input).reshape(()).item()


def tolist(input):
    """The tensor as (nested) Python lists of numbers."""
    return _host(input).tolist()


def to_numpy(input, force=False):
    """``x.numpy()``: shares memory with a CPU tensor."""
    if input._rg and not force:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    if input.device.type != "cpu" and not force:
        raise TypeError(
            f"can't convert {input.device} device type tensor to numpy. Use Tensor.cpu() to copy "
            "the tensor to host memory first."
        )
    return _host(input)


def array_protocol(input, dtype=None, copy=None):
    """``np.asarray(x)`` for dense CPU tensors (NumPy 2 ``copy=`` keyword honoured)."""
    if input.layout is not strided:
        raise TypeError(
            f"can't convert {input.layout.name} layout tensor to numpy. Use Tensor.to_dense() first."
        )
    if input.device.type != "cpu":
        raise TypeError(
            f"can't convert {input.device} device type tensor to numpy. Use Tensor.cpu() first."
        )
    a = input._data
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError("__array__: a dtype conversion needs a copy, but copy=False was given")
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


def to_bool(input):
    if input.numel() != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with more than one value is ambiguous (it has {input.numel()} "
            "elements); use .any() or .all()"
        )
    return bool(item(input))


def scalar_value(input, kind):
    if input.numel() != 1:
        raise TypeError(f"only one element tensors can be converted to Python scalars")
    return item(input)


def index_value(input):
    if input.numel() != 1 or input.dtype.is_floating_point or input.dtype.is_complex:
        raise TypeError(
            "only integer tensors of a single element can be converted to an index"
        )
    return int(item(input))


def payload_numpy(t):
    return _host(t)


def is_number(x):
    return isinstance(x, numbers.Number)


# ---- repr ----

def tensor_repr(t):
    """torch-like repr: ``tensor([...], dtype=..., requires_grad=True)``."""
    if t.layout is not strided:
        from ..sparse import _repr  # noqa: F401 - sparse layouts print their payload

        return _repr.sparse_repr(t)
    a = _host(t)
    body = _format_array(a, t.dtype)
    extras = []
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.dtype not in (D.get_default_dtype(), D.int64, D.bool) and not (
        t.dtype is D.default_complex()
    ):
        extras.append(f"dtype={t.dtype!r}")
    if a.size == 0 and a.ndim != 1:
        extras.insert(0, f"size={tuple(a.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    inner = body if not extras else body + ", " + ", ".join(extras)
    return f"tensor({inner})"


def _format_array(a, dt):
    if a.size == 0:
        return "[]"
    opts = {"separator": ", ", "prefix": "tensor(", "threshold": 1000, "edgeitems": 3,
            "max_line_width": 80}
    if dt.is_floating_point:
        finite = a[np.isfinite(a)] if a.size else a
        as_int = finite.size > 0 and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8
        if as_int:
            return np.array2string(a, formatter={"float_kind": lambda v: _fmt_int_float(v)}, **opts)
        return np.array2string(a, precision=4, floatmode="fixed", suppress_small=False,
                               formatter=None, **opts)
    if dt is D.bool:
        return np.array2string(a, formatter={"bool": lambda v: "True" if v else "False"}, **opts)
    return np.array2string(a, **opts)


def _fmt_int_float(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.0f}."
