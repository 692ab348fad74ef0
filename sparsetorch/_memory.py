"""The densify guard: refuse to materialise a huge dense tensor from a sparse one.

A sparse tensor of shape 1e6 x 1e6 with 10 entries is 240 bytes; its ``to_dense()`` is 4 TB. NumPy
would either raise its own ``MemoryError`` from deep inside or (with overcommit) hand out the
pages lazily and let the kernel's OOM killer end the process later. So every place that allocates
a dense array whose size comes from a sparse tensor's *shape* (not from an existing dense operand)
calls :func:`check_dense_alloc` first, which compares the byte size with a limit and raises
:class:`DenseAllocationError` before anything is allocated.

The limit:

- default (``"auto"``): half of the memory available right now (``MemAvailable`` in
  ``/proc/meminfo``, else ``os.sysconf``), read only for requests above 64 MiB, so small tensors
  pay one comparison;
- ``SPARSETORCH_DENSIFY_LIMIT`` in the environment (read at import): ``"8GB"``, ``"512MiB"``,
  ``"1e9"`` (bytes), ``"auto"``, or ``"0"`` / ``"none"`` / ``"unlimited"`` for no limit;
- :func:`set_densify_limit` (same values; returns the previous setting) and the
  :class:`densify_limit` context manager, both in ``sparsetorch.sparse``.

The state is process-global (not per thread), like ``check_sparse_tensor_invariants``.
"""

import math
import os
import re

__all__ = [
    "DenseAllocationError", "check_dense_alloc", "densify_limit", "get_densify_limit",
    "parse_limit", "set_densify_limit",
]

AUTO = "auto"
_FRACTION = 0.5  # of the memory available when the request is made
_SMALL = 64 << 20  # below this the automatic limit is not consulted (no /proc read)
_ENV = "SPARSETORCH_DENSIFY_LIMIT"


class DenseAllocationError(MemoryError, RuntimeError):
    """A dense result from a sparse tensor would exceed the densify limit.

    A ``MemoryError`` (what Python raises when memory runs out) and a ``RuntimeError`` (what
    torch's ``OutOfMemoryError`` is), so either ``except`` clause catches it.
    """


_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_NONE = ("0", "none", "off", "unlimited", "inf")


def parse_limit(value, what="limit"):
    """``value`` -> bytes (int), ``None`` (no limit) or ``"auto"``.

    Accepts an int/float number of bytes (0 means no limit), ``None``, or a string such as
    ``"8GB"``, ``"512 MiB"``, ``"1e9"``, ``"auto"``, ``"none"``.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected a number of bytes, a string like '8GB', 'auto' or None, got bool")
    if isinstance(value, (int, float)):
        if math.isnan(value) or value < 0:
            raise ValueError(f"{what}: the limit must be a non-negative number of bytes, got {value!r}")
        if math.isinf(value) or value == 0:
            return None
        return int(value)
    if not isinstance(value, str):
        raise TypeError(
            f"{what}: expected a number of bytes, a string like '8GB', 'auto' or None, "
            f"got {type(value).__name__}"
        )
    s = value.strip().lower()
    if s == AUTO:
        return AUTO
    if s in _NONE:
        return None
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)", s)
    if m is None or m.group(2) not in _UNITS:
        raise ValueError(
            f"{what}: can't parse {value!r}; use bytes ('1000000'), a size ('8GB', '512MiB'), "
            "'auto' (half the available memory) or 'none' (no limit)"
        )
    n = float(m.group(1)) * _UNITS[m.group(2)]
    return None if n == 0 else int(n)


def _initial():
    raw = os.environ.get(_ENV)
    if raw is None:
        return AUTO
    try:
        return parse_limit(raw, _ENV)
    except (TypeError, ValueError) as e:
        import warnings

        warnings.warn(f"{e}; using 'auto'", RuntimeWarning, stacklevel=2)
        return AUTO


_STATE = [_initial()]  # bytes (int), None (no limit) or AUTO
# requests up to _FAST[0] bytes pass with one comparison: the explicit limit, or _SMALL in auto
# mode (the automatic limit is never below it), or infinity with no limit
_FAST = [0]


def _refresh():
    s = _STATE[0]
    _FAST[0] = _SMALL if s == AUTO else (math.inf if s is None else s)


_refresh()


def _available_bytes():
    """Memory available to a new allocation (bytes), or None when it can't be told."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        pass
    try:  # macOS has no SC_AVPHYS_PAGES: a fraction of the physical memory is the best guess
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def get_densify_limit():
    """The limit in force now, in bytes (the automatic one computed now), or ``None`` for none."""
    s = _STATE[0]
    if s != AUTO:
        return s
    avail = _available_bytes()
    return None if avail is None else max(int(avail * _FRACTION), _SMALL)


def set_densify_limit(limit):
    """Set the largest dense tensor (bytes) that may be materialised from a sparse one.

    ``limit``: bytes (int), a string (``"8GB"``, ``"512MiB"``), ``"auto"`` (default: half the
    available memory), or ``None`` / ``0`` / ``"none"`` for no limit. Returns the previous setting.
    """
    new = parse_limit(limit, "set_densify_limit()")
    old = _STATE[0]
    _STATE[0] = new
    _refresh()
    return old


class densify_limit:
    """Context manager (or decorator) that sets the densify limit inside a block::

        with sparsetorch.sparse.densify_limit("32GB"):
            big = s.to_dense()
    """

    def __init__(self, limit):
        self.limit = parse_limit(limit, "densify_limit()")
        self.saved = []

    def __enter__(self):
        self.saved.append(set_densify_limit(self.limit))
        return self

    def __exit__(self, *exc):
        _STATE[0] = self.saved.pop()
        _refresh()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with densify_limit(self.limit):
                return fn(*a, **k)
        return wrapper


def _fmt(n):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} bytes"


def _unrepresentable(shape, itemsize):
    n = itemsize
    for s in shape:
        n *= s or 1
    return n >= 2**63


def check_dense_alloc(shape, dtype, what="to_dense()"):
    """Raise :class:`DenseAllocationError` if a dense array of ``shape``/``dtype`` is over the limit.

    ``dtype``: anything with ``itemsize`` (a sparsetorch or NumPy dtype). Call it before
    allocating; ``what`` names the operation in the message.
    """
    n = dtype.itemsize
    for s in shape:
        n *= s
    if n <= _FAST[0]:
        if n == 0 and _unrepresentable(shape, dtype.itemsize):
            raise DenseAllocationError(
                f"{what}: a dense array of shape {list(shape)} can't exist: the product of its "
                "non-zero dimensions overflows the addressable size"
            )
        return
    limit = get_densify_limit()
    if limit is None or n <= limit:
        return
    auto = _STATE[0] == AUTO
    raise DenseAllocationError(
        f"{what}: the dense result of shape {list(shape)} ({dtype}) would need {_fmt(n)}, over the "
        f"densify limit of {_fmt(limit)}"
        + (f" ({int(_FRACTION * 100)}% of the memory available now)" if auto else "")
        + ". Keep the tensor sparse (most ops accept sparse input), or raise the limit: "
        "sparsetorch.sparse.set_densify_limit('64GB') (None for no limit), the context manager "
        "sparsetorch.sparse.densify_limit(...), or the environment variable "
        f"{_ENV}=64GB."
    )
