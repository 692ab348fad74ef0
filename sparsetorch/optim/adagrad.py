"""Adagrad."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _jit
from . import _kernels, _sparse
from .adam import _is_np
from .optimizer import Optimizer, _check_mode, _xp_of, _zero_step

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    .. math::
        \tilde\gamma = \frac{\gamma}{1 + (t-1)\eta};\; g_t \leftarrow g_t + \lambda\theta_{t-1};
        \; s_t = s_{t-1} + g_t^2;\; \theta_t = \theta_{t-1} - \tilde\gamma \frac{g_t}{\sqrt{s_t} + \epsilon}

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the sum of squares of
            gradients (default: 0)
        eps (float, optional): term added to the denominator to improve numerical stability
            (default: 1e-10)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default) or ``"lazy"``. Without weight decay both
            touch only the gradient's rows (a zero gradient leaves a row unchanged) and agree;
            with weight decay, exact decays every row (unlike torch, which refuses weight decay
            with sparse gradients) and lazy only the gradient's rows.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        sparse_mode: str = "exact",
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                        "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                        "maximize": maximize, "differentiable": differentiable, "fused": fused,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)
        # torch creates the state eagerly
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                if not st:
                    st["step"] = _zero_step()
                    st["sum"] = self._new_state(p, float(group["initial_accumulator_value"]))

    def _init_state(self, p, group, state):
        state["sum"] = self._new_state(p, float(group["initial_accumulator_value"]))

    @staticmethod
    def _clr(group, t):
        return group["lr"] / (1 + (t - 1) * group["lr_decay"])

    def _dense(self, P, G, S, group, t):
        xp = _xp_of(P)
        g = -G if group["maximize"] else G
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * P
        s = S["sum"]
        tmp = xp.multiply(g, g)
        s += tmp
        xp.sqrt(s, out=tmp)
        tmp += group["eps"]
        xp.divide(g, tmp, out=tmp)
        tmp *= -self._clr(group, t)
        P += tmp

    def _exact(self, P2, rows, vals, S2, group, t):
        if group["weight_decay"] != 0:
            return super()._exact(P2, rows, vals, S2, group, t)
        # a zero gradient row is left unchanged: the exact update touches the gradient's rows only
        self._lazy(P2, rows, vals, S2, group, t)

    def _lazy(self, P2, rows, vals, S2, group, t):
        k = _kernels.kernels(_sparse.CPU, P2.dtype) if _is_np(P2) else None
        if k is None:
            return super()._lazy(P2, rows, vals, S2, group, t)
        with _jit.limit(vals.size):
            k.adagrad_rows(P2, S2["sum"], rows, _xp_of(vals).ascontiguousarray(vals),
                           self._clr(group, t), group["eps"], group["weight_decay"],
                           group["maximize"])
