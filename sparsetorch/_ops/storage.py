"""``Tensor.storage()``, ``Tensor.untyped_storage()`` and ``torch.is_storage``: read-only views.

sparsetorch has no Storage objects: a dense tensor's elements live in a NumPy/CuPy array, and a
view shares the array it was sliced from. These calls return a small *read-only* object over that
root array with the parts research code reads: ``data_ptr()`` (so ``a.untyped_storage().data_ptr()
== b.untyped_storage().data_ptr()`` tells whether two tensors share memory), ``size()``,
``nbytes()``, ``element_size()``, ``tolist()``, ``len()``, indexing, ``dtype`` (typed only),
``device``, ``is_cuda``, ``is_sparse``, ``untyped()``. They cannot be built, resized, filled or
copied into, and they are not ``torch.UntypedStorage`` / ``torch.TypedStorage`` instances. Sharing
follows our arrays: where an op copies (torch would view), the storages differ.
Sparse tensors raise torch's ``NotImplementedError`` (torch has no storage for them either).
"""

import warnings

from .._dtype import uint8
from .._layout import sparse_coo, strided

__all__ = ["is_storage"]

_TYPED_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
_WARNED = []


def _root(arr):
    """The array that owns the memory ``arr`` looks into (follows ``.base`` through arrays)."""
    while True:
        base = getattr(arr, "base", None)
        if not (hasattr(base, "__array_interface__") or hasattr(base, "__cuda_array_interface__")):
            return arr
        arr = base


def _address(arr):
    iface = getattr(arr, "__cuda_array_interface__", None) or arr.__array_interface__
    return iface["data"][0] if arr.size else 0


class _Storage:
    """Read-only view of the memory behind a dense tensor (see the module docstring)."""

    __slots__ = ("_arr", "_device", "_dtype")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, arr, device, dtype):
        self._arr, self._device, self._dtype = arr, device, dtype

    def __new__(cls, *args, **kwargs):
        if len(args) != 3 or kwargs:
            raise RuntimeError("sparsetorch storages are read-only views: get one from "
                               "tensor.untyped_storage() or tensor.storage()")
        return super().__new__(cls)

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    def get_device(self):
        return self._device.index if self.is_cuda else -1

    def data_ptr(self):
        return _address(self._arr)

    def nbytes(self):
        return int(self._arr.nbytes)

    def element_size(self):
        return self._dtype.itemsize

    def size(self):
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def _flat(self):
        """The root memory, in memory order, read as this storage's element type (host array)."""
        a = self._arr
        if hasattr(a, "get"):  # CuPy
            a = a.get()
        if not a.flags.c_contiguous:
            a = a.T if a.flags.f_contiguous else a.copy()
        return a.reshape(-1).view(self._dtype.np)

    def tolist(self):
        return self._flat().tolist()

    def __getitem__(self, idx):
        if not isinstance(idx, int):
            raise RuntimeError("sparsetorch storages support integer indexing only; "
                               "use the tensor for slices")
        return self._flat()[idx].item()

    def __iter__(self):
        return iter(self.tolist())


class _UntypedStorage(_Storage):
    __slots__ = ()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[sparsetorch storage (untyped, read-only) of size {self.size()}]"

    def untyped(self):
        return self


class _TypedStorage(_Storage):
    __slots__ = ()

    @property
    def dtype(self):
        return self._dtype

    def untyped(self):
        return _UntypedStorage(self._arr, self._device, uint8)

    def __repr__(self):
        return (f"[sparsetorch storage (dtype={self._dtype}, device={self._device}, read-only) of "
                f"size {self.size()}]")


def _dense_root(input):
    if input.layout is not strided:
        kind = "SparseTensorImpl" if input.layout is sparse_coo else "SparseCsrTensorImpl"
        raise NotImplementedError(f"Cannot access storage of {kind}")
    return _root(input._data)


def untyped_storage(input):
    """A read-only byte view of the memory behind ``input`` (``Tensor.untyped_storage()``)."""
    return _UntypedStorage(_dense_root(input), input.device, uint8)


def storage(input):
    """A read-only typed view of the memory behind ``input`` (``Tensor.storage()``; warns as
    torch does, once, that TypedStorage is deprecated)."""
    root = _dense_root(input)
    if not _WARNED:  # torch warns once a process
        _WARNED.append(True)
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=3)
    return _TypedStorage(root, input.device, input.dtype)


def is_storage(obj):
    r"""Returns True if ``obj`` is a storage object (here: one returned by ``Tensor.storage()`` or
    ``Tensor.untyped_storage()``)."""
    return isinstance(obj, _Storage)
