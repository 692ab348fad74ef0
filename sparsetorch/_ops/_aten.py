"""``torch.ops`` (``from torch._ops import ops``): operator namespaces by name.

``ops.aten.<name>`` is an :class:`OpOverloadPacket` that calls sparsetorch's op of that name:
the top-level op (``_ops``), else the Tensor method (``aten.view(x, shape)``), else the
``nn.functional`` / ``linalg`` / ``special`` function (``aten.gelu``, ``aten.linalg_vector_norm``,
``aten.special_erfcx``), else a few aten-only spellings (``_softmax``, ``_to_copy``,
``_unsafe_view``, ``slice``). Overloads (``aten.add.Tensor``, ``.Scalar``, ``.default``,
``.out``...) call the same function: sparsetorch's ops take every overload's arguments.
Unknown operators raise torch's AttributeError. ``ops.quantized`` holds the 8-bit row-wise
embedding bags (``quantized.py``); other namespaces (``ops.prims``, ``ops.mylib``) exist, as in
torch, and hold no operators.

The library modules are looked up in ``sys.modules`` (the package imports them all), never
imported from here: this floor imports only downward.
"""

import sys
import types

from . import quantized as _quantized

__all__ = ["OpOverload", "OpOverloadPacket", "ops"]

# overload names that the packets accept (torch's common ones; each calls the same function)
_OVERLOADS = frozenset((
    "default", "Tensor", "Scalar", "out", "Scalar_out", "Tensor_out", "Tensor_Scalar",
    "Scalar_Tensor", "Tensor_Tensor", "int", "float", "dim", "dim_IntList", "dims", "self",
    "other", "input", "names", "using_ints", "using_sizes", "correction", "values", "indices",
    "src", "value", "reduce", "two", "memory_format", "dtype", "device", "start", "start_step",
    "float_out", "grad_input", "prim_dtype", "prim_Device", "Tensor_mode", "Scalar_mode",
))


def _slice(x, dim=0, start=None, end=None, step=1):
    return x[(slice(None),) * (dim % max(x.dim(), 1)) + (slice(start, end, step),)]


def _to_copy(x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    return x.to(device=device if device is not None else x.device,
                dtype=dtype if dtype is not None else x.dtype, copy=True)


def _functional(name):
    m = sys.modules.get("sparsetorch.nn.functional")
    return getattr(m, name, None) if m is not None else None


_ALIASES = {
    "_softmax": lambda x, dim, half_to_float=False: _functional("softmax")(x, dim),
    "_log_softmax": lambda x, dim, half_to_float=False: _functional("log_softmax")(x, dim),
    "_unsafe_view": lambda x, size: x.reshape(size),
    "_to_copy": _to_copy,
    "slice": _slice,
}


def _resolve(name):
    """The sparsetorch function for aten operator ``name``, or None."""
    if name.startswith("__"):
        return None
    pkg = sys.modules[__name__.rsplit(".", 1)[0]]  # sparsetorch._ops
    fn = getattr(pkg, name, None)
    if callable(fn) and not isinstance(fn, (type, types.ModuleType)):
        return fn
    if name in _ALIASES:
        return _ALIASES[name]
    tensor = sys.modules["sparsetorch._tensor"].Tensor
    meth = getattr(tensor, name, None) if not name.startswith("_") else None
    if callable(meth) and not isinstance(meth, type):
        return meth
    for prefix, module in (("linalg_", "sparsetorch.linalg"), ("special_", "sparsetorch.special")):
        if name.startswith(prefix):
            m = sys.modules.get(module)
            fn = getattr(m, name[len(prefix):], None) if m is not None else None
            if callable(fn):
                return fn
    fn = _functional(name)
    return fn if callable(fn) and not isinstance(fn, type) else None


class OpOverload:
    """One overload of an operator (``aten.add.Tensor``): calls the sparsetorch op."""

    def __init__(self, packet, overload):
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"

    def __call__(self, *args, **kwargs):
        return self.overloadpacket._fn(*args, **kwargs)

    def name(self):
        return f"{self.overloadpacket._qualified_op_name}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.overloadpacket}.{self._overloadname}"


class OpOverloadPacket:
    """All overloads of an operator (``aten.add``); calling it calls the sparsetorch op."""

    def __init__(self, namespace, name, fn):
        self._namespace = namespace
        self.__name__ = name
        self._qualified_op_name = f"{namespace}::{name}"
        self._fn = fn
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, overload):
        if overload.startswith("__") or overload not in _OVERLOADS:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{overload}'")
        op = OpOverload(self, overload)
        setattr(self, overload, op)
        return op

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self):
        return f"{self._namespace}.{self.__name__}"


class _OpNamespace(types.ModuleType):
    """``ops.<namespace>``: its operators by name (``aten`` resolves to sparsetorch's ops)."""

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        fn = _resolve(op_name) if self.name == "aten" else (
            getattr(_quantized, op_name, None) if self.name == "quantized"
            and op_name in _quantized.__all__ else None)
        if fn is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        packet = OpOverloadPacket(self.name, op_name, fn)
        setattr(self, op_name, packet)
        return packet


class _Ops(types.ModuleType):
    """``torch.ops``: any attribute is an operator namespace."""

    def __init__(self):
        super().__init__("torch.ops")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ns = _OpNamespace(name)
        setattr(self, name, ns)
        return ns

    def load_library(self, path):
        raise NotImplementedError(f"sparsetorch.ops.load_library({path!r}): sparsetorch cannot "
                                  "load compiled torch operator libraries")


ops = _Ops()
