"""Page-locked host memory: ``Tensor.pin_memory()`` / ``is_pinned()`` (torch's semantics).

A pinned tensor is a CPU tensor whose arrays live in CuPy's page-locked pool, so copies to the
GPU can overlap compute. Only CPU tensors can be pinned (dense, COO and CSR: every payload
array is pinned); without CUDA, pinning raises torch's RuntimeError and ``is_pinned`` is False.
"""

from .._backend import is_pinned as _array_pinned, pinned_copy
from .._dispatch import call, defop
from .._layout import sparse_coo, sparse_csr, strided
from ..sparse._payload import COO, CSR
from ._util import check_tensor

__all__ = []  # Tensor methods only (torch has no top-level pin_memory function)


def _arrays(x):
    if x.__class__ is COO:
        return (x.indices, x.values)
    if x.__class__ is CSR:
        return (x.crow, x.col, x.values)
    return (x,)


def _pin_dense(be, x):
    return pinned_copy(x)


def _pin_coo(be, x):
    return COO(pinned_copy(x.indices), pinned_copy(x.values), x.shape, x.coalesced)


def _pin_csr(be, x):
    return CSR(pinned_copy(x.crow), pinned_copy(x.col), pinned_copy(x.values), x.shape)


_pin_op = defop(
    "_pin_memory",
    {(strided,): _pin_dense, (sparse_coo,): _pin_coo, (sparse_csr,): _pin_csr},
    grads={"input": lambda grad: grad},
    zero_preserving=True,
)


def is_pinned(input, device=None):
    """Whether every array of CPU tensor ``input`` lives in page-locked memory."""
    check_tensor(input, "is_pinned")
    if input.device.type != "cpu":
        return False
    return all(_array_pinned(a) for a in _arrays(input._data))


def pin_memory(input, device=None):
    """A copy of CPU tensor ``input`` in page-locked memory (``input`` itself if already pinned).
    Differentiable, as torch's. CUDA tensors cannot be pinned (RuntimeError, as torch)."""
    check_tensor(input, "pin_memory")
    if input.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{input.type()}' only dense CPU tensors can be pinned")
    if is_pinned(input):
        return input
    return call(_pin_op, (input,))


def pinned_result(t, pin):
    """The factories' ``pin_memory=`` argument: ``t`` moved to page-locked memory when asked."""
    if not pin:
        return t
    from .._backend import cuda_device_count

    if not cuda_device_count():
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                           "memory allocator is available on this system.")
    if t.device.type != "cpu":
        raise RuntimeError("Only dense CPU tensors can be pinned")
    r = pin_memory(t.detach()).requires_grad_(t.requires_grad)
    return r
