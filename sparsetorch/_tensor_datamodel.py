"""The data model's methods that run ops: conversions (``to``, ``float()``, ``numpy()``...),
autograd entry points, the Python protocols and operators (floor 8, beside ``_tensor_methods``,
which binds them onto ``Tensor``; where an operator only passes ``(self, other)`` on, it binds the
op function itself: ``_tensor_methods._OPERATORS``)."""

from . import _dtype as D
from . import _ops, _torch_warnings
from ._layout import strided
from ._ops import legacy as _legacy
from ._ops import pointwise as _pw  # operators call the op objects directly
from .autograd import engine as _engine
from .autograd import function as _function

__all__ = ["_DataModelForwards"]


class _DataModelForwards:
    """Forwards of the data model's conversions, autograd entry points and Python operators."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        # Tensor(data) / Tensor(*sizes): legacy constructor, float32 as in torch
        return _legacy.tensor_ctor(cls, args, kwargs)

    def stride(self, dim=None):  # written out: torch also takes x.stride(axis=), not handled yet
        return _ops.stride(self, dim)

    def is_contiguous(self, memory_format=None):
        return _ops.is_contiguous(self)

    @property
    def T(self):
        if self.ndim != 2:  # torch's deprecation (once per process)
            _torch_warnings.T_not_2d(self.ndim)
        return _ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    # ---- autograd ----
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        return _function.register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        return _engine.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        _function.retain_grad(self)

    # ---- conversion and interop ----
    def numpy(self, *, force=False):
        return _ops.to_numpy(self, force)

    def __array__(self, dtype=None, copy=None):
        return _ops.array_protocol(self, dtype, copy)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _ops.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return _ops.dlpack_device(self)

    def to(self, *args, **kwargs):
        return _ops.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking=False):
        return _ops.type_(self, dtype, non_blocking)

    def type_as(self, other):
        return _ops.to(self, other.dtype)

    def cpu(self):
        return _ops.to(self, "cpu")

    def cuda(self, device=None, non_blocking=False):
        return _ops.to(self, "cuda" if device is None else device)

    def float(self):
        return _ops.to(self, D.float32)

    def double(self):
        return _ops.to(self, D.float64)

    def half(self):
        return _ops.to(self, D.float16)

    def bfloat16(self):
        return _ops.to(self, D.bfloat16)

    def int(self):
        return _ops.to(self, D.int32)

    def long(self):
        return _ops.to(self, D.int64)

    def short(self):
        return _ops.to(self, D.int16)

    def char(self):
        return _ops.to(self, D.int8)

    def byte(self):
        return _ops.to(self, D.uint8)

    def bool(self):
        return _ops.to(self, D.bool)

    def cfloat(self):
        return _ops.to(self, D.complex64)

    def cdouble(self):
        return _ops.to(self, D.complex128)

    def clone(self, *, memory_format=None):
        return _ops.clone(self)

    def contiguous(self, memory_format=None):
        return _ops.contiguous(self)

    def __repr__(self):
        return _ops.tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0 and self.layout is strided:
            return format(self.item(), spec)
        return object.__format__(self, spec)  # TypeError for a non-empty spec, as torch

    def __bool__(self):
        return _ops.to_bool(self)

    def __float__(self):
        return float(_ops.scalar_value(self, "float"))

    def __int__(self):
        return int(_ops.scalar_value(self, "int"))

    def __index__(self):
        return _ops.index_value(self)

    def __complex__(self):
        return complex(_ops.scalar_value(self, "complex"))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __reduce_ex__(self, proto):
        return _ops.reduce_tensor(self)

    def __deepcopy__(self, memo):
        return _ops.deepcopy_tensor(self, memo)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _ops.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.tensor_new_zeros(self, size, dtype, device, requires_grad, "new_zeros")

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.tensor_new_zeros(self, size, dtype, device, requires_grad, "new_empty")

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return _ops.full(size, fill_value, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)

    # ---- Python operators ----
    def __add__(self, other):
        return _pw._add(self, other)

    def __radd__(self, other):
        return _pw._add(self, other)

    def __iadd__(self, other):
        return _ops.add_(self, other)

    def __sub__(self, other):
        return _pw._sub(self, other)

    def __rsub__(self, other):
        return _ops.rsub(self, other)

    def __isub__(self, other):
        return _ops.sub_(self, other)

    def __mul__(self, other):
        return _pw.mul(self, other)

    def __rmul__(self, other):
        return _pw.mul(self, other)

    def __imul__(self, other):
        return _ops.mul_(self, other)

    def __truediv__(self, other):
        return _pw._div(self, other)

    def __rtruediv__(self, other):
        return _ops.rdiv(self, other)

    def __itruediv__(self, other):
        return _ops.div_(self, other)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.rfloordiv(self, other)

    def __ifloordiv__(self, other):
        return _ops.floor_divide_(self, other)

    def __mod__(self, other):
        return _ops.remainder(self, other)

    def __rmod__(self, other):
        return _ops.rremainder(self, other)

    def __imod__(self, other):
        return _ops.remainder_(self, other)

    def __pow__(self, other):
        return _ops.pow(self, other)

    def __rpow__(self, other):
        return _ops.rpow(self, other)

    def __ipow__(self, other):
        return _ops.pow_(self, other)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.rmatmul(self, other)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.bitwise_not(self)

    def __and__(self, other):
        return _ops.bitwise_and(self, other)

    def __rand__(self, other):
        return _ops.bitwise_and(self, other)

    def __iand__(self, other):
        return _ops.bitwise_and_(self, other)

    def __or__(self, other):
        return _ops.bitwise_or(self, other)

    def __ror__(self, other):
        return _ops.bitwise_or(self, other)

    def __ior__(self, other):
        return _ops.bitwise_or_(self, other)

    def __xor__(self, other):
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _ops.bitwise_xor(self, other)

    def __ixor__(self, other):
        return _ops.bitwise_xor_(self, other)

    def __eq__(self, other):
        return _pw.eq(self, other)

    def __ne__(self, other):
        return _pw.ne(self, other)

    def __lt__(self, other):
        return _pw.lt(self, other)

    def __le__(self, other):
        return _pw.le(self, other)

    def __gt__(self, other):
        return _pw.gt(self, other)

    def __ge__(self, other):
        return _pw.ge(self, other)

    def __getitem__(self, key):
        return _ops.getitem(self, key)

    def __setitem__(self, key, value):
        _ops.setitem(self, key, value)
