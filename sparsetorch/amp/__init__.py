"""torch.amp: ``autocast`` (mixed precision regions) and ``GradScaler`` (loss scaling)."""

from . import autocast_mode, grad_scaler  # noqa: F401
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
