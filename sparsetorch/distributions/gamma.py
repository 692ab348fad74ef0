"""``Gamma(concentration, rate)``."""

from . import _t as T
from . import constraints
from ._util import expand_params, set_params
from .exp_family import ExponentialFamily
from .utils import standard_gamma

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.
    ``rsample`` is differentiable through the implicit reparameterisation gradient of the
    standard gamma draw (as torch's ``_standard_gamma_grad``)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        super().__init__(set_params(self, concentration=concentration, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        return expand_params(self, new, batch_shape, ("concentration", "rate"))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=T.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = T.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (T.xlogy(self.concentration, self.rate) + T.xlogy(self.concentration - 1, value)
                - self.rate * value - T.lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + T.lgamma(c) + (1.0 - c) * T.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        from ..special import gammainc
        return gammainc(self.concentration, self.rate * value)
