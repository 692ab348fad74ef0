"""torch.utils.deterministic: ``fill_uninitialized_memory`` (default True) makes ``empty``,
``empty_like``, ``empty_strided`` and ``new_empty`` fill new memory (NaN, or the integer
maximum) while ``torch.use_deterministic_algorithms(True)`` is on, as torch does."""

import sys
import types

from .. import _flags

__all__ = ["fill_uninitialized_memory"]


def _get(self):
    return _flags.STATE["fill_uninitialized_memory"]


def _set(self, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"expected a bool, but got {type(value).__name__}")
    _flags.STATE["fill_uninitialized_memory"] = value


sys.modules[__name__].__class__ = type(
    "deterministic", (types.ModuleType,), {"fill_uninitialized_memory": property(_get, _set)})
