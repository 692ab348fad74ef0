"""``Normal(loc, scale)``."""

import math
from numbers import Real

from . import _t as T
from . import constraints
from ._util import AtLoc, expand_params, set_params
from .exp_family import ExponentialFamily

__all__ = ["Normal"]


class Normal(AtLoc, ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(set_params(self, loc=loc, scale=scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        return expand_params(self, new, batch_shape, ("loc", "scale"))

    def sample(self, sample_shape=T.EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        with T.no_grad():
            return T.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        eps = T.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + T.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * T.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
