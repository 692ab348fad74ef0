"""The ops ``sparsetorch.distributions`` uses, gathered from the floors below (a local stand-in
for ``torch.``: nothing inside the package imports ``sparsetorch`` itself)."""

from .._dtype import finfo, get_default_dtype, int64
from .._ops._join import broadcast_shapes, broadcast_tensors, cat, stack
from .._ops._ranges import arange, eye
from .._ops._scatter import gather
from .._ops.creation import (
    as_tensor,
    empty,
    full,
    full_like,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from .._ops.matrix import diag_embed, diagonal, tril
from .._ops.pointwise import (
    atan,
    clamp,
    digamma,
    erf,
    erfinv,
    exp,
    expm1,
    lgamma,
    log,
    log1p,
    polygamma,
    rsqrt,
    sigmoid,
    sqrt,
    tan,
    where,
    xlogy,
)
from .._ops.random import bernoulli, multinomial, normal, poisson, rand, randn
from .._ops.statistics import log_softmax, logsumexp, softmax
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..linalg import cholesky, solve_triangular
from ..nn.functional import binary_cross_entropy_with_logits, one_hot

EMPTY_SIZE = Size()  # the default sample_shape (one instance, as torch.Size())

__all__ = [
    "EMPTY_SIZE",
    "Size",
    "Tensor",
    "arange",
    "as_tensor",
    "atan",
    "bernoulli",
    "binary_cross_entropy_with_logits",
    "broadcast_shapes",
    "broadcast_tensors",
    "cat",
    "cholesky",
    "clamp",
    "diag_embed",
    "diagonal",
    "digamma",
    "empty",
    "erf",
    "erfinv",
    "exp",
    "expm1",
    "eye",
    "finfo",
    "full",
    "full_like",
    "gather",
    "get_default_dtype",
    "int64",
    "lgamma",
    "log",
    "log1p",
    "log_softmax",
    "logsumexp",
    "multinomial",
    "no_grad",
    "normal",
    "one_hot",
    "ones",
    "ones_like",
    "poisson",
    "polygamma",
    "rand",
    "randn",
    "rsqrt",
    "sigmoid",
    "softmax",
    "solve_triangular",
    "sqrt",
    "stack",
    "tan",
    "tensor",
    "tril",
    "where",
    "xlogy",
    "zeros",
    "zeros_like",
]
