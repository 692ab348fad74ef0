"""``sparsetorch.fft``: torch.fft's discrete Fourier transforms on dense tensors.

Kernels are the backend's ``xp.fft`` (NumPy on the CPU, ``cupy.fft`` on a GPU), single
precision kept (float32 in, complex64 out). Every transform is differentiable, with torch's
complex-gradient convention; derivatives are written with the transforms themselves, so
higher derivatives work. Sparse inputs are refused with the ``.to_dense()`` hint.
"""

from ._api import (
    fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft, irfft2,
    irfftn, rfft, rfft2, rfftn,
)
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "hfft2", "ihfft2",
    "hfftn", "ihfftn",
]
