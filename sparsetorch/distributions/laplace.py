"""``Laplace(loc, scale)``."""

from . import _t as T
from . import constraints
from ._util import AtLoc, expand_params, set_params
from .distribution import Distribution

__all__ = ["Laplace"]


class Laplace(AtLoc, Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.real
    has_rsample = True

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(set_params(self, loc=loc, scale=scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        return expand_params(self, new, batch_shape, ("loc", "scale"))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        eps = T.finfo(self.loc.dtype).eps
        u = T.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * (2 - 2 * eps) - (1 - eps)
        return self.loc - self.scale * u.sign() * T.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * T.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * T.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + (2 * self.scale).log()
