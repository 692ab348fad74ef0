"""The ops ``sparsetorch.distributions`` uses, gathered from the floors below (a local stand-in
for ``torch.``: nothing inside the package imports ``sparsetorch`` itself)."""

from .._dtype import finfo, get_default_dtype, int64  # noqa: F401
from .._ops._join import broadcast_shapes, broadcast_tensors, cat, stack  # noqa: F401
from .._ops._ranges import arange, eye  # noqa: F401
from .._ops._scatter import gather  # noqa: F401
from .._ops.creation import (  # noqa: F401
    as_tensor, empty, full, full_like, ones, ones_like, tensor, zeros, zeros_like,
)
from .._ops.matrix import diag_embed, diagonal, tril  # noqa: F401
from .._ops.pointwise import (  # noqa: F401
    clamp, digamma, erf, erfinv, exp, expm1, lgamma, log, log1p, polygamma, sigmoid, sqrt, where,
    xlogy,
)
from .._ops.random import bernoulli, multinomial, normal, poisson, rand, randn  # noqa: F401
from .._ops.statistics import log_softmax, logsumexp, softmax  # noqa: F401
from .._tensor import Size, Tensor  # noqa: F401
from ..autograd.grad_mode import no_grad  # noqa: F401
from ..linalg import cholesky, solve_triangular  # noqa: F401
from ..nn.functional import binary_cross_entropy_with_logits, one_hot  # noqa: F401,E402
