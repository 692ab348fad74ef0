"""The CUDA runtime behind ``sparsetorch.cuda``: devices, the current device, memory figures,
seeding. The package face (``cuda/__init__.py``) re-exports these names; modules inside the
package import them from here (a face is never imported from below)."""


from .. import _backend
from .._device import device as _device_cls

__all__ = [
    "current_device",
    "device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "set_device",
    "synchronize",
]


def is_available():
    """Whether a CUDA device can be used (CuPy imports and sees at least one GPU)."""
    return _backend.cuda_device_count() > 0


def device_count():
    """The number of CUDA devices (0 without CuPy or a GPU)."""
    return _backend.cuda_device_count()


def is_initialized():
    """Whether some CUDA device has been used by sparsetorch in this process."""
    return bool(_backend._cuda)


def _need_cuda(fname):
    """Raise torch's error when there is no CUDA device to act on."""
    if is_available():
        return
    reason = _backend.cuda_unavailable_reason()
    if "not installed" in reason or "failed to import" in reason:
        raise AssertionError(
            f"sparsetorch.cuda.{fname}(): sparsetorch has no CUDA support here: {reason}. "
            "Check sparsetorch.cuda.is_available() before using CUDA."
        )
    raise RuntimeError(
        f"sparsetorch.cuda.{fname}(): No CUDA GPUs are available ({reason}). Check "
        "sparsetorch.cuda.is_available() before using CUDA."
    )


def _index(dev, fname, optional=True):
    """A device index from an int / 'cuda:N' / device / None (None: the current device)."""
    if dev is None:
        if not optional:
            raise ValueError(f"{fname}(): expected a cuda device, but got None")
        return current_device()
    if isinstance(dev, bool):
        raise TypeError(f"{fname}(): expected a device index or a cuda device, got a bool")
    if isinstance(dev, int):
        return dev
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if dev.type != "cuda":
            raise ValueError(f"{fname}(): expected a cuda device, but got: {dev}")
        return current_device() if dev.index is None else dev.index
    raise TypeError(
        f"{fname}(): expected an int, a device string such as 'cuda:0', or a sparsetorch.device, "
        f"got {type(dev).__name__}"
    )


def _check_index(i, fname):
    n = device_count()
    if not 0 <= i < n:
        raise RuntimeError(
            f"{fname}(): CUDA error: invalid device ordinal: device {i} was requested but "
            f"{n} CUDA device(s) exist (valid indices 0..{n - 1})."
        )


# ---- current device ----


def current_device():
    """The index of the current CUDA device (where ``device='cuda'`` places tensors)."""
    _need_cuda("current_device")
    return _backend.current_index()


def set_device(device):
    """Sets the current CUDA device; a negative index is a no-op, as in torch."""
    i = _index(device, "set_device")
    if i < 0:
        return
    _need_cuda("set_device")
    _check_index(i, "set_device")
    _backend.set_current_index(i)


class device:
    """Context manager that makes ``device`` the current CUDA device, restoring the previous one
    on exit: tensors created with ``device='cuda'`` inside go to it. ``None`` or a negative index
    does nothing."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device, "device")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return self
        if not is_available():
            raise RuntimeError(
                f"sparsetorch.cuda.device({self.idx}): CUDA is not available "
                f"({_backend.cuda_unavailable_reason()}); check sparsetorch.cuda.is_available()."
            )
        _check_index(self.idx, "device")
        self.prev_idx = _backend.current_index()
        if self.prev_idx != self.idx:
            _backend.set_current_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _backend.set_current_index(self.prev_idx)
        return False


# ---- synchronisation, devices' names ----


def synchronize(device=None):
    """Waits for all kernels on ``device`` (default: the current one) to finish."""
    _need_cuda("synchronize")
    i = _index(device, "synchronize")
    _check_index(i, "synchronize")
    be = _backend.cuda_backend(i)
    if not be.on_host:
        be.xp.cuda.Device(i).synchronize()


def _properties(i):
    import cupy

    return cupy.cuda.runtime.getDeviceProperties(i)


def get_device_name(device=None):
    """The name of a CUDA device, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    _need_cuda("get_device_name")
    i = _index(device, "get_device_name")
    _check_index(i, "get_device_name")
    if _backend._FAKE:
        return f"sparsetorch fake CUDA device {i} (NumPy)"
    name = _properties(i)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None):
    """``(major, minor)`` compute capability of a CUDA device."""
    _need_cuda("get_device_capability")
    i = _index(device, "get_device_capability")
    _check_index(i, "get_device_capability")
    if _backend._FAKE:
        return (0, 0)
    p = _properties(i)
    return (int(p["major"]), int(p["minor"]))


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 tensors work on the current CUDA device: False without one (as torch);
    natively from compute capability 8.0, emulated (in float32 with one rounding) below it."""
    if not is_available():
        return False
    if _backend._FAKE or get_device_capability() >= (8, 0):
        return True
    return bool(including_emulation)


# ---- random numbers ----


def manual_seed(seed):
    """Seeds the generator that CUDA tensors draw from (the host default generator; see the
    module docstring). Does nothing without a GPU, as torch."""
    seed = int(seed)
    if is_available():
        from .._generator import manual_seed as _seed

        _seed(seed)


def manual_seed_all(seed):
    """:func:`manual_seed` for every device (they share one generator here)."""
    manual_seed(seed)


# ---- memory (CuPy's default memory pool) ----

# device index -> [peak, pool size at the last reset]. CuPy keeps no peak of its own; its pool
# only grows until empty_cache, so growth of the pool since the reset bounds the peak from above.
_peak = {}


def _pool_bytes(device, fname):
    """(used, held, index): bytes of CuPy's pool on a device; (0, 0, None) without a GPU or on
    fake devices."""
    if not is_available() or _backend._FAKE:
        return 0, 0, None
    i = _index(device, fname)
    _check_index(i, fname)
    import cupy

    with cupy.cuda.Device(i):
        pool = cupy.get_default_memory_pool()
        used, held = pool.used_bytes(), pool.total_bytes()
    rec = _peak.setdefault(i, [0, 0])
    rec[0] = max(rec[0], used, held if held > rec[1] else 0)
    return used, held, i


def memory_allocated(device=None):
    """Bytes currently occupied by arrays on ``device`` (CuPy pool's used bytes)."""
    return _pool_bytes(device, "memory_allocated")[0]


def memory_reserved(device=None):
    """Bytes held by the caching allocator on ``device`` (used + cached free blocks)."""
    return _pool_bytes(device, "memory_reserved")[1]


def max_memory_allocated(device=None):
    """The high-water mark of the pool on ``device`` since the start or the last
    :func:`reset_peak_memory_stats`. CuPy's pool only grows until :func:`empty_cache`, so this is
    its largest size seen, an upper bound of torch's figure (block rounding included)."""
    _, _, i = _pool_bytes(device, "max_memory_allocated")
    return 0 if i is None else _peak[i][0]


def reset_peak_memory_stats(device=None):
    """Restarts :func:`max_memory_allocated`'s high-water mark from the current usage."""
    used, held, i = _pool_bytes(device, "reset_peak_memory_stats")
    if i is not None:
        _peak[i] = [used, held]


def empty_cache():
    """Returns the pool's cached free blocks (device and pinned host memory) to the driver."""
    if not is_available() or _backend._FAKE:
        return
    import cupy

    for i in list(_backend._cuda):
        _pool_bytes(i, "empty_cache")  # record the peak before the pool shrinks
        with cupy.cuda.Device(i):
            cupy.get_default_memory_pool().free_all_blocks()
        _peak[i][1] = 0  # the pool shrank: any later growth is new usage
    cupy.get_default_pinned_memory_pool().free_all_blocks()
