"""sparsetorch.load: rebuild the object tree from the manifest, trusting nothing in the file.

Every node is type-checked before use; arrays are read only after their declared size has been
checked against the member's real size; sparse tensors go through the constructors' invariant
checks. Any defect raises :class:`SerializationError` naming where in the object tree it was.
"""

import io
import json
import os
import struct
import warnings
from collections import OrderedDict

import numpy as np

from .. import _dtype as D
from .._device import device
from .._dispatch import wrap
from .._layout import _ALL as _LAYOUTS
from .._layout import sparse_coo, strided
from .._ops import sparse_core
from .._tensor import Size
from ..nn.parameter import Buffer, Parameter
from ._format import DTYPES, SerializationError, open_archive, read_infos
from ._place import place, sorted_unique
from ._save import FORMAT, MAX_DEPTH, VERSION, check_pickle_module, path_str
from ._torchload import is_torch_zip, load_legacy, load_torch_zip, unsafe_globals

__all__ = ["get_unsafe_globals_in_checkpoint", "load"]

_CPU = device("cpu")
_MAX_DIMS = 64
_PICKLE_KW = ("encoding", "errors", "fix_imports")  # torch forwards these to pickle; meaningless here


class _Bad(Exception):
    """A defect found while decoding; turned into SerializationError with the object path."""

    path = None


def _need(cond, what):
    if not cond:
        raise _Bad(what)


def _int(x, what):
    if type(x) is not int:
        raise _Bad(f"{what} must be an int, got {type(x).__name__}")
    return x


def _float(bits, what):
    if not (type(bits) is str and len(bits) == 16):
        raise _Bad(f"{what} must be 16 hex digits of a float64")
    try:
        return struct.unpack("<d", bytes.fromhex(bits))[0]
    except ValueError:
        raise _Bad(f"{what} is not hex: {bits!r}") from None


def _shape(x, what):
    if not (type(x) is list and len(x) <= _MAX_DIMS):
        raise _Bad(f"{what} must be a list of at most {_MAX_DIMS} ints")
    for s in x:
        if not (type(s) is int and 0 <= s < 1 << 63):
            raise _Bad(f"{what} must hold non-negative int64s, got {x!r}")
    return tuple(x)


class _Decoder:
    def __init__(self, archive, n_arrays, map_location):
        self.archive = archive
        self.n_arrays = n_arrays
        self.map_location = map_location
        self.refs = []  # tensors by ref number, in save order
        self.used = set()  # array numbers read for one place each
        self.shared = {}  # array number -> flat root buffer that several strided tensors view

    # ---- leaves ----
    def array(self, ref, path, shared=False):
        _need(type(ref) is dict, "an array reference must be an object")
        k = _int(ref.get("array"), "array number")
        if not (0 <= k < self.n_arrays):
            raise _Bad(f"array number {k} is out of range [0, {self.n_arrays})")
        if shared and k in self.shared:
            return self.shared[k]
        if k in self.used or k in self.shared:
            raise _Bad(f"array {k} is used twice")
        if shared:
            self.shared[k] = None  # filled by _view once read
        else:
            self.used.add(k)
        name = ref.get("dtype")
        dt = DTYPES.get(name) if type(name) is str else None
        if dt is None:
            raise _Bad(f"unknown array dtype {name!r} (known: {', '.join(DTYPES)})")
        shape = _shape(ref.get("shape"), "array shape")
        n = dt.itemsize
        for s in shape:
            n *= s
        try:
            a = self.archive.read_array(k, dt, shape, n)
        except (ValueError, OverflowError) as e:  # NumPy refuses the shape (0 x 2**70 & co.)
            raise _Bad(f"array {k} of shape {list(shape)} cannot be created: {e}") from None
        if dt.kind == "b" and a.size and int(a.view(np.uint8).max()) > 1:
            raise _Bad(f"array {k} (bool) holds bytes other than 0 and 1")
        if not dt.isnative:
            a = a.astype(dt.newbyteorder("="))
        return a

    def node(self, x, path, depth=0):
        if x is None or type(x) in (bool, str, int, float):
            return x
        try:
            if type(x) is list:
                return self.items(x, path, depth)
            if type(x) is not dict:
                raise _Bad(f"unexpected JSON value of type {type(x).__name__}")
            tag = x.get("T")
            fn = _NODES.get(tag) if type(tag) is str else None
            if fn is None:
                raise _Bad(f"unknown node type {tag!r}")
            return fn(self, x, path, depth)
        except _Bad as e:
            if e.path is None:  # the innermost node names the place
                e.path = path
            raise

    def items(self, xs, path, depth):
        _need(type(xs) is list, "items must be a list")
        if depth >= MAX_DEPTH:
            raise _Bad(f"containers are nested more than {MAX_DEPTH} levels deep")
        return [self.node(v, path + (i,), depth + 1) for i, v in enumerate(xs)]

    def mapping(self, x, path, depth):
        pairs = x.get("items")
        _need(type(pairs) is list, "dict items must be a list of [key, value] pairs")
        if depth >= MAX_DEPTH:
            raise _Bad(f"containers are nested more than {MAX_DEPTH} levels deep")
        out = OrderedDict() if x["T"] == "odict" else {}
        for pair in pairs:
            _need(type(pair) is list and len(pair) == 2, "dict items must be [key, value] pairs")
            k = self.node(pair[0], path + ("<key>",), depth + 1)
            try:
                hash(k)
            except TypeError:
                raise _Bad(f"dict key of type {type(k).__name__} is unhashable") from None
            out[k] = self.node(pair[1], path + (k,), depth + 1)
        if "attrs" in x:
            _need(type(out) is OrderedDict, "only OrderedDicts carry attributes")
            out.__dict__.update(self.attrs(x["attrs"], path, depth, OrderedDict))
        return out

    def attrs(self, node, path, depth, cls):
        """Instance attributes for an object of class ``cls``: str names that shadow nothing the
        class defines (a file must not replace ``t.numpy`` or ``__class__``)."""
        d = self.node(node, path + ("<attrs>",), depth)
        _need(type(d) is dict, "attributes must be a dict")
        for k in d:
            if type(k) is not str or hasattr(cls, k):
                raise _Bad(f"attribute {k!r} is not a str or shadows a {cls.__name__} attribute")
        return d

    # ---- tensors ----
    def tensor(self, x, path, depth):
        ref = _int(x.get("ref"), "tensor ref")
        if ref != len(self.refs):
            raise _Bad(f"tensor ref {ref} out of order (expected {len(self.refs)})")
        self.refs.append(None)  # a ref inside its own attrs must fail, not recurse
        dt = D._NAMES.get(x.get("dtype")) if type(x.get("dtype")) is str else None
        if dt is None:
            raise _Bad(f"unknown tensor dtype {x.get('dtype')!r}")
        lay = _LAYOUTS.get(x.get("layout")) if type(x.get("layout")) is str else None
        if lay is None:
            raise _Bad(f"unknown layout {x.get('layout')!r}")
        shape = _shape(x.get("shape"), "tensor shape")
        loc = x.get("device")
        _need(type(loc) is str, "tensor device must be a str")
        try:
            device(loc)
        except (RuntimeError, TypeError) as e:
            raise _Bad(f"bad tensor device {loc!r}: {e}") from None
        rg = x.get("requires_grad", False)
        _need(type(rg) is bool, "requires_grad must be a bool")
        if rg and not (dt.is_floating_point or dt.is_complex):
            raise _Bad(f"requires_grad=True on a {dt.name} tensor")
        t = self._place(self._build(x, lay, dt, shape), loc)
        kind = x["T"]
        if kind == "parameter":
            t = Parameter(t, rg)
        elif kind == "buffer":
            t = Buffer(t)
        elif rg:
            t.requires_grad_(True)
        if "attrs" in x:
            t.__dict__.update(self.attrs(x["attrs"], path, depth, type(t)))
        self.refs[ref] = t
        return t

    def _build(self, x, lay, dt, shape):
        if lay is strided:
            a = self._view(x, shape) if "view" in x else self.array(x.get("data"), ())
            if a.dtype != dt.np or a.shape != shape:
                raise _Bad(f"tensor data is {a.dtype}{list(a.shape)}, not {dt.name}{list(shape)}")
            return wrap(a, dt, _CPU, strided)
        if lay is sparse_coo:
            idx = self.array(x.get("indices"), ())
            if idx.dtype != np.int64:
                raise _Bad(f"COO indices must be int64, got {idx.dtype}")
            vals = self._values(x, dt)
            coalesced = x.get("coalesced")
            _need(type(coalesced) is bool, "COO 'coalesced' must be a bool")
            t = _construct(sparse_core.sparse_coo_tensor, wrap(idx, D.int64, _CPU, strided), vals, shape)
            if coalesced and idx.shape[1] > 1:
                _need(_sorted_unique(idx), "COO tensor marked coalesced has unsorted or duplicate indices")
            t._data.coalesced = coalesced
            return t
        crow = self.array(x.get("crow"), ())
        col = self.array(x.get("col"), ())
        for a in (crow, col):
            if a.dtype not in (np.int32, np.int64):
                raise _Bad(f"CSR indices must be int32 or int64, got {a.dtype}")
        idt = D.int32 if crow.dtype == np.int32 else D.int64
        vals = self._values(x, dt)
        return _construct(sparse_core.sparse_csr_tensor, wrap(crow, idt, _CPU, strided),
                          wrap(col, D._FROM_NP[col.dtype], _CPU, strided), vals, shape)

    def _view(self, x, shape):
        """A view (offset, strides in elements) of a flat root buffer shared by several tensors,
        bounds-checked before NumPy sees it."""
        ref = x.get("data")
        root = self.array(ref, (), shared=True)
        k = ref["array"]
        if root.ndim != 1:
            raise _Bad(f"shared array {k} must be 1-d")
        self.shared[k] = root
        v = x["view"]
        _need(type(v) is dict, "a tensor view must be an object")
        off = _int(v.get("offset"), "view offset")
        strides = v.get("strides")
        _need(type(strides) is list and len(strides) == len(shape)
              and all(type(s) is int for s in strides), "view strides must be one int per dimension")
        if all(shape):
            lo = off + sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
            hi = off + sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
            if lo < 0 or hi >= root.size:
                raise _Bad(f"view (offset {off}, strides {strides}, shape {list(shape)}) reaches "
                           f"outside its {root.size}-element buffer")
        isz = root.itemsize
        return np.ndarray(shape, root.dtype, buffer=root, offset=off * isz if all(shape) else 0,
                          strides=[s * isz for s in strides])

    def _values(self, x, dt):
        v = self.array(x.get("values"), ())
        if v.dtype != dt.np:
            raise _Bad(f"values are {v.dtype}, but the tensor's dtype is {dt.name}")
        return wrap(v, dt, _CPU, strided)

    def _place(self, t, loc):
        """Apply ``map_location`` (torch's forms: None, str/device, dict, callable)."""
        return place(t, loc, self.map_location)

    def ref(self, x, path, depth):
        r = _int(x.get("ref"), "ref")
        if not (0 <= r < len(self.refs) and self.refs[r] is not None):
            raise _Bad(f"ref {r} points to no tensor loaded before it")
        return self.refs[r]

    def leaf(self, x, path, depth):
        tag = x["T"]
        if tag == "int":
            h = x.get("hex")
            _need(type(h) is str and len(h) <= 1 << 20, "big int must be a hex string")
            try:
                return int(h, 16)
            except ValueError:
                raise _Bad(f"bad big int {h[:40]!r}") from None
        if tag == "float":
            return _float(x.get("bits"), "float bits")
        if tag == "complex":
            return complex(_float(x.get("re"), "complex re"), _float(x.get("im"), "complex im"))
        name = x.get("name")
        if type(name) is not str:
            raise _Bad(f"{tag} name must be a str")
        if tag == "dtype":
            if name not in D._NAMES:
                raise _Bad(f"unknown dtype {name!r}")
            return D._NAMES[name]
        if tag == "layout":
            if name not in _LAYOUTS:
                raise _Bad(f"unknown layout {name!r}")
            return _LAYOUTS[name]
        try:
            return device(name)
        except (RuntimeError, TypeError) as e:
            raise _Bad(f"bad device {name!r}: {e}") from None

    def blob(self, x, path, depth):
        a = self.array(x.get("data"), path)
        tag = x["T"]
        if tag == "ndarray":
            return a
        if tag == "npscalar":
            _need(a.ndim == 0, "a NumPy scalar must be stored as a 0-d array")
            return a[()]
        if not (a.dtype == np.uint8 and a.ndim == 1):
            raise _Bad(f"{tag} must be stored as a 1-d uint8 array")
        return bytes(a) if tag == "bytes" else bytearray(a)

    def seq(self, x, path, depth):
        items = self.items(x.get("items"), path, depth)
        tag = x["T"]
        if tag == "tuple":
            return tuple(items)
        if tag == "Size":
            _shape(items, "Size")
            return Size(items)
        try:
            return set(items) if tag == "set" else frozenset(items)
        except TypeError:
            raise _Bad(f"{tag} holds an unhashable item") from None


_NODES = {"tensor": _Decoder.tensor, "parameter": _Decoder.tensor, "buffer": _Decoder.tensor,
          "ref": _Decoder.ref, "dict": _Decoder.mapping, "odict": _Decoder.mapping,
          "tuple": _Decoder.seq, "set": _Decoder.seq, "frozenset": _Decoder.seq, "Size": _Decoder.seq,
          "int": _Decoder.leaf, "float": _Decoder.leaf, "complex": _Decoder.leaf,
          "dtype": _Decoder.leaf, "device": _Decoder.leaf, "layout": _Decoder.leaf,
          "bytes": _Decoder.blob, "bytearray": _Decoder.blob, "ndarray": _Decoder.blob,
          "npscalar": _Decoder.blob}


def _construct(fn, *args):
    """A sparse constructor with its invariant checks on; their errors become file defects."""
    try:
        return fn(*args, check_invariants=True)
    except (ValueError, TypeError, IndexError, RuntimeError, OverflowError) as e:
        raise _Bad(f"invalid sparse tensor: {e}") from None


_sorted_unique = sorted_unique


def _decode(archive, map_location):
    raw = archive.read_manifest()
    try:
        m = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise SerializationError("the manifest is nested too deeply to parse: not a checkpoint") from None
    except ValueError as e:
        raise SerializationError(f"the manifest is not valid JSON ({e}): the file is corrupted") from None
    if type(m) is not dict or m.get("format") != FORMAT:
        raise SerializationError("the manifest does not describe a sparsetorch checkpoint")
    if type(m.get("version")) is not int or m["version"] > VERSION:
        raise SerializationError(
            f"the checkpoint has format version {m.get('version')!r}; this sparsetorch reads "
            f"version {VERSION} and older: upgrade sparsetorch")
    n = m.get("arrays")
    if type(n) is not int or not 0 <= n < len(archive.members):
        raise SerializationError(f"the manifest declares {n!r} arrays but the archive has "
                                 f"{len(archive.members) - 1} data members")
    dec = _Decoder(archive, n, map_location)
    try:
        return dec.node(m.get("root"), ())
    except _Bad as e:
        raise SerializationError(f"invalid checkpoint at {path_str(e.path or ())}: {e}") from None
    except RecursionError:
        raise SerializationError("invalid checkpoint: the object tree is nested too deeply") from None


def _no_constant(s):
    raise ValueError(f"{s} is not allowed")


def _load_from(fh, map_location, weights_only, encoding, mmap_file=None):
    """Sniff the format at ``fh``'s position and load: torch ZIP, sparsetorch ZIP, torch legacy."""
    start = fh.tell()
    fh.seek(0, io.SEEK_END)
    end = fh.tell()
    fh.seek(start)
    magic = fh.read(4)
    fh.seek(start)
    if magic == b"PK\x03\x04" and is_torch_zip(read_infos(fh)):
        fh.seek(start)
        return load_torch_zip(fh, start, end, read_infos(fh), map_location, weights_only, encoding,
                              mmap_file)
    if magic[:1] == b"\x80" and end > start:
        if mmap_file is not None:
            raise RuntimeError("mmap can only be used with files saved with `torch.save(_use_new_zipfile_"
                               "serialization=True), please torch.save your checkpoint with this option "
                               "in order to use mmap.")
        return load_legacy(fh, start, end, map_location, weights_only, encoding)
    fh.seek(start + 257)
    if fh.read(5) == b"ustar":
        raise SerializationError("this is a tar checkpoint (torch < 0.4); sparsetorch does not read that "
                                 "format: re-save it with a recent torch")
    fh.seek(start)
    return _decode(open_archive(fh, mmap_file), map_location)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    r"""Loads an object saved with :func:`sparsetorch.save` or :func:`torch.save` from a file.

    Reads PyTorch's ZIP format (torch >= 1.6, what ``torch.save`` writes), PyTorch's legacy
    format (``_use_new_zipfile_serialization=False``) and sparsetorch's own JSON-manifest format
    (files written by sparsetorch before it wrote PyTorch's format).

    With ``weights_only=True`` (the default, as in torch) the pickle inside a PyTorch file is
    read by a restricted unpickler of our own: only tensors (every layout we have),
    ``nn.Parameter``, dtypes, devices, layouts, ``Size``, numbers, strings, bytes and
    ``dict``/``OrderedDict``/``list``/``tuple``/``set`` are rebuilt; no global is ever imported
    and nothing outside that list is called. Anything else raises a
    :class:`~sparsetorch.serialization.SerializationError` (also a ``pickle.UnpicklingError``)
    naming the refused global; :func:`~sparsetorch.serialization.add_safe_globals` or the
    :class:`~sparsetorch.serialization.safe_globals` context manager allowlist more.
    ``weights_only=False`` runs the full :mod:`pickle`: **it executes code named by the file**;
    pass it only for files you trust (whole modules saved with ``save(model)`` need it).

    A truncated, corrupted or hostile file raises ``SerializationError`` (a ``RuntimeError``);
    declared sizes are checked against the file before anything is allocated.

    Args:
        f: a file-like object (has to implement ``read``, ``readinto`` or ``read``, ``seek`` and
            ``tell``), or a string or os.PathLike object containing a file name
        map_location: a function, :class:`device`, string or a dict specifying how to remap
            storage locations. A callable is called as ``map_location(tensor, location)`` with
            the tensor on the CPU and its saved location (``'cpu'``, ``'cuda:0'``) and returns
            a tensor, or ``None`` for the default placement.
        pickle_module: must be ``None`` (or the standard :mod:`pickle`).
        weights_only: restrict unpickling to tensors and plain data (default ``True``, or
            ``False`` with a ``pickle_module``; ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` /
            ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` override it as in torch).
        mmap: map the file instead of reading it (``f`` must be a path). Tensors are
            copy-on-write views of the file; their CRC is not verified (that would read every page).
        encoding: for Python 2 strings in old PyTorch files (``'ASCII'`` by default; ``'latin1'``).
    """
    check_pickle_module(pickle_module, "load")
    bad = [k for k in pickle_load_args if k not in _PICKLE_KW]
    if bad:
        raise TypeError(f"load() got an unexpected keyword argument {bad[0]!r}")
    if type(weights_only) is not bool and weights_only is not None:
        raise TypeError(f"load(): weights_only must be a bool, got {type(weights_only).__name__}")
    weights_only = _weights_only(weights_only, pickle_module)
    encoding = pickle_load_args.get("encoding", "ASCII")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_from(fh, map_location, weights_only, encoding, fh if mmap else None)
    if mmap:
        raise ValueError("load(): f must be a file path in order to use the mmap argument")
    if isinstance(f, io.TextIOBase):
        raise TypeError("load(): f is a text-mode file; open it in binary mode ('rb')")
    if not callable(getattr(f, "read", None)):
        raise TypeError(
            f"load(): f must be a path (str or os.PathLike) or a binary file object, got {type(f).__name__}")
    if not getattr(f, "seekable", lambda: False)():
        f = io.BytesIO(f.read())  # zip needs random access, as torch does for streams
    return _load_from(f, map_location, weights_only, encoding)


_TRUE = ("1", "y", "yes", "true")


def _weights_only(weights_only, pickle_module):
    """torch.load's choice: unset means ``True`` unless a ``pickle_module`` is passed; the
    environment variables ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` (always) and
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (only where the call left it unset, with torch's
    warning) override it."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
            "should be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
            "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
            "weights_only=False.", UserWarning, stacklevel=3)
        return False
    return weights_only


def get_unsafe_globals_in_checkpoint(f):
    """Returns a list of strings of functions/classes in a ``torch.save`` object that are not
    safe for ``weights_only``: the GLOBALs in the checkpoint that are neither allowlisted by
    default nor added with :func:`add_safe_globals` / :class:`safe_globals`. The pickle is only
    walked (nothing is imported or called). A sparsetorch manifest-format file holds none."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return get_unsafe_globals_in_checkpoint(fh)
    if not getattr(f, "seekable", lambda: False)():
        f = io.BytesIO(f.read())
    start = f.tell()
    end = f.seek(0, io.SEEK_END)
    f.seek(start)
    magic = f.read(4)
    f.seek(start)
    if magic == b"PK\x03\x04":
        infos = read_infos(f)
        return unsafe_globals(f, start, end, infos) if is_torch_zip(infos) else []
    if magic[:1] == b"\x80":
        return unsafe_globals(f, start, end, None)
    raise SerializationError("not a checkpoint: neither a ZIP archive nor a pickle stream")
