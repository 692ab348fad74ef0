"""``StudentT(df, loc=0.0, scale=1.0)``."""
# ruff: noqa: N999 - the module keeps torch's name (torch.distributions.studentT)

import math

from . import _t as T
from . import constraints
from ._util import expand_params, set_params
from .chi2 import Chi2
from .distribution import Distribution

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location and scale."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        batch = set_params(self, df=df, loc=loc, scale=scale)
        self._chi2 = Chi2(self.df)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        new._chi2 = self._chi2.expand(T.Size(batch_shape))
        return expand_params(self, new, batch_shape, ("df", "loc", "scale"))

    @property
    def mean(self):
        return T.where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = self.scale.pow(2) * df / T.where(df > 2, df - 2, T.ones_like(df))
        return T.where(df > 2, big, T.where(df > 1, float("inf"), float("nan")))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        X = T.randn(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * T.rsqrt(Z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + T.lgamma(0.5 * self.df) - T.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * T.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = T.lgamma(0.5 * self.df) + math.lgamma(0.5) - T.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (T.digamma(0.5 * (self.df + 1)) - T.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
