"""Tape-based automatic differentiation: backward, grad, grad modes (torch.autograd)."""

from .engine import backward, grad  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .graph import Node  # noqa: F401
