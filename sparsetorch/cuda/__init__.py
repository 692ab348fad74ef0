"""sparsetorch.cuda: the CUDA devices (torch.cuda), served by CuPy.

Importing this module never imports CuPy; the first call that needs it probes once and caches
the answer. ``is_available()`` is False, without error, where CuPy is missing, fails to import,
or sees no GPU; functions that need a GPU then raise torch's error types (``AssertionError``
where CuPy is absent, as torch "not compiled with CUDA"; ``RuntimeError`` where CuPy is present
but finds no GPU). The memory figures come from CuPy's default memory pool.

Random numbers: random tensors are drawn on the host by the default generator and then moved to
their device (``sparsetorch._generator``), so one seed gives the same numbers on every device.
``manual_seed`` / ``manual_seed_all`` therefore seed that default generator when a GPU is
present, and do nothing otherwise (as torch, where they are lazy no-ops without CUDA).

Testing without a GPU: ``SPARSETORCH_FAKE_CUDA=<n>`` in the environment when sparsetorch is
imported makes ``n`` fake CUDA devices served by NumPy/SciPy (see ``sparsetorch._backend``).
They exercise the device plumbing (placement, ``.to``/``.cuda``/``.cpu``, cross-device errors,
modules, optimizers, the CPU-only kernels being skipped); the memory figures are 0 there.
"""

from ._runtime import (  # noqa: F401 - the runtime's public names and the helpers streams use
    is_available,
    device_count,
    is_initialized,
    _need_cuda,
    _index,
    _check_index,
    current_device,
    set_device,
    device,
    synchronize,
    _properties,
    get_device_name,
    get_device_capability,
    is_bf16_supported,
    manual_seed,
    manual_seed_all,
    _pool_bytes,
    memory_allocated,
    memory_reserved,
    max_memory_allocated,
    reset_peak_memory_stats,
    empty_cache,
)
from . import _runtime

__all__ = list(_runtime.__all__)

# ---- legacy typed tensors: torch.cuda.FloatTensor & co. (sparsetorch/_legacy.py) ----
from .._legacy import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

BFloat16Tensor = _CUDA_TYPES["BFloat16Tensor"]
BoolTensor = _CUDA_TYPES["BoolTensor"]
ByteTensor = _CUDA_TYPES["ByteTensor"]
CharTensor = _CUDA_TYPES["CharTensor"]
DoubleTensor = _CUDA_TYPES["DoubleTensor"]
FloatTensor = _CUDA_TYPES["FloatTensor"]
HalfTensor = _CUDA_TYPES["HalfTensor"]
IntTensor = _CUDA_TYPES["IntTensor"]
LongTensor = _CUDA_TYPES["LongTensor"]
ShortTensor = _CUDA_TYPES["ShortTensor"]
from . import sparse  # noqa: E402,F401 - torch.cuda.sparse (typed COO classes)
__all__ += sorted(_CUDA_TYPES) + ["sparse"]


# ---- streams and events (cuda/streams.py) ----

from .streams import (  # noqa: E402
    Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream,
)

__all__ += ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
            "stream"]

from . import amp  # noqa: E402,F401 - torch.cuda.amp (deprecated autocast/GradScaler spellings)

__all__ += ["amp"]
