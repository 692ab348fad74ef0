"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``."""

import math

from . import _t as T
from . import constraints
from ._util import AtLoc, expand_params
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(L, x):
    """``x^T (L L^T)^-1 x`` over the last dim, ``L`` broadcast against ``x``'s batch dims."""
    n = x.size(-1)
    shape = tuple(T.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1])))
    Lb = L.expand(shape + (n, n))
    xb = x.expand(shape + (n,)).unsqueeze(-1)
    return T.solve_triangular(Lb, xb, upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    from ..linalg import inv
    return T.cholesky(inv(P))


class MultivariateNormal(AtLoc, Distribution):
    """A multivariate normal with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower-triangular, positive diagonal)."""

    arg_constraints = {"loc": constraints.real_vector,  # noqa: RUF012 - torch's class-level table
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = scale_tril if scale_tril is not None else (
            covariance_matrix if covariance_matrix is not None else precision_matrix)
        name = ("scale_tril matrix" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if given.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = tuple(T.broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1])))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = T.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(T.Size(batch_shape))
        loc_shape = batch_shape + tuple(self.event_shape)
        cov_shape = batch_shape + tuple(self.event_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        return expand_params(self, new, batch_shape, event_shape=self.event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        n = L.shape[-1]
        eye = T.eye(n, dtype=L.dtype, device=L.device).expand(tuple(L.shape))
        Linv = T.solve_triangular(L, eye, upper=False)
        return (Linv.mT @ Linv).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        shape = tuple(self._extended_shape(sample_shape))
        eps = T.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = T.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = T.diagonal(self._unbroadcasted_scale_tril, 0, -2, -1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
