"""``sparsetorch.fft``: torch.fft's discrete Fourier transforms on dense tensors.

Kernels are the backend's ``xp.fft`` (NumPy on the CPU, ``cupy.fft`` on a GPU), single
precision kept (float32 in, complex64 out). Every transform is differentiable, with torch's
complex-gradient convention; derivatives are written with the transforms themselves, so
higher derivatives work. Sparse inputs are refused with the ``.to_dense()`` hint.
"""

from ._api import (
    fft,
    fft2,
    fftn,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
