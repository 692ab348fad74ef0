"""Adadelta."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .optimizer import Optimizer, _check_mode, _xp_of

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    .. math::
        g_t \leftarrow g_t + \lambda\theta_{t-1};\; v_t = \rho v_{t-1} + (1-\rho) g_t^2;
        \; \Delta x_t = \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}} g_t;
        \; u_t = \rho u_{t-1} + (1-\rho)\Delta x_t^2;\; \theta_t = \theta_{t-1} - \gamma \Delta x_t

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): coefficient that scales delta before it is applied (default: 1.0)
        rho (float, optional): coefficient used for computing a running average of squared
            gradients (default: 0.9)
        eps (float, optional): term added to the denominator (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default): a sparse gradient gives the result of
            its dense form. ``"lazy"``: only the gradient's rows are updated, state included.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
        sparse_mode: str = "exact",
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                        "capturable": capturable, "foreach": foreach, "differentiable": differentiable,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)

    def _init_state(self, p, group, state):
        state["square_avg"] = self._new_state(p)
        state["acc_delta"] = self._new_state(p)

    def _dense(self, P, G, S, group, t):
        xp = _xp_of(P)
        rho, eps = group["rho"], group["eps"]
        g = -G if group["maximize"] else G
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * P
        v, u = S["square_avg"], S["acc_delta"]
        v *= rho
        tmp = xp.multiply(g, g)
        tmp *= 1 - rho
        v += tmp
        std = xp.sqrt(v + eps)
        xp.add(u, eps, out=tmp)
        xp.sqrt(tmp, out=tmp)
        tmp /= std
        tmp *= g
        u *= rho
        u += (1 - rho) * (tmp * tmp)
        tmp *= -group["lr"]
        P += tmp
