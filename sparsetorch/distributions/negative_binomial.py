"""``NegativeBinomial(total_count, probs=None, logits=None)``."""

from . import _t as T
from . import constraints
from ._util import ProbsLogits, expand_params
from .distribution import Distribution
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


def _logsigmoid(x):
    return -(x.neg().clamp(min=0) + T.log1p(T.exp(-x.abs())))


class NegativeBinomial(ProbsLogits, Distribution):
    """Successes before ``total_count`` failures of Bernoulli trials of success ``probs``."""

    arg_constraints = {  # noqa: RUF012 - torch's class-level table
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,) = self._set_probs_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        self._expand_probs_logits(new, T.Size(batch_shape))
        return expand_params(self, new, batch_shape, ("total_count",))

    @property
    def mean(self):
        return self.total_count * T.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / T.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=T.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=T.EMPTY_SIZE):
        with T.no_grad():
            return T.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        unnorm = self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        norm = -T.lgamma(self.total_count + value) + T.lgamma(1.0 + value) + T.lgamma(self.total_count)
        norm = T.where(self.total_count + value == 0.0, 0.0, norm)
        return unnorm - norm
