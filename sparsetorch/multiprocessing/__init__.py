"""torch.multiprocessing: Python's ``multiprocessing`` with tensors shared, not copied.

Everything of ``multiprocessing`` is re-exported (``Process``, ``Queue``, ``Pool``,
``get_context``, ``set_start_method``, ``cpu_count``, ...). Importing this package (which
``import sparsetorch`` does) registers a reducer with ``multiprocessing``'s pickler, so a CPU
tensor put on a queue, sent through a pipe, or passed to a spawned process is first moved into
shared memory (``Tensor.share_memory_()``) and the receiver maps the same memory: writes on
either side are seen by the other (Hogwild training). Plain ``pickle`` / ``sparsetorch.save``
still copy the bytes. Tensor subclasses defined after this import are copied, not shared.

``spawn(fn, args, nprocs, join, daemon, start_method)`` runs ``fn(i, *args)`` in ``nprocs``
processes and re-raises a child's exception in the parent (``ProcessRaisedException``) or
reports how it died (``ProcessExitedException``), as torch's.
"""

import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from ._reductions import init_reductions
from ._spawn import (  # noqa: F401
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,
    SpawnContext, spawn, start_processes,
)
from ._strategy import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

init_reductions()
