"""Distances: pdist, cdist, cosine_similarity, pairwise_distance.

pdist, the p-norm distance between every pair of rows of a 2-D tensor, is a composition of differentiable ops over the ``n (n - 1) / 2`` row pairs (i < j, row-major, the
upper triangle of ``cdist(x, x)``), with torch's gradient conventions: a zero distance, and for
``p < 1`` a zero component, gets a zero gradient; for ``p = inf`` every component attaining the
maximum gets the full gradient (not a share of it).
"""

import math
import numbers

from .. import _autocast as _ac
from .. import _dtype as D
from .._layout import strided
from ._ranges import triu_indices
from ._util import check_tensor, dense_only

__all__ = ["cdist", "cosine_similarity", "pairwise_distance", "pdist"]


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


# ---- distances ----

@_ac.policy(_ac.FP32)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Computes the batched p-norm distance between each pair of the two collections of row
    vectors: ``x1`` (B x P x M) and ``x2`` (B x R x M) give B x P x R."""
    check_tensor(x1, "cdist", "x1")
    check_tensor(x2, "cdist", "x2")
    dense_only(x1, "cdist")
    dense_only(x2, "cdist")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{t.dtype.scalar_name}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    if not isinstance(p, numbers.Real) or p < 0 or math.isnan(p):
        raise RuntimeError(f"cdist only supports non-negative p values (got {p})")
    dd = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    if p == 0:
        return (dd != 0).sum(-1).to(dd.dtype)
    if math.isinf(p):
        return dd.abs().amax(-1)
    if p == 1:
        return dd.abs().sum(-1)
    # |d|^p summed, then the p-th root; zero distances get a zero gradient (torch does too)
    a = dd.abs()
    s = (a * a).sum(-1) if p == 2 else a.pow(p).sum(-1)
    zero = s == 0
    safe = s.masked_fill(zero, 1.0)
    return (safe.sqrt() if p == 2 else safe.pow(1.0 / p)).masked_fill(zero, 0.0)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Returns cosine similarity between ``x1`` and ``x2``, computed along ``dim``."""
    check_tensor(x1, "cosine_similarity", "x1")
    check_tensor(x2, "cosine_similarity", "x2")
    if not (D.result_type(x1, x2).is_floating_point or D.result_type(x1, x2).is_complex):
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           + D.result_type(x1, x2).scalar_name)
    return cosine_similarity_composite(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The pairwise distance ``||x1 - x2 + eps||_p`` between input vectors, along the last dim."""
    check_tensor(x1, "pairwise_distance", "x1")
    check_tensor(x2, "pairwise_distance", "x2")
    return pairwise_distance_composite(x1, x2, p, eps, keepdim)


# ---- the composites, shared with nn.functional (which checks nothing more) ----

def cosine_similarity_composite(x1, x2, dim, eps):
    r"""``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``."""
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance_composite(x1, x2, p, eps, keepdim):
    """``||x1 - x2 + eps||_p`` along the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)
