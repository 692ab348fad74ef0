"""Pieces the distributions share (private): broadcasting and expanding named parameters, the
values of a finite support, the probs/logits parameterisation, and mixins for distributions
built on a Categorical, relaxed ones, half ones and those centred at ``loc``."""

import math

from . import _t as T
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["AtLoc", "HalfOf", "LazyProbsLogits", "OfCategorical", "OfRelaxed", "ProbsLogits",
           "enumerated", "expand_params", "set_params"]

ONE_OF = "Either `probs` or `logits` must be specified, but not both."


def set_params(dist, **params):
    """Broadcasts ``params`` (tensors or numbers) together, stores each on ``dist`` under its
    name and returns their common shape (the batch shape)."""
    values = broadcast_all(*params.values())
    for name, value in zip(params, values):
        setattr(dist, name, value)
    return values[0].size()


def expand_params(dist, new, batch_shape, names=(), event_shape=T.EMPTY_SIZE):
    """The body of ``expand``: ``new`` gets ``dist``'s parameters ``names`` expanded to
    ``batch_shape``, the shapes, and ``dist``'s validation flag; returns ``new``."""
    batch_shape = T.Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def enumerated(values, batch_shape, expand):
    """The support ``values`` along a new leading dim, broadcast over (``expand``: expanded to)
    ``batch_shape``."""
    values = values.view((-1,) + (1,) * len(batch_shape))
    if expand:
        values = values.expand((-1,) + tuple(batch_shape))
    return values


class LazyProbsLogits:
    """Mixin of distributions given by ``probs`` or ``logits``: the other is computed on first
    use. ``_binary``: a success probability each (sigmoid); otherwise probabilities over the
    last dim (softmax)."""

    _binary = True

    def _set_probs_logits(self, probs, logits, *others):
        """Stores the given one of ``probs`` / ``logits`` broadcast after ``others``; returns
        ``others`` broadcast with it."""
        if (probs is None) == (logits is None):
            raise ValueError(ONE_OF)
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *others, param = broadcast_all(*others, given)
        setattr(self, name, param)
        return others

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)


class ProbsLogits(LazyProbsLogits):
    """``LazyProbsLogits`` with the given tensor kept as ``_param`` (``param_shape``)."""

    def _set_probs_logits(self, probs, logits, *others):
        others = super()._set_probs_logits(probs, logits, *others)
        self._param = self.probs if probs is not None else self.logits
        return others

    def _expand_probs_logits(self, new, param_shape):
        """``new`` gets whichever of ``probs`` / ``logits`` this one holds, expanded."""
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(param_shape))
                new._param = getattr(new, name)

    @property
    def param_shape(self):
        return self._param.size()


class OfCategorical:
    """Mixin of distributions built on a ``Categorical`` held as ``_categorical``: its
    parameters, and ``expand`` through it."""

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def _expand_categorical(self, new, batch_shape):
        """The body of ``expand`` once ``new`` holds the other attributes."""
        new._categorical = self._categorical.expand(T.Size(batch_shape))
        return expand_params(self, new, batch_shape, event_shape=self.event_shape)


class OfRelaxed:
    """Mixin of relaxed distributions (a ``TransformedDistribution`` of a base holding
    ``temperature``, ``logits`` and ``probs``)."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class HalfOf:
    """Mixin of the half distributions ``|X|``, ``X`` a base centred at 0 with a ``scale``
    (HalfNormal, HalfCauchy): density, cdf, icdf and entropy folded from the base's."""

    arg_constraints = {"scale": constraints.positive}  # noqa: RUF012 - torch's class-level table
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return T.zeros_like(self.scale)

    def _folded_value(self, value):
        """``value`` as ``log_prob`` evaluates it (after validation)."""
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._folded_value(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, lp, float("-inf"))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class AtLoc:
    """Mixin of distributions symmetric and unimodal about ``loc``: mean and mode are ``loc``."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
