"""``Poisson(rate)``."""

from . import _t as T
from . import constraints
from ._util import expand_params, set_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with ``rate``: ``P(k) = rate^k e^-rate / k!``."""

    arg_constraints = {"rate": constraints.nonnegative}  # noqa: RUF012 - torch's class-level table
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        super().__init__(set_params(self, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        return expand_params(self, new, batch_shape, ("rate",))

    def sample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            return T.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
