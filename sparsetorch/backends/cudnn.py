"""torch.backends.cudnn: cuDNN's switches. sparsetorch does not use cuDNN (its GPU kernels are
CuPy's and cuSPARSE's), so ``is_available()`` is False and ``version()`` None, as in a torch
built without cuDNN. The flags keep torch's defaults and types; ``deterministic = True`` makes
sparsetorch's own kernels deterministic, as ``torch.use_deterministic_algorithms(True)`` does
(docs/design-notes.md, "Determinism")."""

from . import _props

__all__ = ["flags", "is_acceptable", "is_available", "set_flags", "version"]

enabled: bool
benchmark: bool
deterministic: bool
allow_tf32: bool
benchmark_limit = None  # torch: None unless cuDNN is available


def version():
    """The cuDNN version: None, since sparsetorch runs no cuDNN kernels."""
    return None


def is_available():
    """Whether cuDNN is used: never by sparsetorch."""
    return False


def is_acceptable(tensor):
    """Whether cuDNN could run on ``tensor``: False (see :func:`is_available`)."""
    return False


def _depthwise_get(self):
    return _DEPTHWISE[0]


def _depthwise_set(self, value):
    if not isinstance(value, str):
        raise RuntimeError(f"set_cudnn_depthwise_kernel expects a string, but got "
                           f"{type(value).__name__}")
    _DEPTHWISE[0] = value


def _precision_get(self):
    return _PRECISION[0]


def _precision_set(self, value):
    _PRECISION[0] = _props.check_precision(value)


_DEPTHWISE = ["auto"]
_PRECISION = ["none"]
_module = _props.install(__name__, {
    "enabled": _props.bool_flag("cudnn_enabled", "set_enabled_cudnn"),
    "benchmark": _props.bool_flag("cudnn_benchmark", "set_benchmark_cudnn"),
    "deterministic": _props.bool_flag("cudnn_deterministic", "set_deterministic_cudnn"),
    "allow_tf32": _props.bool_flag("cudnn_allow_tf32", "set_allow_tf32_cublas"),
    "depthwise_kernel": property(_depthwise_get, _depthwise_set),
    "fp32_precision": property(_precision_get, _precision_set),
})


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Sets the given flags (None leaves one unchanged); returns the previous values in the
    order of the arguments."""
    m = _module
    orig = (m.enabled, m.benchmark, None, m.deterministic, m.allow_tf32, m.fp32_precision,
            m.depthwise_kernel)
    for name, v in (("enabled", _enabled), ("benchmark", _benchmark),
                    ("deterministic", _deterministic), ("allow_tf32", _allow_tf32),
                    ("fp32_precision", _fp32_precision), ("depthwise_kernel", _depthwise_kernel)):
        if v is not None:
            setattr(m, name, v)
    return orig


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Context manager that sets cuDNN's flags for its body and restores them after (torch's
    defaults: every flag *named* is set, so ``flags(deterministic=True)`` also sets
    ``enabled=False``, as in torch)."""
    return _props.saved_flags(_module, {
        "enabled": enabled, "benchmark": benchmark, "deterministic": deterministic,
        "allow_tf32": allow_tf32, "fp32_precision": fp32_precision,
        "depthwise_kernel": depthwise_kernel,
    })
