"""``Geometric(probs=None, logits=None)``: failures before the first success."""

from . import _t as T
from . import constraints
from ._util import LazyProbsLogits, expand_params
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(LazyProbsLogits, Distribution):
    """The number of failures before the first success of Bernoulli trials of ``probs``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}  # noqa: RUF012 - torch's class-level table
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_probs_logits(probs, logits)
        batch = (self.probs if probs is not None else self.logits).size()
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{self.probs.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        given = [name for name in ("probs", "logits") if name in self.__dict__]
        return expand_params(self, new, batch_shape, given)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return T.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = T.finfo(self.probs.dtype).tiny
        with T.no_grad():
            u = T.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = T.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return T.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
