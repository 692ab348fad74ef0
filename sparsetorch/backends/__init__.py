"""sparsetorch.backends (torch.backends): the switches of the math libraries torch builds on,
with torch's names, defaults and types. sparsetorch runs NumPy/SciPy/numba kernels on the CPU
and CuPy on CUDA, so most switches are recorded, not applied; ``cudnn.deterministic`` is
honoured (it makes sparsetorch's own kernels deterministic). Re-exports only."""

from . import _props
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401
from ._precision import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]

_PRECISION = ["none"]
_props.install(__name__, {
    "fp32_precision": property(lambda self: _PRECISION[0],
                               lambda self, v: _PRECISION.__setitem__(
                                   0, _props.check_precision(v))),
})
