"""``sparsetorch.distributions``: torch.distributions' API on sparsetorch tensors.

Parameterisable probability distributions with ``sample`` / ``rsample`` (reparameterised,
differentiable), ``log_prob``, ``entropy``, moments, ``cdf`` / ``icdf`` where torch has them,
argument validation with torch's messages, and ``kl_divergence`` with torch's registered
pairs. Draws use sparsetorch's generator (``manual_seed``). Gamma, Beta and Dirichlet
``rsample`` use the implicit reparameterisation gradient of the standard gamma draw.
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .weibull import Weibull

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "SoftplusTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "Weibull",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transforms",
]
