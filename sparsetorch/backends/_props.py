"""Module attributes that are validated settable flags (``torch.backends.cudnn.deterministic =
True``): a module's class is switched to a ``FlagModule`` subclass whose properties read and
write ``sparsetorch._flags.STATE``."""

import contextlib
import sys
import types

from .. import _flags

__all__ = ["FlagModule", "bool_flag", "check_precision", "install", "saved_flags"]


class FlagModule(types.ModuleType):
    """A module whose class carries properties (the flags)."""


def bool_flag(key, setter_name):
    """A property over ``_flags.STATE[key]`` that accepts only a bool (torch's RuntimeError)."""

    def get(self):
        return _flags.STATE[key]

    def set_(self, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
        _flags.STATE[key] = value

    return property(get, set_)


def install(module_name, props):
    """Gives module ``module_name`` the properties ``props`` (name -> property)."""
    mod = sys.modules[module_name]
    cls = type(f"{module_name.rsplit('.', 1)[-1]}_flags", (FlagModule,), dict(props))
    mod.__class__ = cls
    return mod


@contextlib.contextmanager
def saved_flags(module, values):
    """Sets ``module.<name> = value`` for each non-None value (validated as the attributes are);
    restores every previous value on exit."""
    old = {name: getattr(module, name) for name in values}
    try:
        for name, v in values.items():
            if v is not None:
                setattr(module, name, v)
        yield
    finally:
        for name, v in old.items():
            if v is not None:  # as torch's set_flags: None leaves a flag as it is
                setattr(module, name, v)


_PRECISIONS = ("none", "ieee", "tf32", "bf16")


def check_precision(value):
    """A valid ``fp32_precision`` value (torch's RuntimeError otherwise)."""
    if value not in _PRECISIONS:
        raise RuntimeError(f"Unknown precision: {value}")
    return value
