"""Helpers shared by op modules: argument checks, scalar detection, the ``out=`` contract, a
tensor's backend and NumPy's silenced warnings (in-place ``op_`` variants: ``_variants.py``)."""

import contextlib
import numbers

from .. import _dispatch
from .._backend import CPU, get_backend
from .._device import CPU as CPU_DEVICE
from .._layout import strided
from .._tensor import Tensor

__all__ = ["is_scalar", "check_tensor", "norm_dim", "norm_dims", "with_out"]


def is_scalar(x):
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def check_tensor(x, fname, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be a Tensor, not {type(x).__name__}")
    return x


def check_tensor_or_number(x, fname, arg):
    if not isinstance(x, Tensor) and not is_scalar(x):
        raise TypeError(
            f"{fname}(): argument '{arg}' must be a Tensor or a Python number, not {type(x).__name__}"
        )
    return x


def norm_dim(dim, ndim, fname="op"):
    """Wrap a possibly negative ``dim`` into ``[0, ndim)``; IndexError as torch raises."""
    n = max(ndim, 1)
    if isinstance(dim, Tensor):
        dim = dim.item()
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fname}(): argument 'dim' must be an int, not {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(
            f"{fname}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n


def norm_dims(dim, ndim, fname="op"):
    """``None`` / int / sequence of ints -> sorted tuple of distinct non-negative dims (None: all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        dims = tuple(norm_dim(d, ndim, fname) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{fname}(): dim {list(dim)} appears multiple times in the list of dims")
        return tuple(sorted(dims))
    return (norm_dim(dim, ndim, fname),)


def backend_of(t):
    """The ``Backend`` of tensor ``t``'s device."""
    return CPU if t.device is CPU_DEVICE else get_backend(t.device)


def quiet(be):
    """Silence NumPy's floating-point warnings (log(0), 0/0) where torch is silent."""
    errstate = getattr(be.xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def dense_only(input, fname):
    """Refuse a sparse ``input`` (an op with strided kernels only) with the ``.to_dense()`` hint."""
    if input.layout is not strided:
        raise NotImplementedError(
            f"{fname}: not implemented for layouts ({input.layout.name}). Convert the sparse "
            f"input with .to_dense() first.")


def with_out(result, out, name):
    """Apply the ``out=`` contract when ``out`` was given."""
    if out is None:
        return result
    return _dispatch.write_out(result, out, name)


# ---- torch's wording in matrix-product errors ----

def _dims_str(shape):
    return "x".join(map(str, shape))
