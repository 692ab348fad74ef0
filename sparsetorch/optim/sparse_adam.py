"""SparseAdam: Adam for sparse gradients, updating only the gradient's rows (torch's semantics)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _dispatch, _jit
from .._layout import strided
from . import _cuda_kernels, _kernels, _sparse
from .adam import _check, _is_np
from .optimizer import Optimizer, _xp_of, _zero_step

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""SparseAdam implements a masked version of the Adam algorithm suitable for sparse gradients.

    Only the moments and parameter values at the gradient's (coalesced) indices are updated:

    .. math::
        m_r = m_r + (1-\beta_1)(g_r - m_r);\; v_r = v_r + (1-\beta_2)(g_r^2 - v_r);
        \; \theta_r = \theta_r - \gamma\frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}\frac{m_r}{\sqrt{v_r} + \epsilon}

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        _check(lr, betas, eps, 0.0)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = []
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if p.is_sparse or p.is_sparse_csr:
                    sparse_params.append([index, j])
                if p.is_complex():
                    complex_params.append([index, j])
        if sparse_params:
            raise ValueError(
                f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support complex parameters")

    def _update(self, p, grad, group, state):
        if grad.layout is strided:
            raise RuntimeError(
                "SparseAdam does not support dense gradients, please consider Adam instead")
        P = _sparse.param_array(p)
        if not state:
            state["step"] = _zero_step()
            state["exp_avg"] = self._new_state(p)
            state["exp_avg_sq"] = self._new_state(p)
        t = self._bump_step(state)
        b1, b2 = group["betas"]
        eps = group["eps"]
        ss = group["lr"] * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        rg = _sparse.row_grad(grad, tuple(P.shape))
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        if rg is None:
            grad = grad.to_sparse() if grad.layout is not _sparse.sparse_coo else grad
            rg = _sparse.row_grad(grad, tuple(P.shape))
        rows, vals, nrows = rg
        P2, m2, v2 = (_sparse.as_rows(a, nrows) for a in (P, m, v))
        if P2 is None or m2 is None or v2 is None:
            raise RuntimeError("SparseAdam: the parameter must be contiguous")
        if vals.dtype != P2.dtype:
            vals = vals.astype(P2.dtype)
        if rows.size:
            k = _kernels.kernels(_sparse.CPU, P2.dtype) if _is_np(P2) else None
            if k is not None:
                xp = _xp_of(P2)
                with _jit.limit(vals.size):
                    k.adam_rows(P2, m2, v2, m2, False, rows, xp.ascontiguousarray(vals),
                                xp.empty(0, dtype=xp.int64), ss, group["lr"], b1, b2, eps, 1.0,
                                0.0, False, group["maximize"])
            elif not _cuda_kernels.adam_rows(P2, m2, v2, rows, vals, ss, b1, b2, eps,
                                              group["maximize"]):
                # torch's formulas and operation order on the gathered rows (one fused pass on a GPU)
                g = -vals if group["maximize"] else vals
                mo, vo = m2[rows], v2[rows]
                mu = (g - mo) * (1 - b1)
                vu = (g * g - vo) * (1 - b2)
                m2[rows] = mo + mu
                v2[rows] = vo + vu
                numer = mu + mo
                denom = _xp_of(P2).sqrt(vu + vo) + eps
                P2[rows] += -ss * (numer / denom)
        _dispatch.bump_version(p)
