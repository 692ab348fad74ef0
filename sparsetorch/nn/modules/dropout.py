"""Dropout layers (torch.nn.modules.dropout): active in training mode only."""

from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    r"""Zero elements with probability ``p`` during training, scaling the rest by ``1/(1-p)``."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps zero mean and unit variance (for SELU networks)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)
