"""``Binomial(total_count=1, probs=None, logits=None)``."""

from . import _t as T
from . import constraints
from ._util import ProbsLogits, enumerated, expand_params
from .distribution import Distribution

__all__ = ["Binomial"]


class Binomial(ProbsLogits, Distribution):
    """The number of successes in ``total_count`` Bernoulli trials of probability ``probs``
    (or ``sigmoid(logits)``); ``total_count`` broadcasts with the probabilities."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,  # noqa: RUF012 - torch's class-level table
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (total_count,) = self._set_probs_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        self._expand_probs_logits(new, T.Size(batch_shape))
        return expand_params(self, new, batch_shape, ("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=T.EMPTY_SIZE):
        """Sums of Bernoulli draws (one per possible trial, masked beyond ``total_count``)."""
        shape = tuple(self._extended_shape(sample_shape))
        with T.no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            m = int(n.max().item()) if n.numel() else 0
            if m == 0:
                return T.zeros(shape, dtype=p.dtype, device=p.device)
            u = T.rand(shape + (m,), dtype=p.dtype, device=p.device)
            trial = T.arange(m, dtype=p.dtype, device=p.device)
            hits = (u < p.unsqueeze(-1)) & (trial < n.unsqueeze(-1))
            return hits.sum(-1).to(p.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = T.lgamma(self.total_count + 1)
        log_factorial_k = T.lgamma(value + 1)
        log_factorial_nmk = T.lgamma(self.total_count - value + 1)
        # log(1 + e^l) as max(l, 0) + log1p(e^-|l|), stable for large |logits|
        normalize = (self.total_count * self.logits.clamp(min=0)
                     + self.total_count * T.log1p(T.exp(-self.logits.abs())) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize

    def entropy(self):
        total = int(self.total_count.max().item())
        if not bool(self.total_count.min().item() == total):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max().item())
        if not bool(self.total_count.min().item() == total):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = T.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        return enumerated(values, self._batch_shape, expand)
