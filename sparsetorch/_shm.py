"""Shared-memory arrays: the payload side of ``Tensor.share_memory_()`` and ``torch.multiprocessing``.

An array is *shared* when its root buffer is an ``mmap`` of a shared-memory segment made (or
attached) here; the registry below maps such ``mmap`` objects to their segment, so ``is_shared``
is a walk down ``.base`` and one dictionary look-up. A segment is a whole C-contiguous copy of the
array that was shared; the array's own views keep their offset and strides when they travel.

Two strategies, as torch's (``torch.multiprocessing.set_sharing_strategy``):

- ``"file_descriptor"`` (default on Linux): an anonymous ``memfd`` segment. No name exists in the
  file system, so nothing can leak; a receiving process gets a duplicate of the descriptor through
  ``multiprocessing``'s ``DupFd`` (passed at spawn, or fetched from the sender's resource sharer).
- ``"file_system"``: a named POSIX segment (``/dev/shm/sparsetorch_<pid>_<token>``), attached by
  name. The creating process unlinks it when its last array of the segment is freed (or at exit;
  the multiprocessing resource tracker removes it if the creator is killed), so, as with CUDA
  tensors in torch, the producer must keep a shared tensor alive until consumers have received it.

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
    """One mapped segment in this process: its descriptor (kept open, so it can be sent again),
    or its name, and its byte size."""

    __slots__ = ("fd", "name", "size", "owner_pid", "__weakref__")

    def __init__(self, fd, name, size, owner_pid=None):
        self.fd, self.name, self.size, self.owner_pid = fd, name, size, owner_pid


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


def _close_fd(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _unlink(name, owner_pid):
    if os.getpid() != owner_pid:  # a forked child freeing its copy of the parent's array
        return
    import _posixshmem
    from multiprocessing import resource_tracker

    try:
        _posixshmem.shm_unlink(name)
    except OSError:
        pass
    resource_tracker.unregister(name, "shared_memory")


def _register(mm, seg):
    _SEGMENTS[mm] = seg
    if seg.fd is not None:
        weakref.finalize(mm, _close_fd, seg.fd)
    if seg.owner_pid is not None:
        weakref.finalize(mm, _unlink, seg.name, seg.owner_pid)


def _new_segment(nbytes):
    size = max(int(nbytes), 1)  # mmap refuses empty mappings
    if _strategy == "file_descriptor":
        fd = os.memfd_create("sparsetorch", os.MFD_CLOEXEC)
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)
        _register(mm, _Segment(fd, None, size))
        st = os.fstat(fd)
        _ATTACHED[("fd", st.st_dev, st.st_ino)] = mm  # a segment sent back here maps once
        return mm
    import _posixshmem
    from multiprocessing import resource_tracker

    name = f"/sparsetorch_{os.getpid()}_{secrets.token_hex(6)}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    resource_tracker.register(name, "shared_memory")
    _register(mm, _Segment(None, name, size, os.getpid()))
    _ATTACHED[("fs", name)] = mm
    return mm


def share_array(a):
    """``a`` itself if it is already shared, else a copy of it in a new shared segment."""
    if is_shared_array(a):
        return a
    a = np.asarray(a)
    mm = _new_segment(a.nbytes)
    out = np.ndarray(a.shape, a.dtype, buffer=mm)
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
    view = (a.shape, a.strides, a.dtype.str, off)
    if seg.fd is not None:
        from multiprocessing import reduction

        return _rebuild_fd, (reduction.DupFd(seg.fd), seg.size, view)
    return _rebuild_named, (seg.name, seg.size, view)


def _view(mm, view):
    shape, strides, dtype, off = view
    return np.ndarray(shape, np.dtype(dtype), buffer=mm, offset=off, strides=strides)


def _rebuild_fd(dupfd, size, view):
    fd = dupfd.detach()
    st = os.fstat(fd)
    key = ("fd", st.st_dev, st.st_ino)
    mm = _ATTACHED.get(key)
    if mm is not None:
        os.close(fd)
    else:
        mm = mmap.mmap(fd, size)
        _register(mm, _Segment(fd, None, size))
        _ATTACHED[key] = mm
    return _view(mm, view)


def _rebuild_named(name, size, view):
    key = ("fs", name)
    mm = _ATTACHED.get(key)
    if mm is None:
        import _posixshmem

        fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
        try:
            mm = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        _register(mm, _Segment(None, name, size))
        _ATTACHED[key] = mm
    return _view(mm, view)
