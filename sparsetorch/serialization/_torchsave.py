"""Writing PyTorch's checkpoint formats, readable by ``torch.load(f, weights_only=True)``.

The object tree is pickled (protocol 2 by default, as torch) by a pickler that writes our
tensors, dtypes, devices, layouts and sizes under torch's names (``torch._utils.
_rebuild_tensor_v2``, ``torch.float32``, ...) without importing torch: those names are written
as plain GLOBAL instructions. Each storage goes to its own member ``archive/data/<key>``,
uncompressed and aligned to 64 bytes. Strided tensors that view one NumPy buffer share one
storage (with offsets and strides), as torch's views share theirs.
"""

import io
import pickle
import struct
from collections import OrderedDict

import numpy as np

from .. import _dtype as D
from .._device import device
from .._layout import layout, sparse_coo, strided
from .._tensor import Size, Tensor
from ..nn.parameter import Buffer, Parameter
from ._format import _as_bytes, _ZipWriter
from ._rebuild import STORAGE_NAMES

__all__ = ["write_legacy", "write_torch_zip"]

_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


class _Global:
    """A name written as a GLOBAL instruction (``torch._utils``, ``_rebuild_tensor_v2``)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is a name for the pickle only")


_GLOBALS = {}


def _g(module, name):
    g = _GLOBALS.get((module, name))
    if g is None:
        g = _GLOBALS[(module, name)] = _Global(module, name)
    return g


class _StorageRef:
    """One storage to write: a flat little-endian byte buffer, its dtype, key and location."""

    __slots__ = ("buf", "dtype", "key", "location", "numel")

    def __init__(self, buf, dt, key, location, numel):
        self.buf, self.dtype, self.key, self.location, self.numel = buf, dt, key, location, numel


class _TorchPickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)  # noqa: RUF012 - pickle's own class-level table

    def __init__(self, file, protocol, legacy=False, uses=None):
        super().__init__(file, protocol)
        self.legacy = legacy
        self.counting = uses is None  # the first pass only counts the tensors viewing each buffer
        self.uses = {} if uses is None else uses  # id(root ndarray) -> number of tensors
        self.storages = []  # _StorageRef in key order
        self.roots = {}  # id(root ndarray) -> (root, _StorageRef)

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            pid = ("storage", _g("torch", STORAGE_NAMES[obj.dtype.name]), obj.key, obj.location, obj.numel)
            return pid + (None,) if self.legacy else pid
        return None

    # ---- storages ----
    def _new_storage(self, flat, dt, location):
        buf = None if self.counting else _as_bytes(flat)
        ref = _StorageRef(buf, dt, str(len(self.storages)), location, flat.size)
        self.storages.append(ref)
        return ref

    def _dense_storage(self, a, dt, location):
        """(storage, offset, stride) for strided data ``a``: tensors viewing one plain
        C-contiguous root buffer share that buffer's storage (as torch's views share theirs); a
        lone view is stored as its own elements, never the rest of its base."""
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if self.counting:
            self.uses[id(root)] = self.uses.get(id(root), 0) + 1
        isz = a.dtype.itemsize
        start = root.__array_interface__["data"][0] if root.size else 0
        off = a.__array_interface__["data"][0] - start if root.size else 0
        if (location == "cpu" and self.uses.get(id(root), 0) > 1 and root.base is None
                and root.flags.c_contiguous and root.dtype == a.dtype and a.size and off % isz == 0
                and all(s >= 0 and s % isz == 0 for s in a.strides)):
            hit = self.roots.get(id(root))
            if hit is None:
                hit = self.roots[id(root)] = (root, self._new_storage(root.reshape(-1), dt, location))
            return hit[1], off // isz, tuple(s // isz for s in a.strides)
        c, stride = _contiguous(a)
        return self._new_storage(c.reshape(-1), dt, location), 0, stride

    def _tensor_args(self, t, location):
        a = t._data if t.device.type == "cpu" else t.detach().cpu()._data
        st, off, stride = self._dense_storage(a, t.dtype, location)
        return (st, off, tuple(int(s) for s in t.shape), stride, bool(t._rg), OrderedDict())

    def _component(self, a, dt, location):
        """A sparse tensor's index or value array, as a plain tensor of its own storage."""
        c, stride = _contiguous(a)
        st = self._new_storage(c.reshape(-1), dt, location)
        return (_g("torch._utils", "_rebuild_tensor_v2"), (st, 0, tuple(c.shape), stride, False, OrderedDict()))


def _contiguous(a):
    """``a`` as a C-contiguous array (0-d stays 0-d, unlike ``np.ascontiguousarray``) and its
    strides in elements."""
    c = a if a.flags.c_contiguous else a.copy(order="C")
    stride, acc = [], 1
    for n in reversed(c.shape):
        stride.append(acc)
        acc *= max(n, 1)
    return c, tuple(reversed(stride))


def _location(t):
    dev = t.device
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _save_global(self, obj):
    self.write(b"c" + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
    self.memoize(obj)


class _Reduced:
    """A (function, args) pair pickled as function(*args): a sparse tensor's components."""

    __slots__ = ("args", "fn")

    def __init__(self, fn_args):
        self.fn, self.args = fn_args


def _save_reduced(self, obj):
    self.save_reduce(obj.fn, obj.args)


def _save_tensor(self, t):
    loc = _location(t)
    state = {k: v for k, v in (getattr(t, "__dict__", None) or {}).items()
             if not (type(t) is Buffer and k == "persistent")}
    if t.layout is strided:
        fn, args = _g("torch._utils", "_rebuild_tensor_v2"), self._tensor_args(t, loc)
    else:
        host = t if t.device.type == "cpu" else t.detach().cpu()
        p = host._data
        size = Size(int(s) for s in t.shape)
        if t.layout is sparse_coo:
            data = (_Reduced(self._component(p.indices, D.int64, loc)),
                    _Reduced(self._component(p.values, t.dtype, loc)), size, bool(p.coalesced))
        else:
            idt = D._FROM_NP[p.crow.dtype]
            data = (_Reduced(self._component(p.crow, idt, loc)), _Reduced(self._component(p.col, idt, loc)),
                    _Reduced(self._component(p.values, t.dtype, loc)), size)
        fn, args = _g("torch._utils", "_rebuild_sparse_tensor"), (t.layout, data)
    if type(t) is Parameter:
        inner = _Reduced((fn, args if t.layout is not strided else args[:4] + (False, OrderedDict())))
        if state:
            self.save_reduce(_g("torch._utils", "_rebuild_parameter_with_state"),
                             (inner, bool(t._rg), OrderedDict(), state), obj=t)
        else:
            self.save_reduce(_g("torch._utils", "_rebuild_parameter"), (inner, bool(t._rg), OrderedDict()), obj=t)
    elif state:
        self.save_reduce(_g("torch._tensor", "_rebuild_from_type_v2"), (fn, _g("torch", "Tensor"), args, state),
                         obj=t)
    else:
        self.save_reduce(fn, args, obj=t)


def _save_dtype(self, d):
    self.save(_g("torch", d.name))


def _save_device(self, d):
    self.save_reduce(_g("torch", "device"), (d.type,) if d.index is None else (d.type, d.index), obj=d)


def _save_layout(self, lay):
    self.save_reduce(_g("torch.serialization", "_get_layout"), (f"torch.{lay.name}",), obj=lay)


def _save_size(self, s):
    self.save_reduce(_g("torch", "Size"), (tuple(int(x) for x in s),), obj=s)


def _save_bytes(self, b):
    if self.proto >= 3:
        pickle._Pickler.save_bytes(self, b)
    else:  # as protocol 2 does, but b"" too (pickle writes builtins.bytes(), which torch refuses)
        self.save_reduce(_g("_codecs", "encode"), (str(b, "latin1"), "latin1"), obj=b)


_TorchPickler.dispatch.update({
    bytes: _save_bytes,
    _Global: _save_global, _Reduced: _save_reduced, Tensor: _save_tensor, Parameter: _save_tensor,
    Buffer: _save_tensor, D.dtype: _save_dtype, device: _save_device, layout: _save_layout,
    Size: _save_size,
})


class _Null:
    def write(self, b):
        pass


def _pickle(obj, protocol, legacy=False):
    """(pickle bytes, storages): a counting pass finds which buffers several tensors view."""
    counter = _TorchPickler(_Null(), protocol, legacy)
    counter.dump(obj)
    f = io.BytesIO()
    p = _TorchPickler(f, protocol, legacy, counter.uses)
    p.dump(obj)
    return f.getbuffer(), p.storages


def write_torch_zip(fh, obj, protocol=2, patchable=False, prefix="archive"):
    """Pickle ``obj`` (errors surface before anything is written) and write the archive."""
    data, storages = _pickle(obj, protocol)
    w = _ZipWriter(fh, patchable)
    w.add(f"{prefix}/data.pkl", np.frombuffer(data, np.uint8))
    w.add(f"{prefix}/.format_version", np.frombuffer(b"1", np.uint8))
    w.add(f"{prefix}/.storage_alignment", np.frombuffer(b"64", np.uint8))
    w.add(f"{prefix}/byteorder", np.frombuffer(b"little", np.uint8))
    for s in storages:
        w.add(f"{prefix}/data/{s.key}", s.buf)
    w.add(f"{prefix}/version", np.frombuffer(b"3\n", np.uint8))
    w.close()


def write_legacy(fh, obj, protocol=2):
    """torch's legacy (pre-1.6) stream: magic, protocol, sys info, the object, the storage
    keys, then each storage as an int64 element count and its bytes."""
    data, storages = _pickle(obj, protocol, legacy=True)
    head = io.BytesIO()
    for x in (_MAGIC, _LEGACY_PROTOCOL, {"protocol_version": _LEGACY_PROTOCOL, "little_endian": True,
                                         "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(x, head, protocol=protocol)
    fh.write(head.getvalue())
    fh.write(data)
    pickle.dump([s.key for s in storages], fh, protocol=protocol)
    for s in storages:
        fh.write(struct.pack("<q", s.numel))
        fh.write(s.buf)
