"""Shared by both loaders: ``map_location`` placement and sparse invariant checks."""

import numpy as np

from .._device import device
from .._tensor import Tensor
from ._format import SerializationError

__all__ = ["construct", "place", "sorted_unique"]


def place(t, loc, map_location):
    """Apply ``map_location`` (torch's forms: None, str/device, dict, callable) to the CPU
    tensor ``t`` saved at location ``loc``. A callable gets ``(tensor, location)`` and returns a
    tensor, or None for the default placement."""
    ml = map_location
    if ml is None:
        target = loc
    elif isinstance(ml, dict):
        target = ml.get(loc, loc)
    elif callable(ml) and not isinstance(ml, (str, device)):
        r = ml(t, loc)
        if r is None:
            target = loc
        elif isinstance(r, Tensor):
            return r
        else:
            raise TypeError(f"load(): map_location returned {type(r).__name__}, expected a Tensor or None")
    else:
        target = ml
    try:
        dev = target if isinstance(target, device) else device(target)
    except (RuntimeError, TypeError, ValueError) as e:
        raise SerializationError(f"bad tensor location {target!r}: {e}") from None
    if dev.type == "cpu":
        return t
    try:
        return t.to(dev)
    except RuntimeError as e:
        raise RuntimeError(
            f"Attempting to deserialize object on a {dev.type.upper()} device ({dev}) but it is "
            f"not available ({e}). If you are running on a CPU-only machine, please use "
            "sparsetorch.load with map_location='cpu' to map your storages to the CPU.") from None


def construct(fn, *args):
    """A sparse constructor with its invariant checks on; their errors become file defects."""
    try:
        return fn(*args, check_invariants=True)
    except (ValueError, TypeError, IndexError, RuntimeError, OverflowError) as e:
        raise SerializationError(f"invalid sparse tensor in the checkpoint: {e}") from None


def sorted_unique(idx):
    """Whether the columns of ``idx`` strictly increase lexicographically (no linear index: no
    overflow however large the shape)."""
    if idx.shape[0] == 0:  # no sparse dims: every entry sits at the same (empty) index
        return idx.shape[1] <= 1
    d = idx[:, 1:] - idx[:, :-1]  # indices are in [0, size): no overflow
    nz = d != 0
    first = nz.argmax(axis=0)
    return bool((nz.any(axis=0) & (d[first, np.arange(d.shape[1])] > 0)).all())
