"""torch.backends.opt_einsum: whether einsum's contraction path is optimized with the
``opt_einsum`` package. ``enabled`` defaults to whether the package imports (as torch), and
the flags check their values where torch does (recorded: NumPy picks sparsetorch's einsum paths)."""

import contextlib
import functools

from . import _props

__all__ = ["flags", "get_opt_einsum", "is_available", "set_flags"]


@functools.lru_cache(maxsize=None)
def get_opt_einsum():
    """The opt_einsum package if it imports, else None."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def is_available():
    """Whether the opt_einsum package is installed."""
    return get_opt_einsum() is not None


_STATE = {"enabled": None, "strategy": None}


def _get_enabled(self=None):
    if _STATE["enabled"] is None:
        _STATE["enabled"] = is_available()
        _STATE["strategy"] = "auto" if is_available() else None
    return _STATE["enabled"]


def _set_enabled(self, value):
    # torch 2.13 records the value even where opt_einsum is missing (its check is not reached
    # through the module attribute), so the assignment is recorded as it is
    _get_enabled()
    _STATE["enabled"] = value


def _get_strategy(self=None):
    _get_enabled()
    return _STATE["strategy"]


def _set_strategy(self, value):
    if not is_available():  # torch keeps a plain attribute then: any value is recorded
        _get_enabled()
        _STATE["strategy"] = value
        return
    if not _get_enabled():
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from left "
            "to right. Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError("`strategy` must be one of the following: [auto, greedy, optimal] but "
                         f"is {value}")
    _STATE["strategy"] = value


_module = _props.install(__name__, {
    "enabled": property(_get_enabled, _set_enabled),
    "strategy": property(_get_strategy, _set_strategy),
})


def set_flags(_enabled=None, _strategy=None):
    orig = (_get_enabled(), _get_strategy() if is_available() else None)
    if _enabled is not None:
        _module.enabled = _enabled
    if _strategy is not None:
        _module.strategy = _strategy
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Context manager setting the opt_einsum flags for its body."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
