"""``Categorical(probs=None, logits=None)``."""

from . import _t as T
from . import constraints
from ._util import ProbsLogits, enumerated, expand_params
from .distribution import Distribution

__all__ = ["Categorical"]


class Categorical(ProbsLogits, Distribution):
    """A categorical distribution over ``{0, ..., K-1}``; ``probs`` (normalised over the last
    dim) or ``logits`` (unnormalised log-probabilities) give the K categories."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}  # noqa: RUF012 - torch's class-level table
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch = self._param.size()[:-1] if self._param.ndimension() > 1 else T.Size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        self._expand_probs_logits(new, tuple(T.Size(batch_shape)) + (self._num_events,))
        new._num_events = self._num_events
        return expand_params(self, new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return T.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype,
                      device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return T.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype,
                      device=self.probs.device)

    def sample(self, sample_shape=T.EMPTY_SIZE):
        sample_shape = T.Size(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.reshape(-1, self._num_events)
        with T.no_grad():
            draws = T.multinomial(probs_2d, n, True).T
        return draws.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = T.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = T.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = T.arange(self._num_events, dtype=T.int64, device=self._param.device)
        return enumerated(values, self._batch_shape, expand)
