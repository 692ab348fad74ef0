"""``Multinomial(total_count=1, probs=None, logits=None)``: category counts of
``total_count`` categorical draws."""

from . import _t as T
from . import constraints
from ._util import OfCategorical
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(OfCategorical, Distribution):
    """Counts per category of ``total_count`` (an int) independent categorical draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}  # noqa: RUF012 - torch's class-level table

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        return self._expand_categorical(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=T.EMPTY_SIZE):
        sample_shape = tuple(T.Size(sample_shape))
        draws = self._categorical.sample((self.total_count,) + sample_shape)
        k = self._categorical._num_events
        counts = (T.one_hot(draws, num_classes=k)).sum(0)
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = T.tensor(self.total_count)  # an int64 tensor, as torch: lgamma(n + 1) is in the default dtype
        term1 = n * self._categorical.entropy() - T.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = T.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = T.lgamma(value.sum(-1) + 1)
        log_factorial_xs = T.lgamma(value + 1).sum(-1)
        logits = T.where((value == 0) & (logits == float("-inf")), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
