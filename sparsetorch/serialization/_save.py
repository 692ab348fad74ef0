"""sparsetorch.save: walk the object tree into a JSON manifest plus a list of host arrays."""

import io
import json
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np

from .. import _dtype as D
from .._device import device
from .._layout import layout, sparse_coo, sparse_csr, strided
from .._tensor import Size, Tensor
from ..nn.parameter import Buffer, Parameter
from ._format import atomic_write, dtype_name, write_archive
from ._torchsave import write_legacy, write_torch_zip

__all__ = ["save", "save_manifest"]

FORMAT, VERSION = "sparsetorch-checkpoint", 1
MAX_DEPTH = 200  # nesting levels; deeper trees are refused on save and on load
_INT64 = 1 << 63
_TENSOR_KINDS = {Tensor: "tensor", Parameter: "parameter", Buffer: "buffer"}


def float_bits(x):
    return struct.pack("<d", x).hex()


def path_str(path):
    return "obj" + "".join(f"[{k!r}]" for k in path)


class _Encoder:
    """One save: ``node(obj)`` returns the JSON node; arrays collect in ``self.arrays``."""

    def __init__(self):
        self.arrays = []
        self.tensors = {}  # id(tensor) -> ref number (a tensor saved twice loads as one object)
        self.keep = []  # keeps memoised objects alive so their ids stay unique during the walk
        self.active = set()  # ids of the containers being walked (cycle detection)
        self.roots = {}  # id(root buffer) -> (root, [(node, view array)]) for strided tensors

    def fail(self, path, what):
        raise TypeError(f"{path_str(path)}: {what}")

    def array(self, a, path):
        name = dtype_name(a.dtype)
        if name is None or a.dtype.hasobject:
            self.fail(path, f"cannot save a NumPy array of dtype {a.dtype} (supported: bool, "
                            "(u)int8-64, float16/32/64, complex64/128)")
        self.arrays.append(a)
        return {"array": len(self.arrays) - 1, "dtype": name, "shape": list(a.shape)}

    def node(self, x, path, depth=0):
        t = type(x)
        if x is None or t is bool or t is str:
            return x
        if t is int:
            return x if -_INT64 <= x < _INT64 else {"T": "int", "hex": hex(x)}
        if t is float:
            return x if x - x == 0 else {"T": "float", "bits": float_bits(x)}  # inf/nan: raw bits
        if t is complex:
            return {"T": "complex", "re": float_bits(x.real), "im": float_bits(x.imag)}
        kind = _TENSOR_KINDS.get(t)
        if kind is not None:
            return self.tensor(x, kind, path, depth)
        if t is D.dtype:
            return {"T": "dtype", "name": x.name}
        if t is device:
            return {"T": "device", "name": str(x)}
        if t is layout:
            return {"T": "layout", "name": x.name}
        if t is Size:
            return {"T": "Size", "items": [int(s) for s in x]}
        if t is bytes or t is bytearray:
            a = np.frombuffer(x, np.uint8)
            return {"T": t.__name__, "data": self.array(a, path)}
        if t is np.ndarray:
            return {"T": "ndarray", "data": self.array(x, path)}
        if isinstance(x, np.generic) and dtype_name(x.dtype) is not None:
            return {"T": "npscalar", "data": self.array(np.asarray(x), path)}
        if t in _CONTAINERS:
            if depth >= MAX_DEPTH:
                self.fail(path, f"containers are nested more than {MAX_DEPTH} levels deep")
            if id(x) in self.active:
                self.fail(path, f"the {t.__name__} contains itself (a reference cycle); "
                                "checkpoints hold trees")
            self.active.add(id(x))
            try:
                return _CONTAINERS[t](self, x, path, depth + 1)
            finally:
                self.active.discard(id(x))
        self.fail(path, f"cannot save object of type {t.__module__}.{t.__qualname__}: "
                        "sparsetorch.save stores tensors, NumPy arrays, Python scalars, str, bytes, "
                        "dtypes, devices, Size and dict/OrderedDict/list/tuple/set of them (never "
                        "arbitrary objects: loading never runs code). Save its state_dict() instead")

    def items(self, xs, path, depth):
        return [self.node(v, path + (i,), depth) for i, v in enumerate(xs)]

    def mapping(self, x, path, depth):
        node = {"T": "odict" if type(x) is OrderedDict else "dict",
                "items": [[self.node(k, path + ("<key>",), depth), self.node(v, path + (k,), depth)]
                          for k, v in x.items()]}
        attrs = getattr(x, "__dict__", None)  # OrderedDict: state_dict()'s ``_metadata`` & co.
        if attrs:
            node["attrs"] = self.attrs(attrs, path, depth)
        return node

    def attrs(self, d, path, depth):
        for k in d:
            if type(k) is not str:
                self.fail(path, f"attribute name {k!r} is not a str")
        return self.node(dict(d), path + ("<attrs>",), depth)

    def dense(self, a, node, path):
        """Strided data: defer the choice between a copy of its own elements and a view of a
        root buffer shared with other saved tensors (``finish``)."""
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if (root.base is None and root.flags.c_contiguous and root.dtype == a.dtype
                and dtype_name(a.dtype) is not None):
            self.roots.setdefault(id(root), (root, []))[1].append((node, a, path))
        else:
            node["data"] = self.array(a, path)

    def finish(self):
        """Store each root buffer viewed by two or more tensors once (as torch shares storages);
        a lone tensor stores only its own elements, never the rest of its base."""
        for root, views in self.roots.values():
            if len(views) < 2:
                node, a, path = views[0]
                node["data"] = self.array(a, path)
                continue
            ref = None
            isz = root.dtype.itemsize
            start = root.__array_interface__["data"][0]
            for node, a, path in views:
                off = a.__array_interface__["data"][0] - start
                if off % isz or any(st % isz for st in a.strides):
                    node["data"] = self.array(a, path)
                    continue
                if ref is None:
                    ref = self.array(root.reshape(-1), path)
                node["data"] = ref
                node["view"] = {"offset": off // isz, "strides": [st // isz for st in a.strides]}

    def tensor(self, x, kind, path, depth):
        ref = self.tensors.get(id(x))
        if ref is not None:
            return {"T": "ref", "ref": ref}
        self.tensors[id(x)] = ref = len(self.tensors)
        self.keep.append(x)
        dev = x.device
        loc = "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
        node = {"T": kind, "ref": ref, "layout": x.layout.name, "dtype": x.dtype.name,
                "shape": list(x.shape), "device": loc, "requires_grad": bool(x._rg)}
        host = x if dev.type == "cpu" else x.detach().cpu()  # GPU tensors are saved as host data
        p = host._data
        if x.layout is strided:
            self.dense(p, node, path)
        elif x.layout is sparse_coo:
            node["indices"] = self.array(p.indices, path)
            node["values"] = self.array(p.values, path)
            node["coalesced"] = bool(p.coalesced)
        elif x.layout is sparse_csr:
            node["crow"] = self.array(p.crow, path)
            node["col"] = self.array(p.col, path)
            node["values"] = self.array(p.values, path)
        else:  # pragma: no cover - every layout sparsetorch has is handled above
            self.fail(path, f"cannot save a tensor of layout {x.layout}")
        d = getattr(x, "__dict__", None)
        if d:
            node["attrs"] = self.attrs(d, path, depth)
        return node


_CONTAINERS = {
    list: lambda e, x, p, d: e.items(x, p, d),
    tuple: lambda e, x, p, d: {"T": "tuple", "items": e.items(x, p, d)},
    set: lambda e, x, p, d: {"T": "set", "items": e.items(x, p, d)},
    frozenset: lambda e, x, p, d: {"T": "frozenset", "items": e.items(x, p, d)},
    dict: _Encoder.mapping,
    OrderedDict: _Encoder.mapping,
}


def encode(obj):
    """(manifest bytes, arrays) for ``obj``; raises TypeError naming the first unsavable object."""
    enc = _Encoder()
    root = enc.node(obj, ())
    enc.finish()
    manifest = {"format": FORMAT, "version": VERSION, "root": root,
                "arrays": len(enc.arrays)}
    text = json.dumps(manifest, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return text.encode("ascii"), enc.arrays


def check_pickle_module(pickle_module, fname):
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(
            f"{fname}(): pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is not "
            "supported: sparsetorch checkpoints never use pickle (pass pickle_module=None)")


def _target(f, fname):
    """(path or None, file object or None) after torch's argument checks."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if os.path.islink(path):  # write through the link, as open() would; keep the link
            path = os.path.realpath(path)
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        if os.path.isdir(path):
            raise RuntimeError(f"{fname}(): {path!r} is a directory; give the checkpoint a file name")
        return path, None
    if not callable(getattr(f, "write", None)):
        raise TypeError(
            f"{fname}(): f must be a path (str or os.PathLike) or a binary file object with write(), "
            f"got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{fname}(): f is a text-mode file; open it in binary mode ('wb')")
    return None, f


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    r"""Saves an object to a disk file, in PyTorch's format.

    The file is PyTorch's ZIP checkpoint (what ``torch.save`` writes): ``torch.load(f)`` reads
    it, with ``weights_only=True`` too, for tensors of every layout and dtype both libraries have
    (bit for bit, the COO ``coalesced`` flag included), ``nn.Parameter``, and module and
    optimizer ``state_dict()``\ s. Tensors that view one buffer share one storage, as in torch.
    GPU tensors are saved as host data with their device recorded. Any other picklable object
    (a whole module, say) is pickled as torch does; loading it back then needs
    ``load(..., weights_only=False)``.

    Args:
        obj: saved object
        f: a file-like object (has to implement write and flush) or a string or os.PathLike
            object containing a file name. A path is written atomically: to a temporary file in
            the same folder, fsynced, then renamed over ``f``, so a failure never destroys the
            previous checkpoint.
        pickle_module: must be ``None`` (or the standard :mod:`pickle`).
        pickle_protocol: the pickle protocol of the object tree (2, torch's default, by default).
        _use_new_zipfile_serialization: ``False`` writes PyTorch's legacy (pre-1.6) format.
    """
    check_pickle_module(pickle_module, "save")
    if type(pickle_protocol) is not int:
        raise TypeError(f"save(): pickle_protocol must be an int, got {type(pickle_protocol).__name__}")
    if not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save(): pickle_protocol must be in [2, {pickle.HIGHEST_PROTOCOL}], got {pickle_protocol}")
    path, fh = _target(f, "save")
    if _use_new_zipfile_serialization:
        def write(out, patchable):
            write_torch_zip(out, obj, pickle_protocol, patchable)
    else:
        def write(out, patchable):
            write_legacy(out, obj, pickle_protocol)
    if path is not None:
        atomic_write(path, lambda out: write(out, True))
        return
    write(fh, False)
    fh.flush()


def save_manifest(obj, f):
    """Write ``obj`` in sparsetorch's own JSON-manifest format (version 1, no pickle at all;
    torch cannot read it). ``load`` reads it; kept for files written before the switch to
    PyTorch's format and for tests of that reader."""
    path, fh = _target(f, "save")
    manifest, arrays = encode(obj)  # every error about obj is raised before a byte is written
    if path is not None:
        atomic_write(path, lambda out: write_archive(out, manifest, arrays, patchable=True))
        return
    write_archive(fh, manifest, arrays)
    fh.flush()
