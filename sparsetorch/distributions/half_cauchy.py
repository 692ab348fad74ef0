"""``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``."""

import math

from . import _t as T
from ._util import HalfOf
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(HalfOf, TransformedDistribution):
    """The half-Cauchy distribution: ``Cauchy(0, scale)`` through ``AbsTransform``."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return T.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def _folded_value(self, value):
        return T.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
