"""RMSprop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .optimizer import Optimizer, _check_mode, _xp_of

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm.

    .. math::
        g_t \leftarrow g_t + \lambda\theta_{t-1};\; v_t = \alpha v_{t-1} + (1-\alpha) g_t^2;
        \; \bar g_t = \alpha \bar g_{t-1} + (1-\alpha) g_t,\; \tilde v_t = v_t - \bar g_t^2
        \text{ (centered)};
        \; b_t = \mu b_{t-1} + g_t / (\sqrt{\tilde v_t} + \epsilon),\; \theta_t = \theta_{t-1} - \gamma b_t
        \text{ (or } \theta_t = \theta_{t-1} - \gamma g_t / (\sqrt{\tilde v_t} + \epsilon) \text{ when } \mu = 0)

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional): normalize the gradient by its estimated variance
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default): a sparse gradient gives the result of
            its dense form (averages decay on every row). ``"lazy"``: only the gradient's rows are
            updated, state and weight decay included.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        *,
        sparse_mode: str = "exact",
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                        "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                        "maximize": maximize, "differentiable": differentiable,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)

    def _init_state(self, p, group, state):
        state["square_avg"] = self._new_state(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = self._new_state(p)
        if group["centered"]:
            state["grad_avg"] = self._new_state(p)

    def _dense(self, P, G, S, group, t):
        xp = _xp_of(P)
        alpha, eps, mom = group["alpha"], group["eps"], group["momentum"]
        g = -G if group["maximize"] else G
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * P
        v = S["square_avg"]
        v *= alpha
        tmp = xp.multiply(g, g)
        tmp *= 1 - alpha
        v += tmp
        if group["centered"]:
            ga = S["grad_avg"]
            ga += (1 - alpha) * (g - ga)
            xp.multiply(ga, ga, out=tmp)
            xp.subtract(v, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)
        else:
            xp.sqrt(v, out=tmp)
        tmp += eps
        xp.divide(g, tmp, out=tmp)
        if mom > 0:
            buf = S["momentum_buffer"]
            buf *= mom
            buf += tmp
            xp.multiply(buf, -group["lr"], out=tmp)
        else:
            tmp *= -group["lr"]
        P += tmp
