"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""

import math

from ._util import HalfOf
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(HalfOf, TransformedDistribution):
    """The half-normal distribution: ``Normal(0, scale)`` through ``AbsTransform``."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
