"""Backend: the array module (``xp``) and sparse module (``sp``) of a device.

Kernels receive a Backend and use ``be.xp`` / ``be.sp`` only, so one kernel serves NumPy/SciPy
on the CPU and CuPy/cupyx on the GPU. There is one Backend object per device (``cuda:0`` and
``cuda:1`` have distinct ones), so "same device" is an identity test.

CUDA is probed lazily: importing sparsetorch never imports CuPy. ``cuda_device_count()`` is the
cached probe (0 where CuPy is missing, fails to import, or sees no GPU).

Test-only fake CUDA: with the environment variable ``SPARSETORCH_FAKE_CUDA=<n>`` set when
sparsetorch is imported, devices ``cuda:0`` .. ``cuda:<n-1>`` exist and are served by
NumPy/SciPy, through a distinct Backend named ``"cuda"`` per device. Tensors on them report
``is_cuda``, cross-device ops raise, and the CPU-only (numba) kernels are skipped, so the device
plumbing and the backend-generic kernel paths are testable on a machine without a GPU. It says
nothing about CuPy's coverage of the NumPy API: that needs a real GPU run (docs/gpu.md).
"""

import os
import weakref

import numpy
import scipy.sparse
import scipy.special

__all__ = ["CPU", "Backend", "cuda_device_count", "get_backend", "move", "writeable"]


class Backend:
    __slots__ = ("activate", "index", "name", "on_host", "sp", "special", "xp")

    def __init__(self, name, xp, sp, special, index=None, activate=None, on_host=None):
        self.name = name
        self.xp = xp  # numpy | cupy
        self.sp = sp  # scipy.sparse | cupyx.scipy.sparse
        self.special = special  # scipy.special | cupyx.scipy.special (erf, gammaln, ...)
        self.index = index  # the CUDA device index; None on the CPU
        self.activate = activate  # makes this device CuPy's current one (multi-GPU only)
        self.on_host = xp is numpy if on_host is None else on_host  # arrays are NumPy arrays

    def __repr__(self):
        return f"Backend({self.name})" if self.index is None else f"Backend({self.name}:{self.index})"

    def host(self, a):
        """``a`` (an array of this backend) as a NumPy array; a copy only when it is on a GPU."""
        return a if self.on_host else a.get()


CPU = Backend("cpu", numpy, scipy.sparse, scipy.special)

_FAKE = int(os.environ.get("SPARSETORCH_FAKE_CUDA", "0") or 0)  # read once, at import
_cuda = {}  # device index -> Backend
_probe = []  # [device count, reason it is 0 or None], filled by the first probe
_current = [0]  # the current CUDA device (torch.cuda.current_device())


def cuda_device_count():
    """The number of CUDA devices (cached); 0, without error, when CUDA is unusable."""
    if not _probe:
        _probe.extend(_probe_cuda())
    return _probe[0]


def cuda_unavailable_reason():
    cuda_device_count()
    return _probe[1]


def _probe_cuda():
    if _FAKE > 0:
        return _FAKE, None
    try:
        import cupy
        import cupyx.scipy.sparse
        import cupyx.scipy.special  # noqa: F401
    except ImportError:
        return 0, ("CuPy is not installed (pip install 'sparsetorch[cuda12]' or "
                   "'sparsetorch[cuda13]')")
    except Exception as e:  # noqa: BLE001 - a broken CUDA install fails in many ways
        return 0, f"CuPy failed to import ({type(e).__name__}: {e})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CuPy raises its own runtime error types
        return 0, f"the CUDA runtime reports {type(e).__name__}: {e}"
    if n == 0:
        return 0, "no GPU was found"
    return n, None


def current_index():
    """The current CUDA device's index (0 when there is no GPU). Kept here, not read back from
    CuPy: running a kernel on another GPU switches CuPy's device (``Backend.activate``) but must
    not change where ``device='cuda'`` places new tensors."""
    return _current[0]


def set_current_index(i):
    _current[0] = i
    if _FAKE == 0 and cuda_device_count():
        import cupy

        cupy.cuda.runtime.setDevice(i)  # raw CuPy code in the user's program follows too


def cuda_backend(index=None):
    """The backend of device ``cuda:<index>`` (current device when None), or a RuntimeError."""
    if index is None:
        index = current_index()
    be = _cuda.get(index)
    if be is not None:
        return be
    n = cuda_device_count()
    if n == 0:
        raise RuntimeError(
            f"CUDA is not available: {cuda_unavailable_reason()}, so tensors cannot be placed on "
            "a 'cuda' device; use device='cpu' (check sparsetorch.cuda.is_available() first)."
        )
    if index >= n:
        raise RuntimeError(
            f"CUDA error: invalid device ordinal: device cuda:{index} was requested but only {n} "
            f"CUDA device(s) exist (valid indices 0..{n - 1})."
        )
    from ._xpcompat import compat_namespace, compat_sparse, compat_special

    if _FAKE > 0:
        be = Backend("cuda", _compat_xp(compat_namespace, numpy), compat_sparse(scipy.sparse),
                     scipy.special, index, on_host=True)
    else:
        import cupy
        import cupyx.scipy.sparse
        import cupyx.scipy.special

        act = None
        if n > 1:  # kernels allocate on CuPy's current device: make it this one first
            def act(i=index, get=cupy.cuda.runtime.getDevice, put=cupy.cuda.runtime.setDevice):
                if get() != i:
                    put(i)
        be = Backend("cuda", _compat_xp(compat_namespace, cupy), cupyx.scipy.sparse,
                     compat_special(cupyx.scipy.special, scipy.special, cupy), index, act)
    _cuda[index] = be
    return be


_xp_cache = []  # the one compat namespace of this process (all CUDA devices share it)


def _compat_xp(make, base):
    if not _xp_cache:
        _xp_cache.append(make(base))
    return _xp_cache[0]


def get_backend(device):
    if device.type == "cpu":
        return CPU
    be = _cuda.get(device.index)
    if be is None:
        be = cuda_backend(device.index)
    if be.activate is not None:
        be.activate()
    return be


def writeable(a):
    """Whether array ``a`` may be written in place: NumPy's flag (False on an expanded view);
    CuPy arrays have no such flag, so there: no dimension of size > 1 with stride 0."""
    f = getattr(a.flags, "writeable", None)
    if f is not None:
        return f
    return all(s != 0 or n <= 1 for s, n in zip(a.strides, a.shape))


def move(a, src, dst):
    """A copy of array ``a`` (living on backend ``src``) on backend ``dst``'s device."""
    if dst.on_host:  # to the host (CPU or fake CUDA)
        h = src.host(a)
        return h.copy() if h is a else h
    if dst.activate is not None:
        dst.activate()
    if src.on_host:
        return dst.xp.asarray(a)  # host -> device always copies
    return dst.xp.copy(a)  # device -> device: allocated on the current (= dst's) device


# ---- page-locked (pinned) host memory: Tensor.pin_memory / is_pinned ----

_fake_pinned = weakref.WeakValueDictionary()  # fake CUDA: id(root buffer) -> that root array


def _root(a):
    while isinstance(getattr(a, "base", None), numpy.ndarray):
        a = a.base
    return a


def pinned_copy(a):
    """A copy of host array ``a`` in page-locked memory (CuPy's pinned pool on a GPU machine), so
    host<->device copies of it can run asynchronously. Raises torch's RuntimeError without CUDA."""
    if cuda_device_count() == 0:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if _FAKE > 0:
        out = numpy.array(a, copy=True, order="C")
        _fake_pinned[id(out)] = out
        return out
    import cupyx

    out = cupyx.empty_pinned(a.shape, a.dtype)
    out[...] = a
    return out


def is_pinned(a):
    """Whether host array ``a`` lives in page-locked memory (False without CUDA, as torch)."""
    if not isinstance(a, numpy.ndarray) or cuda_device_count() == 0:
        return False
    if _FAKE > 0:
        r = _root(a)
        return _fake_pinned.get(id(r)) is r
    if a.size == 0:
        return False
    import cupy

    try:
        attrs = cupy.cuda.runtime.pointerGetAttributes(a.ctypes.data)
    except Exception:  # noqa: BLE001 - pageable memory on older runtimes raises here
        return False
    return attrs.type == getattr(cupy.cuda.runtime, "memoryTypeHost", 1)
