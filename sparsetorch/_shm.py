"""Shared-memory arrays: the payload side of ``Tensor.share_memory_()`` and multiprocessing.

An array is *shared* when its root buffer is an ``mmap`` of a shared-memory segment made (or
attached) here; the registry below maps such ``mmap`` objects to their segment, so ``is_shared``
is a walk down ``.base`` and one dictionary look-up. A segment is a whole C-contiguous copy of the
array that was shared; the array's own views keep their offset and strides when they travel.

Two strategies, as torch's (``torch.multiprocessing.set_sharing_strategy``):

- ``"file_descriptor"`` (default on Linux): an anonymous ``memfd`` segment. No name exists in the
  file system, so nothing can leak; a receiving process gets a duplicate of the descriptor through
  ``multiprocessing``'s ``DupFd`` (passed at spawn, or fetched from the sender's resource sharer).
- ``"file_system"``: a named POSIX segment (``/dev/shm/sparsetorch_<pid>_<token>``), attached by
  name. Its first bytes count references: one per process that maps it, plus one per handle in
  flight (pickled, not yet received), updated under ``flock``; whoever drops the count to zero
  unlinks the name, so a producer may free its tensor right after sending it. A handle that is
  never received, or a process that is killed, leaves the segment in ``/dev/shm`` (torch runs a
  manager daemon for that; we do not).

Ground floor: imports only the standard library and NumPy.
"""

import mmap
import os
import secrets
import sys
import weakref

import numpy as np

__all__ = [
    "STRATEGIES", "get_strategy", "set_strategy", "is_shared_array", "share_array", "reduce_array",
]

if sys.platform.startswith("linux") and hasattr(os, "memfd_create"):
    STRATEGIES = {"file_descriptor", "file_system"}
    _strategy = "file_descriptor"
else:
    STRATEGIES = {"file_system"}
    _strategy = "file_system"


class _Segment:
    """One mapped segment in this process: its descriptor (``file_descriptor``: kept open, to
    be sent again) or its name (``file_system``), its byte size, and where the data starts
    (after the reference count of a named segment)."""

    __slots__ = ("fd", "name", "size", "start", "__weakref__")

    def __init__(self, fd, name, size):
        self.fd, self.name, self.size = fd, name, size
        self.start = _HEADER if name is not None else 0


_HEADER = 64  # a named segment starts with an int64: mappings + handles in flight, then data
_SEGMENTS = weakref.WeakKeyDictionary()  # mmap -> _Segment (created or attached here)
_ATTACHED = weakref.WeakValueDictionary()  # (kind, key) -> mmap, so one segment maps once


def get_strategy():
    return _strategy


def set_strategy(name):
    global _strategy
    if name not in STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {name!r}, expected one of {STRATEGIES}")
    _strategy = name


def _root(a):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def is_shared_array(a):
    root = _root(a)
    return isinstance(root, mmap.mmap) and root in _SEGMENTS


def _add_ref(name, delta):
    """Add ``delta`` to a named segment's reference count; returns the new count. The segment is
    opened afresh so that the ``flock`` excludes every other process, forked ones included (a
    descriptor inherited through fork would share its lock with the parent's)."""
    import _posixshmem
    import fcntl

    fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        n = int.from_bytes(os.pread(fd, 8, 0), "little") + delta
        os.pwrite(fd, n.to_bytes(8, "little"), 0)
    finally:
        os.close(fd)  # releases the lock
    return n


def _release(fd, name, pid):
    """Finalizer of a mapping: close its descriptor, or drop its reference to a named segment
    (the last one unlinks the name). A forked child's inherited copy owns neither."""
    if os.getpid() != pid:
        return
    try:
        if fd is not None:
            os.close(fd)
        elif _add_ref(name, -1) <= 0:
            import _posixshmem

            _posixshmem.shm_unlink(name)
    except OSError:
        pass


def _map(fd, seg, key):
    mm = mmap.mmap(fd, seg.size)
    if seg.fd is None:
        os.close(fd)  # a named segment is reopened by name when needed
    _SEGMENTS[mm] = seg
    _ATTACHED[key] = mm
    fin = weakref.finalize(mm, _release, seg.fd, seg.name, os.getpid())
    if seg.name is not None:
        _release_at_exit(fin)
    return mm


_AT_EXIT = {}  # id -> finalizer of a named mapping of this process, run when the process ends
_AT_EXIT_PID = [None]


def _release_at_exit(fin):
    """Drop named references when this process ends, also in a forked ``multiprocessing`` child,
    which leaves through ``os._exit`` (no ``atexit``) after running multiprocessing's finalizers."""
    if _AT_EXIT_PID[0] != os.getpid():
        from multiprocessing import util

        _AT_EXIT.clear()  # a forked child's copies of the parent's finalizers own nothing
        util.Finalize(None, _run_at_exit, exitpriority=0)
        _AT_EXIT_PID[0] = os.getpid()
    if len(_AT_EXIT) >= 64:
        for k in [k for k, f in _AT_EXIT.items() if not f.alive]:
            del _AT_EXIT[k]
    _AT_EXIT[id(fin)] = fin


def _run_at_exit():
    for fin in list(_AT_EXIT.values()):
        fin()  # a finalizer runs at most once: a no-op if its mapping was already freed


def _new_segment(nbytes):
    nbytes = max(int(nbytes), 1)  # mmap refuses empty mappings
    if _strategy == "file_descriptor":
        fd = os.memfd_create("sparsetorch", os.MFD_CLOEXEC)
        os.ftruncate(fd, nbytes)
        st = os.fstat(fd)
        return _map(fd, _Segment(fd, None, nbytes), ("fd", st.st_dev, st.st_ino))
    import _posixshmem

    name = f"/sparsetorch_{os.getpid()}_{secrets.token_hex(8)}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    os.ftruncate(fd, _HEADER + nbytes)
    os.pwrite(fd, (1).to_bytes(8, "little"), 0)  # this process's mapping
    return _map(fd, _Segment(None, name, _HEADER + nbytes), ("fs", name))


def share_array(a):
    """``a`` itself if it is already shared, else a copy of it in a new shared segment."""
    if is_shared_array(a):
        return a
    a = np.asarray(a)
    mm = _new_segment(a.nbytes)
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"  # keep a transpose
    out = np.ndarray(a.shape, a.dtype, buffer=mm, offset=_SEGMENTS[mm].start, order=order)
    out[...] = a
    return out


# ---- sending a shared array to another process (only through multiprocessing's pickler) ----

def _locate(a):
    """(mmap, byte offset of ``a``'s first element in it)."""
    root = _root(a)
    base = np.frombuffer(root, np.uint8)
    off = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return root, off


def reduce_array(a):
    """A picklable ``(rebuild, args)`` that maps ``a``'s segment in the receiving process; ``a``
    must be shared. Only valid inside a ``multiprocessing`` pickler (a descriptor travels)."""
    mm, off = _locate(a)
    seg = _SEGMENTS[mm]
    view = (a.shape, a.strides, a.dtype, off)  # the dtype object: ml_dtypes' bfloat16 has no str
    if seg.name is None:
        from multiprocessing import reduction

        return _rebuild_fd, (reduction.DupFd(seg.fd), seg.size, view)
    _add_ref(seg.name, 1)  # the handle in flight holds a reference until a receiver maps it
    return _rebuild_named, (seg.name, seg.size, view)


def _view(mm, view):
    shape, strides, dtype, off = view
    return np.ndarray(shape, dtype, buffer=mm, offset=off, strides=strides)


def _rebuild_fd(dupfd, size, view):
    fd = dupfd.detach()
    st = os.fstat(fd)
    key = ("fd", st.st_dev, st.st_ino)
    mm = _ATTACHED.get(key)
    if mm is not None:
        os.close(fd)
    else:
        mm = _map(fd, _Segment(fd, None, size), key)
    return _view(mm, view)


def _rebuild_named(name, size, view):
    key = ("fs", name)
    mm = _ATTACHED.get(key)
    if mm is not None:  # mapped here already: the handle's reference is not needed
        _add_ref(name, -1)
    else:  # the handle's reference becomes this mapping's
        import _posixshmem

        fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
        mm = _map(fd, _Segment(None, name, size), key)
    return _view(mm, view)
