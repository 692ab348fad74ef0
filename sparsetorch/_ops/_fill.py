"""In-place fills: ``fill_``, ``zero_`` and ``copy_``.

Each is derived through ``_dispatch.inplace`` from a functional op, so the graph semantics are
torch's: outside ``no_grad`` a leaf that requires grad refuses them, overwriting a non-leaf
gives its old history a zero gradient, and ``copy_``/``fill_`` pass the gradient on to ``src``
(summed over broadcasting, cast back to its dtype) / to a 0-d ``value`` tensor. Under
``no_grad`` they simply write (``nn.init`` relies on that).
"""

import numbers

from .._backend import get_backend
from .._dispatch import bump_version, call, defop, inplace
from .._layout import strided
from .._tensor import Tensor
from .._variants import method
from ..autograd.grad_mode import GRAD_ENABLED
from ._data import broadcast_shape, checked_fill_value, zero_grad
from ._util import check_tensor

__all__ = ["copy_", "fill_", "zero_"]

S = (strided,)
_grad_enabled = GRAD_ENABLED.get


def direct(self, other_rg=False):
    """True when the write records nothing: it can go straight into the dense payload.

    (The common case: parameter updates under ``no_grad``, buffers, fresh tensors.) Otherwise
    the op is derived through ``_dispatch.inplace`` so the graph is rebased as torch does.
    """
    return self.layout is strided and not (_grad_enabled() and (self._rg or other_rg))


# ---- fill_, zero_, copy_ ----

_fill_op = defop(
    "fill",
    {S: lambda be, x, value: be.xp.full_like(x, value)},
    params=("value",),
    grads={"input": zero_grad},
)
_fill_tensor_op = defop(
    "fill",
    {(strided, strided): lambda be, x, v: be.xp.broadcast_to(v.astype(x.dtype), x.shape).copy()},
    inputs=("input", "value"),
    grads={"input": zero_grad, "value": lambda grad: grad},
)
_zero_op = defop("zero", {S: lambda be, x: be.xp.zeros_like(x)}, grads={"input": zero_grad})


def _copy_kernel(be, x, src):
    if src.shape != x.shape:
        src = be.xp.broadcast_to(src, x.shape)
    return src.astype(x.dtype)  # always a fresh array


_copy_op = defop(
    "copy",
    {(strided, strided): _copy_kernel},
    inputs=("input", "src"),
    grads={"input": zero_grad, "src": lambda grad: grad},
)


def _fill_fn(input, value):
    return call(_fill_op, (input,), (value,))


def _fill_tensor_fn(input, value):
    return call(_fill_tensor_op, (input, value))


@method
def fill_(input, value):
    """Fills ``input`` with ``value`` (a number, or a 0-d tensor that receives the gradient)."""
    check_tensor(input, "fill_", "self")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        if value.device != input.device:
            value = value.to(input.device)
        if direct(input, value._rg):
            input._data.fill(checked_fill_value(value.item(), input.dtype))
            bump_version(input)
            return input
        return inplace(_fill_tensor_fn, input, (value,), None, "fill_")
    if not isinstance(value, numbers.Number):
        raise TypeError(
            f"fill_(): argument 'value' must be Number or Tensor, not {type(value).__name__}"
        )
    value = checked_fill_value(value, input.dtype)
    if direct(input):
        input._data.fill(value)
        bump_version(input)
        return input
    return inplace(_fill_fn, input, (value,), None, "fill_")


def _zero_fn(input):
    return call(_zero_op, (input,))


@method
def zero_(input):
    """Fills ``input`` with zeros."""
    check_tensor(input, "zero_", "self")
    if direct(input):
        input._data.fill(0)
        bump_version(input)
        return input
    return inplace(_zero_fn, input, (), None, "zero_")


def _copy_fn(input, src):
    return call(_copy_op, (input, src))


def copy_(input, src, non_blocking=False):
    """Copies the elements of ``src`` into ``input`` (broadcasting ``src``, casting its dtype,
    moving its device). Differentiable with respect to ``src``."""
    check_tensor(input, "copy_", "self")
    if not isinstance(src, Tensor):
        if not isinstance(src, numbers.Number):
            raise TypeError(
                f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}"
            )
        return fill_(input, src)
    shape, sshape = tuple(input.shape), tuple(src.shape)
    if sshape != shape and broadcast_shape(shape, sshape) != shape:
        raise RuntimeError(
            f"output with shape {list(shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shape(shape, sshape))}"
        )
    if src.device != input.device:
        src = src.to(input.device)
    if direct(input, src._rg) and src.layout is strided:
        try:
            get_backend(input.device).xp.copyto(input._data, src._data, casting="unsafe")
        except ValueError:  # a read-only payload: an expanded view
            raise RuntimeError(
                "copy_(): unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before performing "
                "the operation.") from None
        bump_version(input)
        return input
    return inplace(_copy_fn, input, (src,), None, "copy_")
