"""The user's allowlist for ``weights_only`` loading (torch's API: ``add_safe_globals``,
``safe_globals``, ``get_safe_globals``, ``clear_safe_globals``).

An entry is an object (a class or function, named ``module.qualname``) or a pair
``(object, "full.name")``. A file naming one of these gets that very object; nothing is ever
imported by name.
"""

import pickle

from ._format import SerializationError

__all__ = ["WeightsOnlyError", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals", "user_globals"]

_marked = []  # entries in the order they were added (no duplicates)


class WeightsOnlyError(SerializationError, pickle.UnpicklingError):
    """A ``weights_only`` load refused something in the file (a global, an instruction).

    Both a :class:`SerializationError` (a ``RuntimeError``) and a :class:`pickle.UnpicklingError`,
    the type ``torch.load`` raises in the same case."""

    __module__ = "sparsetorch.serialization"


def _check(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(
                f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                f"length: {len(entry)}")
        if type(entry[1]) is not str:
            raise TypeError(
                f"Expected second item in tuple to be str of callable full path, but got: {type(entry[1])}")


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load: a file naming one of them gets
    that object, which may then be called, instantiated and have its state set during
    unpickling. Each item is a class/function or a ``(global, "module.name")`` pair."""
    if not isinstance(safe_globals, (list, tuple, set)):
        raise TypeError(f"add_safe_globals(): expected a list of globals, got {type(safe_globals).__name__}")
    for g in safe_globals:
        _check(g)
        if not any(g is m or (isinstance(g, tuple) and g == m) for m in _marked):
            _marked.append(g)


def get_safe_globals():
    """The list of user-added globals that are safe for ``weights_only`` loading."""
    return list(_marked)


def clear_safe_globals():
    """Clears the list of globals that are safe for ``weights_only`` loading."""
    _marked.clear()


class safe_globals:
    r"""Context manager that adds certain globals as safe for ``weights_only`` load (the list
    is restored on exit)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = list(_marked)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _marked[:] = self._saved
        return False


def user_globals():
    """``{"module.name": object}`` for the current allowlist."""
    out = {}
    for g in _marked:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{getattr(g, '__module__', '?')}.{getattr(g, '__qualname__', '?')}"] = g
    return out
