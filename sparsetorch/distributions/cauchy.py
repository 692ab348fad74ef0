"""``Cauchy(loc, scale)``."""

import math

from . import _t as T
from . import constraints
from ._util import expand_params, set_params
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(set_params(self, loc=loc, scale=scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        return expand_params(self, new, batch_shape, ("loc", "scale"))

    @property
    def mean(self):
        return T.full(tuple(self._extended_shape()), float("nan"), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return T.full(tuple(self._extended_shape()), float("inf"), dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        eps = T.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return T.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return T.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
