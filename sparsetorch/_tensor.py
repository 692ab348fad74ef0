"""Tensor as data: metadata + payload + autograd fields, and ``wrap`` (payload -> Tensor).

Floor 3 (docs/design-notes.md, "floors"): this module imports only the ground floor. No math
and no op lives here; the methods that run ops (``x.mul(y)``, ``x + y``, ``x.backward()``...) are
bound onto the class once, from the top, by ``_tensor_methods.py``. The payload is a ``be.xp``
array for the strided layout and a sparse payload object for sparse layouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, SupportsIndex, overload

from ._layout import strided

if TYPE_CHECKING:  # the checker sees Tensor's methods and attributes, declared in _tensor_api.py
    from ._tensor_api import TensorAPI

__all__ = ["Tensor", "Size", "wrap", "cast_payload"]


class Size(tuple[int, ...]):
    """torch.Size: a tuple of ints."""

    __slots__ = ()

    def __repr__(self):
        return f"sparsetorch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    @overload
    def __getitem__(self, i: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Size: ...
    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: tuple[int, ...]) -> Size:  # type: ignore[override]
        return Size(tuple(self) + tuple(other))


if TYPE_CHECKING:
    _TypedBase = TensorAPI["Tensor", Size]
else:
    _TypedBase = object


class Tensor(_TypedBase):
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

    # ---- metadata ----
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim(dim, self.ndim, "size")]

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def dim(self) -> int:
        return len(self._data.shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self) -> int:
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def is_sparse(self) -> bool:
        return self.layout.name == "sparse_coo"

    @property
    def is_sparse_csr(self) -> bool:
        return self.layout.name == "sparse_csr"

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def __hash__(self) -> int:
        return id(self)

    # ---- autograd ----
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
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
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        self.dtype = value.dtype
        self.device = value.device
        self.layout = value.layout

    @property
    def _version(self) -> int:
        return self._vc[0] if self._vc else 0

    @property
    def output_nr(self) -> int:
        return self._extra.get("output_nr", 0) if self._extra else 0

    @property
    def _base(self) -> Tensor | None:
        return self._extra.get("base") if self._extra else None

    def _is_view(self) -> bool:
        return self._base is not None

    def detach(self) -> Tensor:
        t = wrap(self._data, self.dtype, self.device, self.layout)
        if self._vc is None:
            self._vc = [0]
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        if self._extra and self._extra.get("base") is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))


def _dim(dim, ndim, what):
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what}(): dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n



_new = object.__new__


def wrap(data, dtype, device, lay):
    """A Tensor over payload ``data`` (no copy, no graph): every op's result is built here."""
    t = _new(Tensor)
    t._data = data
    t.dtype = dtype
    t.device = device
    t.layout = lay
    t._rg = False
    t.grad_fn = None  # (grad: the slot stays empty, read as None by the .grad property)
    t._vc = None
    t._extra = None
    return t


def cast_payload(t, dt):
    """The payload of tensor ``t`` in dtype ``dt`` (no copy when it already is)."""
    if t.dtype is dt:
        return t._data
    if t.layout is strided:
        return t._data.astype(dt.np)
    return t._data.astype(dt)  # sparse payloads implement astype(dtype)
