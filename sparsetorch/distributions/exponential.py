"""``Exponential(rate)``."""

from . import _t as T
from . import constraints
from ._util import expand_params, set_params
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (the inverse of the mean)."""

    arg_constraints = {"rate": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return T.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        super().__init__(set_params(self, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        return expand_params(self, new, batch_shape, ("rate",))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        e = T.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - T.exp(-self.rate * value)

    def icdf(self, value):
        return -T.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
