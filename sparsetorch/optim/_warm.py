"""Warm start (issue 14, item 5): what an optimizer's construction does so that the training
loop's first iteration runs near its steady speed.

Building an optimizer is the last thing a training script does before its loop, so it is where
the costs that would otherwise land in the first iterations are paid, once per process:

- **Kernels.** numba loads a cached kernel at its first call (2-10 ms each). The optimizer's own
  row kernels (``_kernels.warm``), the small-``bmm`` kernel (a DLRM interaction or attention
  scores: ``bmm(T, T.transpose(1, 2))``), ReLU's backward, the CSR-times-dense row kernels (float)
  (a GCN's ``A @ X``), ``F.softmax``/``F.log_softmax``'s row kernels (a classifier's loss) and,
  when numba may use several threads, the pooled large element-wise passes load now for the
  parameters' dtypes. Embedding layers load theirs when built.
- **Paths.** With those kernels loaded, one tiny training step through the common ops runs
  (``_warm_paths.py``): their Python paths, plans, the tape and the engine run for the first time
  there, not in the first iteration (DLRM-style batch 128: 2.2 -> 1.8 ms, steady 0.73 ms).
- **The collector.** numba's first kernel load builds its typing and target tables: ~200k
  Python objects. Left alone, they are young, and the cyclic collector's next full pass walks
  them all inside a training step (100-320 ms on the 2-core machine, at step 0 or step 15 of a
  DLRM-style loop whose steady step is 1.1 ms). One ``gc.collect()`` here, the first time an
  optimizer is built after numba has loaded, makes them old: the next full pass is then due
  only after as many new long-lived objects again, which a training loop does not make.

Nothing happens when numba is not loaded in the process and no sparse tensor was made (a dense
model whose kernels are all NumPy's): importing numba only to warm it would cost more than it
saves. A process that holds sparse tensors (a GCN's adjacency) will call the sparse kernels, so
numba loads here rather than in the first epoch (pygcn unchanged: first epoch 0.33 s -> 18 ms).
"""

import gc
import sys

from .. import _jit
from .._backend import CPU
from ..dense import _par_pointwise, _small_bmm, _threshold_bwd
from ..nn._kernels import softmax as _softmax
from ..sparse import _payload, _spmm
from . import _kernels, _warm_paths

__all__ = ["prepare"]

_SETTLED = [False]  # the one full collection after numba's tables were built
_STEP_KERNELS = []  # (group, kernel names) loaded for every optimizer's dtypes, built once
_SPMM_ROWS = ("csr_f_rows", "csr_f_rows_p", "pattern_t")  # and the backward's transposes


def _step_kernels(dt):
    if not _STEP_KERNELS:
        bmm = _small_bmm.nt_kernel()
        if bmm is None:  # numba missing or switched off: nothing to load
            return ()
        relu = _threshold_bwd.kernel()  # an MLP's ReLU backward from 16384 elements
        _STEP_KERNELS.extend([
            ((bmm,), None),
            ((relu,) if relu is not None else None, None),
            (_spmm._nb(CPU, dt), _SPMM_ROWS),  # one group for every dtype
            (_softmax.rows(CPU), None),  # log_softmax / cross_entropy
        ])
        if _jit._numba_threads()[0]() > 1:  # large element-wise passes, pooled
            _STEP_KERNELS.append((_par_pointwise.kernels(), None))
    return _STEP_KERNELS


def prepare(cls, dtypes):
    """Load the kernels an optimizer of class ``cls`` over parameters of these NumPy float
    dtypes will meet in its first steps, then settle the collector (once per process). Returns
    how many kernel overloads were loaded."""
    if not _jit.ENABLED[0] or ("numba" not in sys.modules and not _payload.SEEN[0]):
        return 0
    n = 0
    for dt in dtypes:
        if dt.kind == "f" and dt.itemsize in (4, 8):
            for group, names in _step_kernels(dt):
                n += _jit.warm(group, dt, names)
    if "numba" not in sys.modules:  # not installed: the groups above were None
        return n
    n += _kernels.warm(cls, dtypes)
    _warm_paths.run(dtypes)  # the ops' first runs, on tensors of a few rows (once per dtype)
    if not _SETTLED[0]:
        _SETTLED[0] = True
        gc.collect()
    return n
