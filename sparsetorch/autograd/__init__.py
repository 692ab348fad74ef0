"""Tape-based automatic differentiation: backward, grad, grad modes, Function (torch.autograd)."""

from . import anomaly_mode, function, graph, profiler, profiler_util  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, Variable, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled,
)
from .graph import Node  # noqa: F401

# Last: binds the name ``gradcheck`` to the function (the submodule stays importable as
# ``sparsetorch.autograd.gradcheck`` via sys.modules, like torch.autograd.gradcheck).
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401

__all__ = [
    "Function", "FunctionCtx", "Variable", "backward", "grad", "gradcheck", "gradgradcheck",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "once_differentiable", "function", "graph", "profiler", "profiler_util",
    "anomaly_mode", "detect_anomaly", "set_detect_anomaly",
]

# as torch.autograd: the engine module stays importable (``from sparsetorch.autograd import
# engine``) but is no name of the package
del engine  # noqa: F821
