"""torch.backends.mkldnn: oneDNN's switches. sparsetorch runs no oneDNN kernels, so
``is_available()`` is False; the flags keep torch's defaults and types (recorded only)."""

from . import _props

__all__ = ["VERBOSE_OFF", "VERBOSE_ON", "VERBOSE_ON_CREATION", "flags", "is_available",
           "set_flags", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

def is_available():
    """Whether oneDNN (MKL-DNN) kernels are used: never by sparsetorch."""
    return False

def is_acl_available():
    return False

class verbose:
    """oneDNN's verbose mode for a block: nothing to report here."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

_PRECISION = ["none"]
_module = _props.install(__name__, {
    "enabled": _props.bool_flag("mkldnn_enabled", "set_enabled_mkldnn"),
    "deterministic": _props.bool_flag("mkldnn_deterministic", "set_deterministic_mkldnn"),
    "allow_tf32": _props.bool_flag("mkldnn_allow_tf32", "_set_onednn_allow_tf32"),
    "fp32_precision": property(lambda self: _PRECISION[0],
                               lambda self, v: _PRECISION.__setitem__(
                                   0, _props.check_precision(v))),
})

def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    m = _module
    orig = (m.enabled, m.deterministic, m.allow_tf32, m.fp32_precision)
    for name, v in (("enabled", _enabled), ("deterministic", _deterministic),
                    ("allow_tf32", _allow_tf32), ("fp32_precision", _fp32_precision)):
        if v is not None:
            setattr(m, name, v)
    return orig

def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Context manager setting the oneDNN flags for its body."""
    return _props.saved_flags(_module, {"enabled": enabled, "deterministic": deterministic,
                                        "allow_tf32": allow_tf32,
                                        "fp32_precision": fp32_precision})

