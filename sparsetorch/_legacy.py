"""torch's legacy typed tensor classes and ``set_default_tensor_type`` (libraries floor).

``FloatTensor``, ``DoubleTensor``, ``HalfTensor``, ``BFloat16Tensor``, ``LongTensor``,
``IntTensor``, ``ShortTensor``, ``CharTensor``, ``ByteTensor``, ``BoolTensor`` at the top level,
the same under ``sparse`` (COO; no ``BoolTensor``, as torch), ``cuda`` and ``cuda.sparse``.

As in torch, these are not subclasses of ``Tensor``: calling one builds a plain ``Tensor`` of
its dtype, layout and device (``_ops/legacy.py`` parses the argument forms), and
``isinstance(x, FloatTensor)`` holds exactly when ``x`` is a tensor of that dtype, layout and
device type (the metaclass's ``__instancecheck__``). The CUDA classes need a CUDA device; without
one, calling them raises torch's ``TypeError`` ("type torch.cuda.FloatTensor not available").
Attributes the classes do not define themselves (``FloatTensor.add``) are ``Tensor``'s, as in torch.
The faces re-export: ``sparsetorch``, ``sparsetorch.sparse``, ``sparsetorch.cuda``,
``sparsetorch.cuda.sparse``.
"""

import warnings

from . import _dtype as D
from ._layout import sparse_coo, strided
from ._ops import legacy as _L
from ._ops.conversion import _TYPE_NAMES, parse_type_name
from ._tensor import Tensor

__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "set_default_tensor_type",
    "typename",
]

_KINDS = (
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"), ("LongTensor", "int64"), ("IntTensor", "int32"),
    ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"),
    ("BoolTensor", "bool"),
)


class tensortype(type):
    """The metaclass of the typed classes (torch's ``torch.tensortype``)."""

    @property
    def dtype(cls):
        dt = getattr(D, cls._dtype_name, None)  # None: this build has no such dtype
        if dt is None:
            raise TypeError(f"type {cls._legacy_name} not available: sparsetorch has no "
                            f"{cls._dtype_name} dtype")
        return dt

    @property
    def layout(cls):
        return cls._layout

    @property
    def is_cuda(cls):
        return cls._device_type == "cuda"

    @property
    def is_sparse(cls):
        return cls._layout is sparse_coo

    @property
    def is_sparse_csr(cls):
        return False

    @property
    def is_xpu(cls):
        return False

    def __instancecheck__(cls, obj):
        return (
            isinstance(obj, Tensor)
            and obj.dtype is getattr(D, cls._dtype_name, None)
            and obj.layout is cls._layout
            and obj.device.type == cls._device_type
        )

    def __call__(cls, *args, **kwargs):
        return _L.legacy_new(cls.dtype, _device_of(cls), cls._layout, args, kwargs)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(Tensor, name)
        except AttributeError:
            raise AttributeError(
                f"type object '{cls.__name__}' has no attribute '{name}'"
            ) from None


tensortype.__module__ = "sparsetorch"


def _device_of(cls):
    """The device a typed class builds on: the CPU, or the current CUDA device."""
    from ._device import CPU, device

    if cls._device_type == "cpu":
        return CPU
    from . import _backend
    from .cuda import _runtime as cuda

    if not cuda.is_available():
        raise TypeError(
            f"type {cls._legacy_name} not available. sparsetorch has no CUDA device here "
            f"({_backend.cuda_unavailable_reason()})."
        )
    return device("cuda", cuda.current_device())


def _make(module, name, dtype_name, layout, device_type):
    return tensortype(name, (), {
        "__module__": "sparsetorch" + module,
        "__qualname__": name,
        "__slots__": (),
        "_dtype_name": dtype_name,
        "_layout": layout,
        "_device_type": device_type,
        "_legacy_name": f"torch{module}.{name}",
        "__doc__": f"Legacy typed tensor class ``torch{module}.{name}``: ``{name}(*sizes)`` or "
                   f"``{name}({'indices, values, size' if layout is sparse_coo else 'data'})`` "
                   f"builds a {dtype_name} {layout.name} tensor on the "
                   f"{device_type.upper()}; ``isinstance(x, {name})`` checks dtype, layout and device.",
    })


def _family(module, layout, device_type, sparse):
    return {name: _make(module, name, dt, layout, device_type)
            for name, dt in _KINDS if not (sparse and dt == "bool")}


CPU_TYPES = _family("", strided, "cpu", False)
SPARSE_TYPES = _family(".sparse", sparse_coo, "cpu", True)
CUDA_TYPES = _family(".cuda", strided, "cuda", False)
CUDA_SPARSE_TYPES = _family(".cuda.sparse", sparse_coo, "cuda", True)

FloatTensor = CPU_TYPES["FloatTensor"]
DoubleTensor = CPU_TYPES["DoubleTensor"]
HalfTensor = CPU_TYPES["HalfTensor"]
BFloat16Tensor = CPU_TYPES["BFloat16Tensor"]
LongTensor = CPU_TYPES["LongTensor"]
IntTensor = CPU_TYPES["IntTensor"]
ShortTensor = CPU_TYPES["ShortTensor"]
CharTensor = CPU_TYPES["CharTensor"]
ByteTensor = CPU_TYPES["ByteTensor"]
BoolTensor = CPU_TYPES["BoolTensor"]

_FAMILIES = {(False, False): CPU_TYPES, (False, True): SPARSE_TYPES,
             (True, False): CUDA_TYPES, (True, True): CUDA_SPARSE_TYPES}


def _class_of(name):
    """The typed class a name such as ``'torch.sparse.FloatTensor'`` denotes (or raise)."""
    if name.split(".")[0] not in ("torch", "sparsetorch"):
        raise ModuleNotFoundError(f"No module named '{name.split('.')[0]}'")
    parsed = parse_type_name(name)
    if parsed is None or name.endswith(".Tensor"):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    dtype, cuda, sparse = parsed
    return _FAMILIES[cuda, sparse][_TYPE_NAMES[dtype.name]]


_WARNED_DEFAULT_TYPE = []  # non-empty once set_default_tensor_type has warned


def set_default_tensor_type(t, /):
    """Deprecated in torch 2.1 (use ``set_default_dtype``): sets the default floating dtype from
    a dense floating typed class or its name. CUDA classes are refused: sparsetorch has no
    default-device setting (pass ``device=`` to the factories). Warns once per process, as
    torch (TORCH_WARN_ONCE)."""
    if not _WARNED_DEFAULT_TYPE:
        _WARNED_DEFAULT_TYPE.append(True)
        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
            UserWarning,
            stacklevel=2,
        )
    if isinstance(t, str):
        t = _class_of(t)
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t.is_cuda:
        _device_of(t)  # torch's TypeError without a CUDA device
        raise RuntimeError(
            f"set_default_tensor_type({t._legacy_name}): sparsetorch has no default device "
            "setting; use set_default_dtype() and pass device='cuda' to the factories"
        )
    if t.is_sparse:
        raise TypeError("only dense types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)


def typename(obj, /):
    """torch.typename: a tensor's legacy type name (``'torch.FloatTensor'``), else the dotted
    name of the object (a class or function) or of its class; builtins without module."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
