"""``Bernoulli(probs=None, logits=None)``."""

from . import _t as T
from . import constraints
from ._util import ProbsLogits, enumerated, expand_params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(ProbsLogits, ExponentialFamily):
    """A Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}  # noqa: RUF012 - torch's class-level table
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_probs_logits(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        self._expand_probs_logits(new, T.Size(batch_shape))
        return expand_params(self, new, batch_shape)

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return T.where(self.probs == 0.5, T.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            return T.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -T.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return T.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = T.arange(2, dtype=self._param.dtype, device=self._param.device)
        return enumerated(values, self._batch_shape, expand)
