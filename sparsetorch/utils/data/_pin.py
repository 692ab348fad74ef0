"""``DataLoader(pin_memory=True)``: batches moved into page-locked memory (torch's rules).

Tensors are pinned; mappings, namedtuples, tuples and lists are walked; any other object with a
``pin_memory()`` method (a custom batch type) has it called; everything else is returned as is.
"""

import collections.abc

from ..._tensor import Tensor


def pin_memory(data):
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned) if not isinstance(data, dict) or type(data) is not dict \
                else pinned
        except TypeError:  # a mapping type whose constructor takes other arguments
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(v) for v in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(v) for v in data]
        try:
            return type(data)(pinned) if type(data) is not list else pinned
        except TypeError:
            return pinned
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
