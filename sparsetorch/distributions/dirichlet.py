"""``Dirichlet(concentration)``."""

from . import _t as T
from . import constraints
from ._util import expand_params
from .exp_family import ExponentialFamily
from .utils import standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with ``concentration`` (last dim: the
    categories). ``rsample`` normalises standard-gamma draws, differentiable through their
    implicit reparameterisation gradient: an unbiased gradient like torch's, though torch's
    per-draw gradient (``_dirichlet_grad``, through the Beta marginals) is a different one."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}  # noqa: RUF012 - torch's class-level table
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = T.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        return expand_params(self, new, batch_shape, event_shape=self.event_shape)

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        g = standard_gamma(self.concentration.expand(shape))
        x = g / g.sum(-1, keepdim=True)
        tiny = T.finfo(x.dtype).tiny
        return x.clamp(min=tiny, max=1 - tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (T.xlogy(c - 1.0, value).sum(-1) + T.lgamma(c.sum(-1)) - T.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1)
        # all concentrations < 1: torch puts the mode at the argmax of the (NaN) row, i.e. e_0
        e0 = T.zeros_like(mode)
        e0[..., 0] = 1
        return T.where(mask.unsqueeze(-1), e0, mode)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (T.lgamma(self.concentration).sum(-1) - T.lgamma(a0) - (k - a0) * T.digamma(a0)
                - ((self.concentration - 1.0) * T.digamma(self.concentration)).sum(-1))
