"""Adam and AdamW (dense fused step, exact and lazy sparse steps)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import _jit
from . import _kernels, _sparse
from .optimizer import Optimizer, _check_mode, _xp_of

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adam", "AdamW"]


def _check(lr, betas, eps, weight_decay):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _adam_np(P, G, m, v, vmax, ss, lr, b1, b2, eps, bc2s, wd, decoupled, maximize):
    """One Adam step on arrays, in place, with ``out=`` ufuncs and one temporary."""
    xp = _xp_of(P)
    g = -G if maximize else G
    if wd != 0:
        if decoupled:
            P *= 1 - lr * wd
        else:
            g = g + wd * P
    tmp = xp.subtract(g, m)
    tmp *= 1 - b1
    m += tmp
    v *= b2
    xp.multiply(g, g, out=tmp)
    tmp *= 1 - b2
    v += tmp
    src = v
    if vmax is not None:
        xp.maximum(vmax, v, out=vmax)
        src = vmax
    xp.sqrt(src, out=tmp)
    tmp /= bc2s
    tmp += eps
    xp.divide(m, tmp, out=tmp)
    tmp *= -ss
    P += tmp


class Adam(Optimizer):
    r"""Implements the Adam algorithm.

    .. math::
        g_t = \nabla f_t(\theta_{t-1}) \;(\times -1 \text{ if maximize});
        \; g_t \leftarrow g_t + \lambda \theta_{t-1} \;(\text{Adam}) \text{ or }
        \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda) \;(\text{AdamW});
        \; m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t;\; v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2;
        \; \hat v_t = \max(\hat v_{t-1}, v_t) \text{ (amsgrad)};
        \; \theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t} \frac{m_t}{\sqrt{v_t}/\sqrt{1-\beta_2^t} + \epsilon}

    Args:
        params (iterable): iterable of parameters or dicts defining parameter groups
        lr (float, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical stability
            (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        amsgrad (bool, optional): whether to use the AMSGrad variant (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default): a sparse gradient gives the result of
            its dense form (the moments decay on every row). ``"lazy"``: only the gradient's rows
            are updated -- moments, weight decay and parameter (TensorFlow's LazyAdam); the bias
            correction uses the parameter's step count.
    """

    _decoupled = False

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        sparse_mode: str = "exact",
    ) -> None:
        _check(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                        "maximize": maximize, "foreach": foreach, "capturable": capturable,
                        "differentiable": differentiable, "fused": fused,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)

    def _init_state(self, p, group, state):
        state["exp_avg"] = self._new_state(p)
        state["exp_avg_sq"] = self._new_state(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = self._new_state(p)

    def _scalars(self, group, t):
        b1, b2 = group["betas"]
        lr = group["lr"]
        return (lr / (1 - b1 ** t), lr, b1, b2, group["eps"], math.sqrt(1 - b2 ** t),
                group["weight_decay"], self._decoupled, group["maximize"])

    def _dense(self, P, G, S, group, t):
        vmax = S.get("max_exp_avg_sq")
        sc = self._scalars(group, t)
        m, v = S["exp_avg"], S["exp_avg_sq"]
        k = _kernels.kernels(_sparse.CPU, P.dtype) if _is_np(P) else None
        arrs = (P, G, m, v) + ((vmax,) if vmax is not None else ())
        if k is not None and P.ndim > 0 and all(a.flags.c_contiguous and a.dtype == P.dtype
                                                 for a in arrs):
            f = (lambda a: a.reshape(-1))
            with _jit.limit(P.size):
                k.adam_flat(f(P), f(G), f(m), f(v), f(vmax if vmax is not None else m),
                            vmax is not None, *sc, _kernels.num_blocks(k, P.size))
            return
        _adam_np(P, G, m, v, vmax, *sc)

    def _rows(self, P2, rows, vals, S2, group, t, lazy):
        k = _kernels.kernels(_sparse.CPU, P2.dtype) if _is_np(P2) else None
        if k is None:
            return False
        xp = _xp_of(P2)
        vmax = S2.get("max_exp_avg_sq")
        m, v = S2["exp_avg"], S2["exp_avg_sq"]
        vals = xp.ascontiguousarray(vals)
        if lazy:
            rowmap = xp.empty(0, dtype=xp.int64)
        else:
            rowmap = xp.full(P2.shape[0], -1, dtype=xp.int64)
            rowmap[rows] = xp.arange(rows.size, dtype=xp.int64)
            rows = rows[:0]
        with _jit.limit(vals.size if lazy else P2.size):
            k.adam_rows(P2, m, v, vmax if vmax is not None else m, vmax is not None, rows, vals,
                        rowmap, *self._scalars(group, t))
        return True

    def _exact(self, P2, rows, vals, S2, group, t):
        if not self._rows(P2, rows, vals, S2, group, t, False):
            super()._exact(P2, rows, vals, S2, group, t)

    def _lazy(self, P2, rows, vals, S2, group, t):
        if rows.size and not self._rows(P2, rows, vals, S2, group, t, True):
            super()._lazy(P2, rows, vals, S2, group, t)


class AdamW(Adam):
    r"""Implements the AdamW algorithm: Adam with decoupled weight decay
    (:math:`\theta \leftarrow \theta(1 - \gamma\lambda)` before the Adam step).

    Same arguments as :class:`Adam`, with ``weight_decay`` defaulting to 1e-2.
    """

    _decoupled = True

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        sparse_mode: str = "exact",
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, sparse_mode=sparse_mode)


def _is_np(a):
    return type(a).__module__ == "numpy"
