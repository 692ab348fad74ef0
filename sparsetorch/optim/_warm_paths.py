"""Warm start, the Python half (issue 14, item 5): one tiny training step through the common ops,
run once per process and dtype when an optimizer is built (after ``_warm.prepare`` loaded the
kernels).

A fresh process's first training iteration ran 2-3x slower than its second even with every
kernel loaded: each op's Python path, the dispatcher's plans, the tape and the engine ran for the
first time (a DLRM-style step at batch 128, one thread: 2.2 ms first, 0.73 ms steady; the same
first step of a second model built in the same process: 1.4 ms). This step, on tensors of a few
rows, takes those first runs ahead:

- dense: ``F.linear``, ``F.relu``, ``stack``, ``bmm`` with a transpose, ``reshape``,
  ``index_select``, ``cat``, ``sum``, ``F.binary_cross_entropy_with_logits``, ``F.cross_entropy``,
  ``F.mse_loss``, ``backward``;
- when an embedding layer was built (its kernels are loaded): ``F.embedding_bag`` and
  ``F.embedding`` with sparse gradients;
- when the process has made a sparse tensor (its kernels are loaded): CSR and COO ``sparse.mm``
  products large enough for the row kernels ``_warm`` loaded, and their transposed backward.

It draws no random numbers, touches no user tensor, calls no ``nn.Module`` (no global hooks run)
and records nothing the user can see: it is skipped while the profiler, anomaly detection or
autocast is on, and any error in it is dropped (the training step then meets the cold paths as
before). It runs under ``_jit.no_compile()``: the kernels it reaches are those ``_warm.prepare``
and the embedding layers loaded; with a cold numba cache (nothing loaded) its first kernel call
raises and the step stops there, instead of compiling kernels the model may never use.
"""

from .. import _autocast, _jit, _ops
from .. import sparse as _sparse
from .._dtype import from_numpy_dtype
from ..autograd import anomaly_mode, grad_mode
from ..autograd import profiler as _profiler
from ..nn import functional as F
from ..sparse import _payload

__all__ = ["run"]

_DONE = set()  # NumPy dtypes whose step has run in this process
ROWS = 256  # rows of the sparse operands: 256 x 8 stored entries x 16 columns, above the
NNZ_ROW = 8  # spmm's small-product threshold (the row kernels, not the serial entry loop)


def run(dtypes):
    """Run the step once for each NumPy float dtype of ``dtypes`` not yet done. Returns how many
    ran."""
    if (_profiler.ACTIVE is not None or anomaly_mode.is_anomaly_enabled()
            or _autocast.active()):
        return 0
    n = 0
    for dt in sorted(dtypes, key=str):
        if dt in _DONE or dt.kind != "f" or dt.itemsize not in (4, 8):
            continue
        _DONE.add(dt)
        try:
            with _jit.no_compile(), grad_mode.enable_grad():
                _step(from_numpy_dtype(dt))
            n += 1
        except Exception:  # noqa: BLE001, S112 - a warm-up must never break an optimizer (a
            continue  # kernel not loaded, a cold cache: no_compile's TypeError, is the usual one)
    return n


def _step(dt):
    z = _ops.zeros
    w = z(4, 3, dtype=dt, requires_grad=True)
    b = z(4, dtype=dt, requires_grad=True)
    x = z(2, 3, dtype=dt)
    if _jit.built().get("embedding"):  # an embedding layer exists: its kernels are loaded
        table = z(10, 3, dtype=dt, requires_grad=True)
        ids = _ops.tensor([1, 2, 3, 4])
        x = x + F.embedding_bag(ids, table, _ops.tensor([0, 2]), mode="sum", sparse=True)
        x = x + F.embedding(ids[:2], table, sparse=True)
    h = F.relu(F.linear(x, w, b))
    t = _ops.stack([h, h], dim=1)
    pairs = _ops.bmm(t, t.transpose(1, 2)).reshape(2, -1).index_select(1, _ops.tensor([1, 2]))
    logit = _ops.cat([h, pairs], dim=1).sum(1)
    loss = F.binary_cross_entropy_with_logits(logit, z(2, dtype=dt))
    loss = loss + F.cross_entropy(h, _ops.tensor([0, 1])) + F.mse_loss(h, z(2, 4, dtype=dt))
    if _payload.SEEN[0]:  # the process holds sparse tensors: their products' paths
        loss = loss + _sparse_products(dt, h)
    loss.backward()


def _sparse_products(dt, h):
    rows = _ops.arange(ROWS).repeat_interleave(NNZ_ROW)
    # row r holds columns j * (ROWS / NNZ_ROW) + r % (ROWS / NNZ_ROW): sorted and distinct, so
    # the COO tensor is coalesced as built (coalescing would load the run-sum kernels)
    cols = _ops.arange(NNZ_ROW).repeat(ROWS) * (ROWS // NNZ_ROW) + rows % (ROWS // NNZ_ROW)
    vals = _ops.ones(ROWS * NNZ_ROW, dtype=dt)
    coo = _sparse.sparse_coo_tensor(_ops.stack([rows, cols]), vals, (ROWS, ROWS),
                                    is_coalesced=True)
    csr = coo.to_sparse_csr()
    y = h.sum().expand(ROWS, 16)
    return _sparse.mm(csr, y).sum() + _sparse.mm(coo, y).sum()
