"""sparsetorch.accelerator (torch.accelerator): the current accelerator, device-agnostic. The
only accelerator sparsetorch drives is CUDA (through CuPy); without one, the calls that need a
device raise torch's RuntimeError."""

import contextlib

from . import cuda as _cuda
from ._device import device as _device

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream",
    "device_count", "device_index", "empty_cache", "is_available", "max_memory_allocated",
    "memory_allocated", "memory_reserved", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def _need():
    if not _cuda.is_available():
        raise RuntimeError(_NONE)


def is_available():
    """Whether an accelerator (a CUDA device) can be used."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """``device(type='cuda')`` when CUDA is present, else None."""
    return _device("cuda") if _cuda.is_available() else None


def device_count():
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count()


def current_device_index():
    """The index of the current accelerator device."""
    _need()
    return _cuda.current_device()


def current_device_idx():
    """Deprecated spelling of :func:`current_device_index`."""
    return current_device_index()


def set_device_index(device, /):
    """Sets the current accelerator device."""
    _need()
    _cuda.set_device(device)


def set_device_idx(device, /):
    """Deprecated spelling of :func:`set_device_index`."""
    set_device_index(device)


def synchronize(device=None, /):
    """Waits for all work on ``device`` (default: the current one)."""
    _need()
    _cuda.synchronize(device)


def current_stream(device=None, /):
    """The current stream of ``device``."""
    _need()
    return _cuda.current_stream(device)


def set_stream(stream):
    """Makes ``stream`` the current stream of its device."""
    _need()
    _cuda.set_stream(stream)


@contextlib.contextmanager
def device_index(device, /):
    """Context manager making ``device`` (an index, or None: nothing) the current device."""
    if device is None:
        yield
        return
    _need()
    with _cuda.device(device):
        yield


def empty_cache():
    _need()
    _cuda.empty_cache()


def memory_allocated(device_index=None, /):
    _need()
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None, /):
    _need()
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None, /):
    _need()
    return _cuda.memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None, /):
    _need()
    _cuda.reset_peak_memory_stats(device_index)
