"""pdist: the p-norm distance between every pair of rows of a 2-D tensor.

A composition of differentiable ops over the ``n (n - 1) / 2`` row pairs (i < j, row-major, the
upper triangle of ``cdist(x, x)``), with torch's gradient conventions: a zero distance, and for
``p < 1`` a zero component, gets a zero gradient; for ``p = inf`` every component attaining the
maximum gets the full gradient (not a share of it).
"""

import math
import numbers

from .. import _autocast as _ac
from .._layout import strided
from ._ranges import triu_indices
from ._util import check_tensor

__all__ = ["pdist"]


@_ac.policy(_ac.FP32)
def pdist(input, p=2):
    r"""Computes the p-norm distance between every pair of row vectors in the input
    (``N x M`` gives the ``N (N - 1) / 2`` distances ``||x_i - x_j||_p`` for ``i < j``)."""
    check_tensor(input, "pdist")
    if input.layout is not strided:
        raise NotImplementedError(
            f"pdist: not implemented for layouts ({input.layout.name}). Convert the sparse input "
            "with .to_dense() first.")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not isinstance(p, numbers.Real) or p < 0 or math.isnan(p):
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    dd = input.index_select(0, i) - input.index_select(0, j)  # (pairs, M)
    a = dd.abs()
    if p == 0:  # a count: differentiable as torch's (the gradient is zero)
        count = (dd != 0).sum(-1).to(input.dtype)
        return count + (a - a.detach()).sum(-1) * 0 if a.requires_grad else count
    if p == 1:
        return a.sum(-1)
    if math.isinf(p):
        # value: the max; gradient: sign(d_k) on every k attaining it (torch's pdist backward)
        top = a.amax(-1, keepdim=True).detach()
        hit = (a == top) & (top > 0)
        return top.squeeze(-1) + ((a - a.detach()) * hit).sum(-1)
    if p < 1:
        zero_c = a == 0
        s = a.masked_fill(zero_c, 1.0).pow(p).masked_fill(zero_c, 0.0).sum(-1)
    else:
        s = (a * a).sum(-1) if p == 2 else a.pow(p).sum(-1)
    zero = s == 0
    safe = s.masked_fill(zero, 1.0)
    return (safe.sqrt() if p == 2 else safe.pow(1.0 / p)).masked_fill(zero, 0.0)
