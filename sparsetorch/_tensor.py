"""Tensor: metadata + payload + autograd fields. Methods forward to the op table (``_ops``).

No math lives here: every method is a one-line forward, grouped by banner. The payload is a
``be.xp`` array for the strided layout and a sparse payload object for sparse layouts.
"""

from . import _dispatch
from . import _dtype as D
from ._layout import strided
from ._tensor_methods import TensorMethods

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """torch.Size: a tuple of ints."""

    __slots__ = ()

    def __repr__(self):
        return f"sparsetorch.Size([{', '.join(map(str, self))}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


class Tensor(TensorMethods):
    """A multi-dimensional array of one dtype on one device, dense (strided) or sparse."""

    # __dict__: users may set their own attributes on tensors, as in torch (created lazily)
    # (a dict: its values are the public attributes' docstrings for help())
    __slots__ = {
        "_data": None, "_rg": None, "_vc": None, "_extra": None, "__weakref__": None, "__dict__": None,
        "dtype": "The data type of ``self`` (a ``sparsetorch.dtype``).",
        "device": "The device ``self`` is stored on (a ``sparsetorch.device``).",
        "layout": "The memory layout of ``self``: ``strided``, ``sparse_coo`` or ``sparse_csr``.",
        "grad": "The gradient ``backward()`` accumulated into this leaf (None until then); a sparse "
                "leaf's gradient has the leaf's layout.",
        "grad_fn": "The backward node that produced ``self`` (None for leaves and tensors that do "
                   "not require grad).",
    }
    __array_priority__ = 1000  # ndarray (op) Tensor defers to Tensor's reflected operators

    def __new__(cls, *args, **kwargs):
        # Tensor(data) / Tensor(*sizes): legacy constructor, float32 as in torch
        from ._ops import legacy

        return legacy.tensor_ctor(cls, args, kwargs)

    # ---- metadata ----
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim(dim, self.ndim, "size")]

    @property
    def ndim(self):
        return len(self._data.shape)

    def dim(self):
        return len(self._data.shape)

    ndimension = dim

    def numel(self):
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self):
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    @property
    def is_sparse(self):
        return self.layout.name == "sparse_coo"

    @property
    def is_sparse_csr(self):
        return self.layout.name == "sparse_csr"

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def stride(self, dim=None):
        return _ops.stride(self, dim)

    def is_contiguous(self, memory_format=None):
        return _ops.is_contiguous(self)

    def data_ptr(self):
        return _ops.data_ptr(self)

    @property
    def T(self):
        return _ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    # ---- autograd ----
    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use "
                    "a computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients "
                f"(got {self.dtype.name}); convert with .float() first"
            )
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self.dtype = value.dtype
        self.device = value.device
        self.layout = value.layout

    @property
    def _version(self):
        return self._vc[0] if self._vc else 0

    @property
    def output_nr(self):
        return self._extra.get("output_nr", 0) if self._extra else 0

    @property
    def _base(self):
        return self._extra.get("base") if self._extra else None

    def _is_view(self):
        return self._base is not None

    def detach(self):
        t = _dispatch.wrap(self._data, self.dtype, self.device, self.layout)
        if self._vc is None:
            self._vc = [0]
        t._vc = self._vc
        return t

    def detach_(self):
        if self._extra and self._extra.get("base") is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        from .autograd import function

        return function.register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        return _engine.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        from .autograd import function

        function.retain_grad(self)

    @property
    def retains_grad(self):
        return bool(self._extra and self._extra.get("retains_grad"))

    # ---- conversion and interop ----
    def item(self):
        return _ops.item(self)

    def tolist(self):
        return _ops.tolist(self)

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

    def __hash__(self):
        return id(self)

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


def _dim(dim, ndim, what):
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what}(): dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


_dispatch.Tensor = Tensor
from . import _ops  # noqa: E402  (ops import Tensor; methods resolve ops at call time)
from . import _tensor_methods  # noqa: E402
from ._ops import pointwise as _pw  # noqa: E402  (operators call the op objects directly)

_tensor_methods._ops = _ops
_tensor_methods._document(Tensor)  # docstrings of the methods (forwards: from the ops)
from .autograd import engine as _engine  # noqa: E402
