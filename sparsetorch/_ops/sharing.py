"""``Tensor.share_memory_()`` / ``is_shared()`` and the shared-memory pickling of tensors.

A dense CPU tensor's payload (a sparse tensor's index and value arrays) is moved into a
shared-memory segment (``sparsetorch/_shm.py``), in place: the tensor object keeps its identity,
autograd fields and version counter, so optimizers and modules holding it see the move. Beyond
torch, which has no storage for sparse tensors, COO and CSR tensors can be shared.

One difference from torch, which moves the whole *storage*: only this tensor's elements move
(as one C-contiguous block). Other tensors viewing the old buffer (a base and its views) keep
the old, private memory; share the tensor you send, or its base before taking views. Likewise
an in-place op on a *sparse* tensor (``s.mul_(2)``) stores new arrays, which are private again:
write through ``s._values()`` (``s._values().mul_(2)``) to update shared values in place.

``reduce_shared`` is the reducer ``sparsetorch.multiprocessing`` registers with
``multiprocessing``'s pickler (queues, pipes, process arguments): it shares the tensor first, as
torch does, then sends a handle instead of the bytes, so the receiver maps the same memory.
A process may set a size below which tensors *not yet shared* are copied through the pipe
instead (:func:`set_send_threshold`): DataLoader workers do, since a new segment and its
descriptor hand-over cost about a millisecond, more than sending a small batch's bytes.
"""

from .. import _shm
from .._layout import sparse_coo, sparse_csr, strided
from ..sparse._payload import COO, CSR
from .._variants import method
from .conversion import _rebuild_tensor, reduce_tensor

__all__ = ["share_memory_", "is_shared", "reduce_shared", "set_send_threshold"]

_FIELDS = {sparse_coo: ("indices", "values"), sparse_csr: ("crow", "col", "values")}


def _arrays(t):
    """The payload arrays of ``t`` (one for strided)."""
    if t.layout is strided:
        return (t._data,)
    return tuple(getattr(t._data, f) for f in _FIELDS[t.layout])


@method
def is_shared(t):
    """True when the payload of ``t`` lives in shared memory (always True on CUDA, as torch)."""
    if t.device.type != "cpu":
        return True
    return all(_shm.is_shared_array(a) for a in _arrays(t))


@method
def share_memory_(t):
    """Move the payload of ``t`` into shared memory (a no-op when it is already there, and for
    CUDA tensors); returns ``t``."""
    if t.device.type != "cpu" or is_shared(t):
        return t
    if t.layout is strided:
        t._data = _shm.share_array(t._data)
    else:
        p = t._data
        for f in _FIELDS[t.layout]:
            setattr(p, f, _shm.share_array(getattr(p, f)))
    return t


# ---- multiprocessing's pickler ----

_SEND_THRESHOLD = [0]  # bytes; unshared tensors smaller than this are copied, not moved


def set_send_threshold(nbytes):
    """Tensors not yet in shared memory whose payload is under ``nbytes`` are sent by copy (0,
    the default, moves every tensor into shared memory, as torch). Returns the previous value."""
    prev, _SEND_THRESHOLD[0] = _SEND_THRESHOLD[0], int(nbytes)
    return prev


def reduce_shared(t):
    """Reducer for ``multiprocessing``'s ``ForkingPickler``: share, then send a handle."""
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue).")
    if t.device.type != "cpu" or (
            _SEND_THRESHOLD[0] and not is_shared(t)
            and sum(a.nbytes for a in _arrays(t)) < _SEND_THRESHOLD[0]):
        return reduce_tensor(t)
    share_memory_(t)
    handles = tuple(_shm.reduce_array(a) for a in _arrays(t))
    extra = None
    if t.layout is sparse_coo:
        extra = (t._data.shape, t._data.coalesced)
    elif t.layout is sparse_csr:
        extra = t._data.shape
    state = getattr(t, "__dict__", None) or None
    return _rebuild_shared, (type(t), handles, extra, t.dtype, t.layout, t.device, t._rg, state)


def _rebuild_shared(cls, handles, extra, dtype, lay, dev, requires_grad, state):
    arrays = [fn(*args) for fn, args in handles]
    if lay is strided:
        data = arrays[0]
    elif lay is sparse_coo:
        data = COO(arrays[0], arrays[1], extra[0], extra[1])
    else:
        data = CSR(arrays[0], arrays[1], arrays[2], extra)
    return _rebuild_tensor(cls, data, dtype, lay, dev, requires_grad, state)
