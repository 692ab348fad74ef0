"""Reading PyTorch's checkpoint formats: the ZIP format of torch >= 1.6 and the legacy pickle
stream (``_use_new_zipfile_serialization=False``).

ZIP: ``<prefix>/data.pkl`` (the object tree, a pickle whose persistent ids name storages),
``<prefix>/data/<key>`` (each storage's raw bytes), ``byteorder``, ``version``, and a few
markers. Every member is located and size-checked by :class:`ZipMembers` before it is read; a
storage's declared ``numel x itemsize`` must equal its member's real size before any allocation.
Members whose names could escape a folder (``..``, absolute, backslashes) make the file refused.

The pickle runs in :class:`RestrictedUnpickler` (``weights_only=True``, the default), or, when
the caller passed ``weights_only=False``, in :mod:`pickle` itself: that executes code named by
the file.
"""

import io
import pickle
import re
import struct

import numpy as np

from ._format import SerializationError, ZipMembers, _map
from ._rebuild import TORCH_NAMES, Storage, StorageType, bad
from ._unpickler import RestrictedUnpickler

__all__ = ["is_torch_zip", "load_legacy", "load_torch_zip", "unsafe_globals"]

_PACKAGE = __name__.split(".")[0]  # a torch module file (weights_only=False) gets our classes
_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_MAGIC = 0x1950A86A20F9469CFC6C  # the legacy format's first pickle
_LEGACY_PROTOCOL = 1001
_UNSAFE = (pickle.UnpicklingError, TypeError, ValueError, IndexError, KeyError, AttributeError,
           OverflowError, EOFError, UnicodeDecodeError, struct.error, MemoryError)


def _safe_name(n):
    return not (n.startswith(("/", "\\")) or "\\" in n or "\x00" in n or ".." in n.split("/")
                or re.match(r"[A-Za-z]:", n))


def is_torch_zip(infos):
    return any(i.filename.endswith("/data.pkl") or i.filename == "data.pkl" for i in infos)


class TorchZip(ZipMembers):
    """A torch ZIP checkpoint: its prefix, records, and storage reads."""

    def __init__(self, fh, start, end, infos, mmap_file=None):
        super().__init__(fh, start, end)
        for i in infos:
            n = i.filename
            if not _safe_name(n):
                raise SerializationError(f"refusing member name {n!r}: it could escape its folder")
            if n in self.members:
                raise SerializationError(f"member {n!r} appears twice in the archive")
            self.members[n] = i
        pkls = [n for n in self.members if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkls) != 1:
            if any(n.endswith("constants.pkl") for n in self.members):
                raise SerializationError("this is a TorchScript archive (torch.jit.save); sparsetorch "
                                         "loads torch.save checkpoints only")
            raise SerializationError(f"a PyTorch archive must hold one '<folder>/data.pkl', found {pkls}")
        self.prefix = pkls[0][:-len("data.pkl")]
        for n in self.members:
            if not n.startswith(self.prefix):
                raise SerializationError(f"member {n!r} lies outside the archive folder {self.prefix!r}")
        if mmap_file is not None:
            self._mm = _map(mmap_file)

    def record(self, name, limit=1 << 30):
        full = self.prefix + name
        if full not in self.members:
            return None
        data, size, crc = self._locate(full)
        if size > limit:
            raise SerializationError(f"record {full!r} is {size} bytes, more than the {limit} allowed")
        buf = np.empty(size, np.uint8)
        self._read_into(full, data, buf, crc)
        return buf.tobytes()

    def storage(self, key, nbytes):
        full = f"{self.prefix}data/{key}"
        if full not in self.members:
            bad(f"storage {key!r} has no member {full!r}")
        data, size, _ = self._locate(full)
        if size < nbytes:
            bad(f"storage {key!r} declares {nbytes} bytes but its member holds only {size}")
        if self._mm is not None:
            return np.frombuffer(self._mm, np.uint8, nbytes, data)
        buf = np.empty(nbytes, np.uint8)  # sizes are checked; the CRC is not (torch skips it too:
        self.fh.seek(data)  # it would double the load time of a large checkpoint)
        self._fill(full, buf)
        return buf


def _storage_args(pid, n):
    if len(pid) != n:
        bad(f"a storage id has {len(pid)} fields, expected {n}")
    _, stype, key, location, numel = pid[:5]
    if type(stype) is not StorageType:
        bad(f"storage type {stype!r} is not a storage type sparsetorch knows")
    if isinstance(key, bytes):
        key = key.decode("ascii", "replace")
    if isinstance(location, bytes):
        location = location.decode("ascii", "replace")
    if type(key) is not str or not _KEY.fullmatch(key):
        bad(f"storage key {key!r} is not a short plain name")
    if type(location) is not str or type(numel) is not int or numel < 0:
        bad(f"storage location/size {location!r}, {numel!r} are not a str and a non-negative int")
    return stype.dtype, key, location, numel


def _unpickle(data, persistent_load, weights_only, encoding):
    if weights_only:
        return RestrictedUnpickler(data, persistent_load, encoding).load()
    return _FullUnpickler(io.BytesIO(data), persistent_load, encoding).load()


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: torch's names map to ours, anything else is imported (unsafe)."""

    def __init__(self, f, persistent_load, encoding):
        super().__init__(f, encoding=encoding)
        self._pl = persistent_load

    def persistent_load(self, pid):
        return self._pl(pid)

    def find_class(self, module, name):
        obj = TORCH_NAMES.get(f"{module}.{name}")
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):  # torch.nn.Linear -> ours, if we have it
            try:
                return super().find_class(_PACKAGE + module[len("torch"):], name)
            except (ImportError, AttributeError):
                pass
        return super().find_class(module, name)


def load_torch_zip(fh, start, end, infos, map_location, weights_only, encoding, mmap_file=None):
    z = TorchZip(fh, start, end, infos, mmap_file)
    order = (z.record("byteorder", 16) or b"little").strip()
    if order not in (b"little", b"big"):
        raise SerializationError(f"unknown byteorder record {order!r}")
    version = z.record(".data/version", 16) or z.record("version", 16)
    if version is not None and not version.strip().isdigit():
        raise SerializationError(f"bad version record {version!r}")
    loaded = {}

    def persistent_load(pid):
        dt, key, location, numel = _storage_args(pid, 5)
        hit = loaded.get(key)
        if hit is None:
            raw = z.storage(key, numel * dt.itemsize)
            if order == b"big" and dt.itemsize > 1:
                raw = raw.view(dt.np.newbyteorder(">")).astype(dt.np).view(np.uint8)
            hit = loaded[key] = Storage(raw, dt, location, map_location)
        elif hit.raw.size < numel * dt.itemsize:
            bad(f"storage {key!r} is named with two different sizes")
        return Storage(hit.raw, dt, hit.location, map_location) if hit.dtype is not dt else hit

    data = z.record("data.pkl", z.end - z.start)
    try:
        return _unpickle(data, persistent_load, weights_only, encoding)
    except SerializationError:
        raise
    except RecursionError:
        raise SerializationError("invalid PyTorch checkpoint: the object tree is nested too deeply") from None
    except _UNSAFE as e:
        raise SerializationError(f"invalid PyTorch checkpoint: {type(e).__name__}: {e}") from None


def load_legacy(fh, start, end, map_location, weights_only, encoding):
    """The legacy stream: magic, protocol, sys info, the object, the storage keys, then each
    storage as an int64 element count and its raw bytes. The object pickle is walked once
    without calling anything to learn its storages, which are then read (sizes checked against
    the file), and only then is the object rebuilt."""
    fh.seek(start)
    blob = fh.read(end - start)
    pos = 0

    def restricted(at, persistent_load=_no_storage, dry=False):
        u = RestrictedUnpickler(blob[at:], persistent_load, encoding, dry, any_global=not weights_only)
        return u.load(), at + u.f.tell()

    try:
        magic, pos = restricted(pos)
        if magic != _MAGIC:
            raise SerializationError("not a PyTorch checkpoint: a pickle without torch's magic number")
        proto, pos = restricted(pos)
        if proto != _LEGACY_PROTOCOL:
            raise SerializationError(f"unsupported legacy PyTorch protocol version {proto!r}")
        info, pos = restricted(pos)
        if type(info) is not dict or info.get("little_endian", True) is not True:
            raise SerializationError("legacy checkpoint from a big-endian machine: not supported")
        declared = {}  # key -> (dtype, numel, location)

        def collect(pid):
            if len(pid) not in (5, 6):
                bad(f"a storage id has {len(pid)} fields")
            dt, key, location, numel = _storage_args(pid[:5], 5)
            if declared.setdefault(key, (dt, numel, location)) != (dt, numel, location):
                bad(f"storage {key!r} is declared twice differently")

        obj_at = pos
        _, pos = restricted(pos, collect, dry=True)
        keys, pos = restricted(pos)
        if type(keys) is not list or set(keys) != set(declared) or len(keys) != len(declared):
            bad("the storage key list does not match the storages the object uses")
        storages = {}
        for key in keys:
            dt, numel, location = declared[key]
            n = struct.unpack("<q", blob[pos:pos + 8])[0] if pos + 8 <= len(blob) else -1
            nbytes = numel * dt.itemsize
            if n != numel or pos + 8 + nbytes > len(blob):
                bad(f"storage {key!r}: declared {numel} elements, the file holds {n} (truncated?)")
            raw = np.frombuffer(blob, np.uint8, nbytes, pos + 8).copy()
            storages[key] = Storage(raw, dt, location, map_location)
            pos += 8 + nbytes

        def persistent_load(pid):
            dt, key, location, numel = _storage_args(pid[:5], 5)
            s = storages[key]
            view = pid[5] if len(pid) == 6 else None
            if view is not None:
                if not (type(view) is tuple and len(view) == 3 and type(view[1]) is int
                        and type(view[2]) is int and 0 <= view[1] and view[1] + view[2] <= numel):
                    bad(f"bad storage view {view!r}")
                isz = dt.itemsize
                s = Storage(s.raw[view[1] * isz:(view[1] + view[2]) * isz], dt, location, map_location)
            return s

        if weights_only:
            return restricted(obj_at, persistent_load)[0]
        return _FullUnpickler(io.BytesIO(blob[obj_at:]), persistent_load, encoding).load()
    except SerializationError:
        raise
    except RecursionError:
        raise SerializationError("invalid PyTorch checkpoint: the object tree is nested too deeply") from None
    except _UNSAFE as e:
        raise SerializationError(f"invalid legacy PyTorch checkpoint: {type(e).__name__}: {e}") from None


def _no_storage(pid):
    bad("a storage reference outside the object pickle")


def unsafe_globals(fh, start, end, infos):
    """The globals a ``weights_only`` load of this torch file would refuse (the pickle is walked,
    nothing is called), as ``module.name`` strings in order of appearance."""
    found = []
    if infos is not None:
        z = TorchZip(fh, start, end, infos)
        data = z.record("data.pkl", z.end - z.start)
        RestrictedUnpickler(data, lambda pid: None, dry=True, unsafe=found).load()
        return found
    fh.seek(start)
    blob = fh.read(end - start)
    pos = 0
    for _ in range(4):  # magic, protocol, sys info, then the object
        u = RestrictedUnpickler(blob[pos:], lambda pid: None, dry=True, unsafe=found)
        u.load()
        pos += u.f.tell()
    return found
