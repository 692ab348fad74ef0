"""The checkpoint container: a ZIP archive of uncompressed members, read without trusting it.

Writing is a small hand-written ZIP writer (stored members, zip64 when needed, each data
member's bytes aligned to 64 in the file so ``mmap=True`` gives aligned arrays). Reading uses
:mod:`zipfile` only for the central directory; every member is then located and checked by hand
(local header, name, size within the real file, no compression, no encryption) before one byte
of it is allocated, and read straight into its final array with its CRC-32 verified.
"""

import io
import os
import re
import struct
import tempfile
import zipfile
import zlib

import numpy as np

__all__ = ["Archive", "SerializationError", "ZipMembers", "atomic_write", "crc32", "open_archive", "read_infos", "write_archive"]

PREFIX = "sparsetorch/"
MANIFEST = PREFIX + "manifest.json"
_DATA_RE = re.compile(r"sparsetorch/data/(0|[1-9][0-9]{0,9})")
_ALIGN = 64
_PAD_ID = 0x5350  # private extra-field id holding the alignment padding
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a ZIP local file header (30 bytes)


class SerializationError(RuntimeError):
    """A file that is not a valid sparsetorch checkpoint (truncated, corrupted, hostile or foreign).

    A subclass of :class:`RuntimeError`, the type ``torch.load`` raises for bad files.
    """

    __module__ = "sparsetorch.serialization"


def data_name(k):
    return f"{PREFIX}data/{k}"


# ---- dtypes a file may name (an allow-list: never ``np.dtype(<string from the file>)``) ----

DTYPES = {name: np.dtype(code) for name, code in (
    ("bool", "|b1"), ("int8", "|i1"), ("uint8", "|u1"), ("int16", "<i2"), ("uint16", "<u2"),
    ("int32", "<i4"), ("uint32", "<u4"), ("int64", "<i8"), ("uint64", "<u8"),
    ("float16", "<f2"), ("float32", "<f4"), ("float64", "<f8"),
    ("complex64", "<c8"), ("complex128", "<c16"))}
_NAME_OF = {dt.newbyteorder("="): name for name, dt in DTYPES.items()}


def dtype_name(dt):
    """The file's name for NumPy dtype ``dt`` (either byte order), or None if it has none."""
    return _NAME_OF.get(dt.newbyteorder("=")) if dt.isnative or dt.byteorder in "<>|" else None


# ---- CRC-32 ----

_POLY = 0xEDB88320  # CRC-32 (ZIP, zlib), bit-reflected


def _mulmod(a, b):
    """a * b modulo the CRC polynomial, both as bit-reflected polynomials (bit 31 = x^0)."""
    p, m = 0, 1 << 31
    while a and m:
        if a & m:
            p ^= b
            a ^= m
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1
    return p


_X2N = [1 << 30]  # x^(2^k) mod P: x^1, x^2, x^4, ...
for _ in range(31):
    _X2N.append(_mulmod(_X2N[-1], _X2N[-1]))


def crc32_combine(crc1, crc2, len2):
    """CRC of A + B from crc(A), crc(B) and len(B): crc(A) shifted by 8*len(B) zero bits, xor crc(B)."""
    p, k, n = 1 << 31, 3, len2  # x^(8 n) = product of x^(2^k) over the set bits of n, shifted by 3
    while n:
        if n & 1:
            p = _mulmod(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return _mulmod(p, crc1) ^ crc2


_PARALLEL = 1 << 25  # below 32 MiB one thread is as fast
_pool = {}  # pid -> executor: a forked child (DataLoader worker) must not reuse its parent's threads


def _executor(workers):
    pid = os.getpid()
    ex = _pool.get(pid)
    if ex is None:
        from concurrent.futures import ThreadPoolExecutor

        _pool.clear()
        ex = _pool[pid] = ThreadPoolExecutor(workers, thread_name_prefix="sparsetorch-crc")
    return ex


class _Crc:
    """CRC-32 of a buffer fed in consecutive pieces; large pieces are checksummed in worker
    threads (zlib releases the GIL) while the caller goes on reading or writing."""

    def __init__(self):
        self.parts = []  # (crc or its future, piece length)
        self.ex = _executor(_WORKERS) if _WORKERS > 1 else None

    def feed(self, piece):
        if self.ex is not None and piece.size >= _PIECE:
            self.parts.append((self.ex.submit(zlib.crc32, piece), piece.size))
        else:
            self.parts.append((zlib.crc32(piece), piece.size))

    def value(self):
        c = 0  # the CRC of nothing; combining with it gives the next piece's CRC
        for part, n in self.parts:
            c = crc32_combine(c, part if type(part) is int else part.result(), n)
        return c


_PIECE = 1 << 22  # 4 MiB: pieces that are worth a thread
_WORKERS = min(4, os.cpu_count() or 1)


def crc32(buf):
    """zlib.crc32 of a uint8 array, split over threads when it is large."""
    n = buf.size
    if n < _PARALLEL:
        return zlib.crc32(buf)
    c = _Crc()
    step = max(_PIECE, -(-n // 4))
    for i in range(0, n, step):
        c.feed(buf[i:i + step])
    return c.value()


# ---- writing ----

def _as_bytes(a):
    """A flat little-endian uint8 view of ``a`` (copied only when not C-contiguous/little-endian)."""
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and not np.little_endian):
        a = a.astype(a.dtype.newbyteorder("<"))
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


_CENTRAL = struct.Struct("<4s6H3L5H2L")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_LOC64 = struct.Struct("<4sLQL")
_EOCD = struct.Struct("<4s4H2LH")
_MAX32 = 0xFFFFFFFF  # a 32-bit field holding this means "see the zip64 record"
_ZIP64_AT = _MAX32  # sizes/offsets from here on need zip64 (lowered by a test to exercise it)
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01: a fixed time makes files reproducible


class _ZipWriter:
    """A minimal ZIP writer (stored members, zip64 where needed, 64-byte aligned data).

    Written by hand rather than with :mod:`zipfile` so the CRC of a large member is computed in
    threads, once: before its header, or (``patchable``: our own temporary file) while its data
    is written, the header's CRC field being patched afterwards. The data goes out in one call."""

    def __init__(self, fh, patchable=False):
        self.fh = fh
        self.patchable = patchable  # a 'wb' file we own: a header may be patched after its data
        try:
            self.base = fh.tell()
        except (OSError, AttributeError):
            self.base = 0  # an unseekable stream: alignment is relative to where we started
        self.pos = 0
        self.entries = []

    def _write(self, b):
        self.fh.write(b)
        self.pos += len(b) if isinstance(b, bytes) else b.nbytes

    def add(self, name, buf):
        nm = name.encode("ascii")
        n = buf.size
        later = None
        if self.patchable and n >= _PARALLEL:  # checksum in threads while the data is written
            later = _Crc()
            step = max(_PIECE, -(-n // 4))
            for i in range(0, n, step):
                later.feed(buf[i:i + step])
            crc = 0
        else:
            crc = crc32(buf)
        big = n >= _ZIP64_AT
        extra = struct.pack("<2H2Q", 1, 16, n, n) if big else b""
        pad = -(self.base + self.pos + _LOCAL.size + len(nm) + len(extra) + 4) % _ALIGN
        extra += struct.pack("<2H", _PAD_ID, pad) + bytes(pad)
        size = _MAX32 if big else n
        head = self.pos
        self._write(_LOCAL.pack(b"PK\x03\x04", 45, 0, 0, 0, 0, _DOS_DATE, crc, size, size,
                                len(nm), len(extra)) + nm + extra)
        if n:
            self._write(buf)
        if later is not None:
            crc = later.value()
            self.fh.seek(self.base + head + 14)  # the CRC field of the local header
            self.fh.write(struct.pack("<L", crc))
            self.fh.seek(self.base + self.pos)
        self.entries.append((nm, crc, n, head))

    def close(self):
        cd = self.pos
        for nm, crc, n, off in self.entries:
            z64 = b""
            if n >= _ZIP64_AT:
                z64 += struct.pack("<2Q", n, n)
            if off >= _ZIP64_AT:
                z64 += struct.pack("<Q", off)
            extra = struct.pack("<2H", 1, len(z64)) + z64 if z64 else b""
            self._write(_CENTRAL.pack(b"PK\x01\x02", 0x0300 | 45, 45, 0, 0, 0, _DOS_DATE, crc,
                                      _small(n), _small(n), len(nm), len(extra), 0, 0, 0,
                                      0o100644 << 16, _small(off)) + nm + extra)
        cd_size, count = self.pos - cd, len(self.entries)
        if cd >= _ZIP64_AT or cd_size >= _ZIP64_AT or count >= 0xFFFF:
            eocd64 = self.pos
            self._write(_EOCD64.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, cd_size, cd)
                        + _LOC64.pack(b"PK\x06\x07", 0, eocd64, 1))
            count = min(count, 0xFFFF)
        self._write(_EOCD.pack(b"PK\x05\x06", 0, 0, count, count, _small(cd_size), _small(cd), 0))


def _small(v):
    """A 32-bit header field: the value, or the sentinel that points to the zip64 record."""
    return _MAX32 if v >= _ZIP64_AT else v


def write_archive(fh, manifest, arrays, patchable=False):
    """Write the manifest (bytes) and ``arrays`` (host ndarrays) as a ZIP archive to ``fh``."""
    w = _ZipWriter(fh, patchable)
    w.add(MANIFEST, np.frombuffer(manifest, np.uint8))
    for k, a in enumerate(arrays):
        w.add(data_name(k), _as_bytes(a))
    w.close()


def atomic_write(path, write):
    """Call ``write(fh)`` on a temporary file next to ``path``, fsync it, then rename it over
    ``path``: a failure at any point leaves the previous file intact and no temporary behind."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder):
    """Make the rename itself durable (POSIX); best effort where directories can't be opened."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ---- reading ----

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, struct.error,
               NotImplementedError, KeyError, IndexError, OverflowError, UnicodeDecodeError, OSError)


def read_infos(fh):
    """The central directory of the ZIP file ``fh`` (``zipfile`` parses it; nothing is read yet)."""
    try:
        return zipfile.ZipFile(fh).infolist()
    except _ZIP_ERRORS as e:
        raise SerializationError(
            f"not a valid checkpoint: the ZIP structure is broken ({type(e).__name__}: {e}); "
            "the file is truncated or corrupted") from None


class ZipMembers:
    """Members of a ZIP file located and read without trusting the file: ``members`` maps a
    name to its ``ZipInfo``; ``start``/``end`` bound the real file."""

    def __init__(self, fh, start, end):
        self.fh, self.start, self.end = fh, start, end
        self.members = {}
        self._mm = None

    def _locate(self, name):
        """(data offset, size, crc) of member ``name``, checked against the real file."""
        info = self.members.get(name)
        if info is None:
            raise SerializationError(f"the manifest refers to member {name!r}, which is missing")
        if info.flag_bits & 0x1:
            raise SerializationError(f"member {name!r} is encrypted")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise SerializationError(
                f"member {name!r} is compressed (method {info.compress_type}); checkpoints store "
                "members uncompressed, so declared sizes can be checked against the file")
        off = info.header_offset
        if not self.start <= off <= self.end - _LOCAL.size:
            raise SerializationError(f"member {name!r}: its header lies outside the file (truncated?)")
        self.fh.seek(off)
        head = self.fh.read(_LOCAL.size)
        if len(head) != _LOCAL.size:
            raise SerializationError(f"member {name!r}: the file ends inside its header (truncated)")
        f = _LOCAL.unpack(head)
        if f[0] != b"PK\x03\x04":
            raise SerializationError(f"member {name!r}: bad local header signature (corrupted)")
        nlen, elen = f[10], f[11]
        if self.fh.read(nlen) != name.encode("utf-8"):
            raise SerializationError(f"member {name!r}: local header names another file (corrupted)")
        data = off + _LOCAL.size + nlen + elen
        size = info.file_size
        if size < 0 or data + size > self.end:
            raise SerializationError(
                f"member {name!r} declares {size} bytes at offset {data - self.start}, beyond the "
                f"end of the file ({self.end - self.start} bytes): the file is truncated")
        return data, size, info.CRC

    def _read_into(self, name, data, buf, crc):
        """Read the member into ``buf`` and check its CRC; a large member is read piece by
        piece, each piece checksummed in a thread while the next one is read."""
        self.fh.seek(data)
        n = buf.size
        if n < _PARALLEL:
            self._fill(name, buf)
            c = zlib.crc32(buf)
        else:
            parts = _Crc()
            for i in range(0, n, _PIECE * 4):
                piece = buf[i:i + _PIECE * 4]
                self._fill(name, piece)
                parts.feed(piece)
            c = parts.value()
        if c != crc:
            raise SerializationError(
                f"member {name!r} fails its CRC-32 check (stored {crc:08x}, computed {c:08x}): "
                "the file is corrupted")

    def _fill(self, name, piece):
        """Fill ``piece`` from the file (``readinto`` may return short counts)."""
        readinto = getattr(self.fh, "readinto", None)
        got, n = 0, piece.size
        while got < n:
            if readinto is not None:
                k = readinto(piece[got:])
            else:
                b = self.fh.read(n - got)
                k = len(b)
                piece[got:got + k] = np.frombuffer(b, np.uint8)
            if not k:
                raise SerializationError(f"member {name!r}: the file ends inside its data (truncated)")
            got += k


class Archive(ZipMembers):
    """A checkpoint opened for reading: validated member table, manifest bytes, array reads."""

    def __init__(self, fh, start, end, mmap_file=None):
        super().__init__(fh, start, end)
        infos = read_infos(fh)
        names = [i.filename for i in infos]
        if any(n.endswith("data.pkl") for n in names):
            raise SerializationError(
                "this is a PyTorch checkpoint (it holds a pickle, 'data.pkl'); sparsetorch.load never "
                "runs pickle. Convert it with torch: load it there and save the tensors as NumPy arrays")
        for i in infos:
            n = i.filename
            if n != MANIFEST and not _DATA_RE.fullmatch(n):
                raise SerializationError(
                    f"unexpected member {n!r} in the archive (only {MANIFEST!r} and "
                    f"'{PREFIX}data/<n>' may appear); the file is not a sparsetorch checkpoint")
            if n in self.members:
                raise SerializationError(f"member {n!r} appears twice in the archive")
            self.members[n] = i
        if MANIFEST not in self.members:
            raise SerializationError(f"the archive has no {MANIFEST!r}: not a sparsetorch checkpoint")
        if mmap_file is not None:
            self._mm = _map(mmap_file)

    def read_manifest(self):
        data, size, crc = self._locate(MANIFEST)
        buf = np.empty(size, np.uint8)
        self._read_into(MANIFEST, data, buf, crc)
        return buf.tobytes()

    def read_array(self, k, dt, shape, nbytes):
        """Array ``k`` as an ndarray of ``dt``/``shape``; ``nbytes`` (their product) must match."""
        name = data_name(k)
        data, size, crc = self._locate(name)
        if size != nbytes:
            raise SerializationError(
                f"member {name!r} holds {size} bytes but the manifest describes it as "
                f"{dt.name}{list(shape)} = {nbytes} bytes: the file is corrupted")
        if self._mm is not None and size:
            return np.frombuffer(self._mm, dt, size // dt.itemsize, data).reshape(shape)
        a = np.empty(shape, dt)
        self._read_into(name, data, a.reshape(-1).view(np.uint8), crc)
        return a

def _map(fh):
    import mmap

    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)  # private pages: writes stay local


def open_archive(fh, mmap_file=None):
    """Check the magic bytes of the file object ``fh`` (from its current position) and open it."""
    start = fh.tell()
    fh.seek(0, io.SEEK_END)
    end = fh.tell()
    fh.seek(start)
    magic = fh.read(4)
    fh.seek(start)
    if end == start:
        raise SerializationError("the file is empty (0 bytes): not a checkpoint (interrupted write?)")
    if magic != b"PK\x03\x04":
        if magic[:1] == b"\x80":
            raise SerializationError(
                "this is a pickle file (legacy torch.save format?); sparsetorch.load never runs "
                "pickle, so it cannot read it")
        raise SerializationError(
            f"not a sparsetorch checkpoint: the file starts with {magic!r}, not the ZIP magic "
            "b'PK\\x03\\x04'")
    return Archive(fh, start, end, mmap_file)
