"""sparsetorch: a sparse-first tensor library with PyTorch's API, on NumPy/SciPy (and CuPy).

``import sparsetorch as torch`` and run PyTorch code unchanged.
"""

import typing as _std_typing
import warnings as _warnings

# torch computes inf/nan silently; NumPy would warn ("invalid value encountered in log") from
# inside our kernels. Silence those floating-point RuntimeWarnings for sparsetorch's modules only.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"sparsetorch\.")

from . import _dtype  # noqa: F401
from ._device import device  # noqa: F401
from ._dtype import (  # noqa: F401
    bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16,
    float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long, promote_types,
    result_type, can_cast, set_default_dtype, short, uint8,
)
from ._layout import layout, sparse_coo, sparse_csr, strided  # noqa: F401
from ._tensor import Size, Tensor  # noqa: F401
from ._ops import *  # noqa: F401,F403
from . import _tensor_methods  # noqa: F401 - binds the Tensor methods (floor 8)
from ._numpy_kwargs import FUNCTIONS as _NK_NAMES, with_numpy_kwargs as _nk  # noqa: E402
globals().update({_n: _nk(globals()[_n], _n) for _n in _NK_NAMES if _n in globals()})  # axis=, keepdims=
if _std_typing.TYPE_CHECKING:  # a checker cannot read _ops' computed __all__: the annotated factories
    from ._ops._ranges import arange, eye, linspace, logspace  # noqa: F401
    from ._ops.creation import (  # noqa: F401
        as_tensor, asarray, complex, empty, empty_like, empty_strided, from_numpy, full, full_like, ones,
        ones_like, polar, scalar_tensor, tensor, zeros, zeros_like,
    )
    from ._ops.random import rand, rand_like, randint, randn, randn_like  # noqa: F401
    from ._ops.sparse_core import sparse_coo_tensor, sparse_csr_tensor  # noqa: F401
from . import autograd  # noqa: F401
from . import sparse  # noqa: F401
from . import testing  # noqa: F401
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from .autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .autograd.anomaly_mode import (  # noqa: F401 - torch.is_anomaly_enabled & co.
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)

from .torch_version import __version__  # noqa: F401,E402 - "2.13.0+sparsetorch.0.1.0", comparable
from ._memory import DenseAllocationError  # noqa: F401,E402 - sparsetorch.DenseAllocationError
from . import cuda  # noqa: F401,E402 - sparsetorch.cuda (torch.cuda)
from . import utils  # noqa: F401,E402 - sparsetorch.utils.data (torch.utils.data)
from .serialization import load, save  # noqa: F401,E402 - sparsetorch.save / sparsetorch.load
from . import distributed  # noqa: F401,E402 - torch.distributed (MPI/NCCL; imports mpi4py lazily)
# torch.linalg: importing the package rebinds the name ``linalg``, which ``from ._ops import *``
# had set to the internal module _ops.linalg (mm, matmul, ...); then torch's top-level aliases.
from .linalg._aliases import (  # noqa: F401,E402
    cholesky, det, inverse, logdet, matrix_exp, matrix_power, pinverse, qr, slogdet, svd,
)
from . import special  # noqa: F401,E402 - torch.special
from . import fft  # noqa: F401,E402 - torch.fft (xp.fft kernels, differentiable)
from . import distributions  # noqa: F401,E402 - torch.distributions
from .distributions.utils import (  # noqa: F401,E402 - torch's private samplers
    _sample_dirichlet, _standard_gamma, standard_gamma_grad as _standard_gamma_grad,
)
from . import profiler  # noqa: F401,E402 - torch.profiler (autograd.profiler underneath)
from . import multiprocessing  # noqa: F401,E402 - torch.multiprocessing (shares tensors sent to processes)
from . import hub  # noqa: F401,E402 - torch.hub (checkpoints from URLs, local hubconf.py)
from ._legacy import (  # noqa: F401,E402 - legacy typed tensors (torch.FloatTensor & co.)
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
    IntTensor, LongTensor, ShortTensor, set_default_tensor_type, typename,
)
# platform modules (torch.backends, jit, compile, accelerator, version, ops: see docs/design-notes.md)
from . import accelerator, backends, compiler, jit, version  # noqa: F401,E402
from . import _dynamo  # noqa: F401,E402 - torch._dynamo (reset, config) around the eager compile
from ._dynamo.eval_frame import compile  # noqa: F401,E402 - torch.compile, run eagerly
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401,E402
# torch.amp / torch.cpu (autocast, GradScaler; see sparsetorch/_autocast.py)
from . import amp, cpu  # noqa: F401,E402
from .amp import GradScaler, autocast  # noqa: F401,E402
from .amp.autocast_mode import (  # noqa: F401,E402
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
    get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
    is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled,
    set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from . import random  # noqa: E402 - torch.random (seeding, fork_rng)
# The kernel package sparsetorch.dense (loaded by the ops) is no public name; ``import
# sparsetorch.dense.X`` still works (tests/test_namespaces.py keeps dir(sparsetorch) equal to torch's).
del dense  # noqa: F821


def __getattr__(name):  # PEP 562: only names not found above reach here
    if name == "__all__":  # help() lists, and ``import *`` takes, every public name of the moment
        return sorted(n for n in globals() if not n.startswith("_"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
