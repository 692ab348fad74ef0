"""Backend: the array module (``xp``) and sparse module (``sp``) of a device.

Kernels receive a Backend and use ``be.xp`` / ``be.sp`` only, so one kernel serves NumPy/SciPy
on the CPU and CuPy/cupyx on the GPU.
"""

import numpy
import scipy.sparse
import scipy.special

__all__ = ["Backend", "CPU", "get_backend"]


class Backend:
    __slots__ = ("name", "xp", "sp", "special")

    def __init__(self, name, xp, sp, special):
        self.name = name
        self.xp = xp  # numpy | cupy
        self.sp = sp  # scipy.sparse | cupyx.scipy.sparse
        self.special = special  # scipy.special | cupyx.scipy.special (erf, gammaln, ...)

    def __repr__(self):
        return f"Backend({self.name})"


CPU = Backend("cpu", numpy, scipy.sparse, scipy.special)
_cuda = []


def cuda_backend():
    """The CuPy backend, or a RuntimeError saying why there is none."""
    if _cuda:
        return _cuda[0]
    try:
        import cupy
        import cupyx.scipy.sparse
        import cupyx.scipy.special
    except ImportError as e:
        raise RuntimeError(
            "CUDA is not available: CuPy is not installed (pip install 'sparsetorch[cuda]'), "
            "so tensors cannot be placed on a 'cuda' device; use device='cpu'."
        ) from e
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CuPy raises its own runtime error types
        raise RuntimeError(f"CUDA is not available: {e}; use device='cpu'.") from e
    if n == 0:
        raise RuntimeError("CUDA is not available: no GPU was found; use device='cpu'.")
    _cuda.append(Backend("cuda", cupy, cupyx.scipy.sparse, cupyx.scipy.special))
    return _cuda[0]


def get_backend(device):
    if device.type == "cpu":
        return CPU
    return cuda_backend()
