"""Stochastic gradient descent (optionally with momentum)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _dispatch, _jit
from .._layout import sparse_coo, strided
from ..sparse._payload import COO
from . import _kernels, _sparse
from .adam import _is_np
from .optimizer import Optimizer, _check_mode, _xp_of, required

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    .. math::
        g_t = \nabla_\theta f_t(\theta_{t-1}) \;(\times -1 \text{ if maximize}) + \lambda\theta_{t-1};
        \quad b_t = \mu b_{t-1} + (1 - \tau) g_t \;(b_1 = g_1);
        \quad g_t \leftarrow g_t + \mu b_t \text{ (nesterov) or } b_t;
        \quad \theta_t = \theta_{t-1} - \gamma g_t

    Args:
        params (iterable): iterable of parameters or named_parameters to optimize or iterable of
            dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum (default: False)
        maximize (bool, optional): maximize the objective with respect to the params, instead of
            minimizing (default: False)
        sparse_mode (str, optional): ``"exact"`` (default): a sparse gradient gives the same result
            as its dense form (without weight decay only the gradient's rows, and with momentum
            the rows of the momentum buffer, are touched: the buffer is row-sparse, as torch's,
            until it covers half of the rows). ``"lazy"``: only the rows in the gradient are updated, momentum buffer and
            weight decay included; a row's buffer starts from zero on its first touch after step 1.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
        sparse_mode: str = "exact",
    ) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                        "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                        "differentiable": differentiable, "fused": fused,
                        "sparse_mode": _check_mode(sparse_mode)}
        super().__init__(params, defaults)

    def _update(self, p, grad, group, state):
        P = _sparse.param_array(p)
        if group["momentum"] == 0 and not state:
            self.state.pop(p, None)  # as torch: no state entry without momentum
        lr, mom, damp = group["lr"], group["momentum"], group["dampening"]
        wd, nest, maxi = group["weight_decay"], group["nesterov"], group["maximize"]
        buf_t = state.get("momentum_buffer")
        if mom == 0 and wd == 0 and self._uncoalesced_rows(P, grad, lr, maxi):
            _dispatch.bump_version(p)
            return
        rg = None if grad.layout is strided else _sparse.row_grad(grad, tuple(P.shape))
        row_buf = (rg is not None and mom != 0 and wd == 0 and group["sparse_mode"] == "exact"
                   and P.ndim >= 1 and rg[2] == P.shape[0] and P.flags.c_contiguous)
        if buf_t is not None and buf_t.layout is not strided and not row_buf:
            # a row-sparse buffer (exact mode's) meets a step that needs it dense
            buf_t = state["momentum_buffer"] = buf_t.to_dense()
        if row_buf and (buf_t is None or buf_t.layout is not strided):
            self._exact_row_buffer(p, P, rg, state, buf_t, lr, mom, damp, nest, maxi)
            _dispatch.bump_version(p)
            return
        P2 = None
        if rg is not None:
            rows, vals, nrows = rg
            P2 = _sparse.as_rows(P, nrows)
            if buf_t is not None and _sparse.as_rows(buf_t._data, nrows) is None:
                P2 = None
        if P2 is None:
            # dense gradient (or a sparse one without a row view): torch's update
            xp = _xp_of(P)
            G = grad._data if grad.layout is strided else _sparse.dense_grad(grad, xp)
            g = -G if maxi else G
            if wd != 0:
                g = g + wd * P
            if mom != 0:
                if buf_t is None:
                    buf = xp.array(g, copy=True)
                    state["momentum_buffer"] = _dispatch.wrap(buf, p.dtype, p.device, strided)
                else:
                    buf = buf_t._data
                    buf *= mom
                    buf += (1 - damp) * g
                g = g + mom * buf if nest else buf
            P -= lr * g
            _dispatch.bump_version(p)
            return
        xp = _xp_of(P2)
        if vals.dtype != P2.dtype:
            vals = vals.astype(P2.dtype)
        lazy = group["sparse_mode"] == "lazy"
        if mom == 0 and wd == 0 and rows.size:
            k = _kernels.kernels(_sparse.CPU, P2.dtype) if _is_np(P2) else None
            if k is not None:  # the gather/scatter below in one pass (15k rows x 16: 0.6 -> 0.16 ms)
                with _jit.limit(vals.size):
                    k.sgd_rows(P2, rows, xp.ascontiguousarray(vals), -lr if maxi else lr)
                _dispatch.bump_version(p)
                return
        g = -vals if maxi else vals
        if lazy or (mom == 0 and wd == 0):
            # only the gradient's rows change (exact too when there is no momentum/decay)
            Pr = P2[rows]
            if wd != 0:
                g = g + wd * Pr
            if mom != 0:
                if buf_t is None:
                    buf2 = xp.zeros(P2.shape, dtype=P2.dtype)
                    state["momentum_buffer"] = _dispatch.wrap(buf2.reshape(P.shape), p.dtype,
                                                             p.device, strided)
                    b = g
                else:
                    buf2 = _sparse.as_rows(buf_t._data, P2.shape[0])
                    b = mom * buf2[rows] + (1 - damp) * g
                buf2[rows] = b
                g = g + mom * b if nest else b
            P2[rows] = Pr - lr * g
        elif wd == 0:
            # exact with momentum: the buffer decays on every row, the gradient adds on its rows
            if buf_t is None:
                buf2 = xp.zeros(P2.shape, dtype=P2.dtype)
                buf2[rows] = g
                state["momentum_buffer"] = _dispatch.wrap(buf2.reshape(P.shape), p.dtype,
                                                         p.device, strided)
            else:
                buf2 = _sparse.as_rows(buf_t._data, P2.shape[0])
                buf2 *= mom
                buf2[rows] += (1 - damp) * g
            if nest:
                P2 -= (lr * mom) * buf2
                P2[rows] -= lr * g
            else:
                P2 -= lr * buf2
        else:
            # exact with weight decay: the decay term makes the gradient dense
            G = xp.zeros(P2.shape, dtype=P2.dtype)
            G[rows] = vals
            g = (-G if maxi else G) + wd * P2
            if mom != 0:
                if buf_t is None:
                    buf2 = g.copy()
                    state["momentum_buffer"] = _dispatch.wrap(buf2.reshape(P.shape), p.dtype,
                                                             p.device, strided)
                else:
                    buf2 = _sparse.as_rows(buf_t._data, P2.shape[0])
                    buf2 *= mom
                    buf2 += (1 - damp) * g
                g = g + mom * buf2 if nest else buf2
            P2 -= lr * g
        _dispatch.bump_version(p)

    @staticmethod
    def _uncoalesced_rows(P, grad, lr, maxi):
        """Plain SGD from an uncoalesced row-sparse gradient (``Embedding(sparse=True)``'s): each
        entry is applied in order, without coalescing first (torch's ``add_`` does the same; 65k
        x 64 entries: the coalesce alone took 4 ms). Returns False where it does not apply."""
        if grad.layout is not sparse_coo or P.ndim < 2 or not _is_np(P):
            return False
        pl = grad._data
        if pl.coalesced or pl.indices.shape[0] != 1 or not P.flags.c_contiguous:
            return False
        k = _kernels.kernels(_sparse.CPU, P.dtype)
        if k is None:
            return False
        P2 = P.reshape(P.shape[0], -1)
        vals = pl.values.reshape(pl.values.shape[0], -1)
        if vals.dtype != P2.dtype:
            vals = vals.astype(P2.dtype)
        xp = _xp_of(P2)
        k.sgd_entries(P2, pl.indices[0], xp.ascontiguousarray(vals), -lr if maxi else lr)
        return True

    @staticmethod
    def _exact_row_buffer(p, P, rg, state, buf_t, lr, mom, damp, nest, maxi):
        """Exact momentum for row-sparse gradients with a row-sparse buffer (as torch keeps it):
        the buffer's rows are the union of the rows seen so far, rows outside it are zero, so
        only those rows change. Turns dense once it covers half of the rows."""
        rows, vals, nrows = rg
        P2 = P.reshape(nrows, -1)
        xp = _xp_of(P2)
        if vals.dtype != P2.dtype:
            vals = vals.astype(P2.dtype)
        g = -vals if maxi else vals
        if buf_t is None:
            ub, ubv = rows, xp.array(g, copy=True)
        else:
            bp = buf_t._data
            rb = bp.indices[0]
            vb = bp.values.reshape(rb.size, -1)
            ub = xp.union1d(rb, rows)
            ubv = xp.zeros((ub.size, P2.shape[1]), dtype=P2.dtype)
            ubv[xp.searchsorted(ub, rb)] = mom * vb
            ubv[xp.searchsorted(ub, rows)] += (1 - damp) * g
        if nest:
            P2[ub] -= (lr * mom) * ubv
            P2[rows] -= lr * g
        else:
            P2[ub] -= lr * ubv
        if 2 * ub.size > nrows:
            dense = xp.zeros(P2.shape, dtype=P2.dtype)
            dense[ub] = ubv
            state["momentum_buffer"] = _dispatch.wrap(dense.reshape(P.shape), p.dtype, p.device, strided)
        else:
            pl = COO(ub.reshape(1, -1), ubv.reshape((ub.size,) + tuple(P.shape[1:])), P.shape, True)
            state["momentum_buffer"] = _dispatch.wrap(pl, p.dtype, p.device, sparse_coo)
