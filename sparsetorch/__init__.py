"""sparsetorch: a sparse-first tensor library with PyTorch's API, on NumPy/SciPy (and CuPy).

``import sparsetorch as torch`` and run PyTorch code unchanged.
"""

import warnings as _warnings

# torch computes inf/nan silently; NumPy would warn ("invalid value encountered in log") from
# inside our kernels. Silence those floating-point RuntimeWarnings for sparsetorch's modules only.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"sparsetorch\.")

from . import _dtype  # noqa: F401
from ._device import device  # noqa: F401
from ._dtype import (  # noqa: F401
    bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16, float32,
    float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long, promote_types,
    result_type, can_cast, set_default_dtype, short, uint8,
)
from ._layout import layout, sparse_coo, sparse_csr, strided  # noqa: F401
from ._tensor import Size, Tensor  # noqa: F401
from ._ops import *  # noqa: F401,F403
from . import autograd  # noqa: F401
from . import sparse  # noqa: F401
from . import testing  # noqa: F401
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from .autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401

__version__ = "0.1.0"
