"""RowWiseAdagrad: Adagrad with one accumulator per embedding row (FBGEMM's EXACT_ROWWISE_ADAGRAD)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _jit
from . import _kernels, _sparse
from .adam import _is_np
from .optimizer import Optimizer, _check_mode, _xp_of

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["RowWiseAdagrad"]


class RowWiseAdagrad(Optimizer):
    r"""Implements row-wise Adagrad, the optimizer of production embedding tables.

    The state ``sum`` holds ONE accumulator per row of the parameter (dim 0; shape
    ``[num_rows]``), which accumulates the mean of the squared row gradient. For a row ``r`` with
    gradient :math:`g_r \in \mathbb{R}^D`:

    .. math::
        g_r \leftarrow g_r + \lambda\theta_r;\quad s_r = s_r + \frac{1}{D}\sum_d g_{r,d}^2;
        \quad \theta_r = \theta_r - \frac{\gamma}{\sqrt{s_r} + \epsilon} g_r

    This is FBGEMM's ``EXACT_ROWWISE_ADAGRAD`` (with L2 weight decay), and needs ``D`` times less
    state than :class:`Adagrad`. A parameter of more than 2 dims has rows of ``prod(shape[1:])``.

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-2)
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of ``sum`` (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default) or ``"lazy"``. Without weight decay both
            touch only the gradient's rows and agree; with weight decay, exact decays every row
            (as the densified gradient would) and lazy only the gradient's rows.
    """

    _row_state = ("sum",)

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        eps: float = 1e-8,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        *,
        maximize: bool = False,
        sparse_mode: str = "exact",
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        defaults = {"lr": lr, "eps": eps, "weight_decay": weight_decay,
                        "initial_accumulator_value": initial_accumulator_value, "maximize": maximize,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim < 1:
                    raise ValueError("RowWiseAdagrad: parameters need at least 1 dimension (rows)")

    def _init_state(self, p, group, state):
        state["sum"] = self._new_state(p, float(group["initial_accumulator_value"]),
                                       shape=(p.shape[0],))

    def _update(self, p, grad, group, state):
        # rows are dim 0 of the parameter: reduce sparse gradients over all sparse dims to those
        if grad.layout is not _sparse.strided and grad.is_sparse and grad.sparse_dim() > 1:
            grad = grad.to_dense()
        super()._update(p, grad, group, state)

    def _sparse_update(self, P, grad, S, group, t):
        rg = _sparse.row_grad(grad, tuple(P.shape))
        if rg is None or P.ndim == 0 or rg[2] != P.shape[0]:
            return self._dense(P, _sparse.dense_grad(grad, None), S, group, t)
        return super()._sparse_update(P, grad, S, group, t)

    def _dense(self, P, G, S, group, t):
        xp = _xp_of(P)
        n = P.shape[0]
        P2 = _sparse.as_rows(P, n)
        G2 = xp.ascontiguousarray(G).reshape(n, -1)
        if P2 is None:
            P2 = xp.ascontiguousarray(P).reshape(n, -1)
            self._lazy(P2, xp.arange(n, dtype=xp.int64), G2, S, group, t)
            P[...] = P2.reshape(P.shape)
            return
        self._lazy(P2, xp.arange(n, dtype=xp.int64), G2, S, group, t)

    def _exact(self, P2, rows, vals, S2, group, t):
        if group["weight_decay"] != 0:
            G = _xp_of(P2).zeros(P2.shape, dtype=P2.dtype)
            G[rows] = vals
            return self._dense(P2, G, S2, group, t)
        self._lazy(P2, rows, vals, S2, group, t)

    def _lazy(self, P2, rows, vals, S2, group, t):
        s = S2["sum"]
        xp = _xp_of(P2)
        k = _kernels.kernels(_sparse.CPU, P2.dtype) if _is_np(P2) else None
        if k is not None:
            with _jit.limit(vals.size):
                k.rowwise_adagrad_rows(P2, s, rows, xp.ascontiguousarray(vals), group["lr"],
                                       group["eps"], group["weight_decay"], group["maximize"])
            return
        g = -vals if group["maximize"] else vals
        Pr = P2[rows]
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * Pr
        D = P2.shape[1]
        sr = s[rows] + ((g * g).sum(axis=1) / D if D else 0)
        s[rows] = sr
        P2[rows] = Pr - (group["lr"] / (xp.sqrt(sr) + group["eps"]))[:, None] * g
