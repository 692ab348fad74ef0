"""Optimizer: the base class of all optimizers (torch.optim.Optimizer's contract).

Optimizers update parameters in place on their payload arrays (no autograd graph is built).
Every optimizer accepts sparse gradients (COO, hybrid COO row-sparse such as Embedding(sparse=True)
produces, and 2-D CSR). ``sparse_mode`` chooses the semantics for them:

- ``"exact"`` (default): the result equals densifying the gradient first (so Adam's moments decay
  on every row). The dense gradient is only built where the update needs it.
- ``"lazy"``: only the rows present in the gradient are updated -- parameter, state and weight decay
  alike (TensorFlow's LazyAdam semantics). Rows never touched keep their parameter and state.

Duplicated indices in a gradient are summed (coalesced) before any non-linear update.
Sparse (COO/CSR) parameters whose gradient has their pattern (masked gradients, as SparseLinear's)
are updated on their stored values. torch's ``foreach``/``fused``/``capturable``/``differentiable``
arguments are accepted and kept in the groups, and do not change the computation.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from .. import _dispatch
from .._dtype import float32
from .._layout import strided
from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from . import _sparse, _warm

__all__ = ["Optimizer", "required"]

# What an optimizer's ``params`` may be (torch.optim.optimizer.ParamsT): tensors, parameter-group
# dicts, or (name, tensor) pairs as from ``named_parameters()``.
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


class _RequiredParameter:
    """Singleton for a default that a parameter group must supply."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _check_mode(mode):
    if mode not in ("exact", "lazy"):
        raise ValueError(f"Invalid sparse_mode: {mode!r}; expected 'exact' or 'lazy'")
    return mode


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of :class:`Tensor` s or :class:`dict` s. Specifies what
            Tensors should be optimized.
        defaults (dict): a dict containing default values of optimization options (used when a
            parameter group doesn't specify them).
    """

    # state entries that hold one value per row (dim 0) of the parameter, not one per element
    _row_state: tuple[str, ...] = ()
    defaults: dict[str, Any]
    state: defaultdict[Tensor, dict[str, Any]]
    param_groups: list[dict[str, Any]]

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._step_pre_hooks = OrderedDict()
        self._step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {type(params).__module__}.{type(params).__name__}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        # the cached numba kernels of the first steps load now, and the collector settles
        _warm.prepare(type(self), {p.dtype.np for g in self.param_groups for p in g["params"]
                                   if p.device.type == "cpu"})

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_step_post_hooks", OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}"
            for key in sorted(group.keys()):
                if key != "params":
                    s += "\n" + f"    {key}: {group[key]}"
        return s + "\n)"

    # ---- parameter groups ----
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        r"""Add a param group to the :class:`Optimizer` s `param_groups`.

        Args:
            param_group (dict): Specifies what Tensors should be optimized along with group
                specific optimization options.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        named = [isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                 for p in param_group["params"]]
        if named and all(named):
            # named_parameters(): keep the names, as torch's "param_names"
            param_group["param_names"] = [n for n, _ in param_group["params"]]
            param_group["params"] = [p for _, p in param_group["params"]]
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__module__}.{type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if "sparse_mode" in param_group:
            _check_mode(param_group["sparse_mode"])
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients ----
    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Reset the gradients of all optimized :class:`Tensor` s.

        Args:
            set_to_none (bool): instead of setting to zero, set the grads to None. Default: ``True``
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ---- hooks ----
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> Any:
        """Register a hook ``hook(optimizer, args, kwargs)`` run before each ``step``."""
        return _add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> Any:
        """Register a hook ``hook(optimizer, args, kwargs)`` run after each ``step``."""
        return _add_hook(self._step_post_hooks, hook)

    # ---- stepping ----
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        r"""Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = None
        if closure is not None:
            with _gm.enable_grad():
                loss = closure()
        for hook in list(self._step_pre_hooks.values()):
            hook(self, (), {})
        with _gm.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.layout is strided:
                        self._update(p, p.grad, group, self.state[p])
                    else:
                        self._update_sparse_param(p, group)
        for hook in list(self._step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def _update(self, p, grad, group, state):
        """Update ``p`` from ``grad``: the dense path, or for a sparse gradient the exact or lazy
        row path (``sparse_mode``). Subclasses supply ``_init_state`` and ``_dense`` and may
        override ``_exact`` / ``_lazy`` with cheaper row updates."""
        P = _sparse.param_array(p)
        if not state:
            state["step"] = _zero_step()
            self._init_state(p, group, state)
        t = self._bump_step(state)
        S = {k: v._data for k, v in state.items() if k != "step" and isinstance(v, Tensor)}
        if grad.layout is strided:
            self._dense(P, grad._data, S, group, t)
        else:
            self._sparse_update(P, grad, S, group, t)
        _dispatch.bump_version(p)

    def _update_sparse_param(self, p, group):
        """A sparse (COO/CSR) parameter whose gradient has its pattern (masked semantics, as
        SparseLinear's): the update runs on the stored values, the state is shaped like them."""
        vals, gvals = _sparse.masked_values(p, p.grad)
        pv = _dispatch.wrap(vals, p.dtype, p.device, strided)
        gv = _dispatch.wrap(gvals, p.dtype, p.device, strided)
        state = self.state[p]
        self._update(pv, gv, group, state)
        if not state:
            self.state.pop(p, None)
        _dispatch.bump_version(p)

    def _sparse_update(self, P, grad, S, group, t):
        rg = _sparse.row_grad(grad, tuple(P.shape))
        if rg is not None:
            rows, vals, nrows = rg
            P2 = _sparse.as_rows(P, nrows)
            S2 = {k: (a if k in self._row_state else _sparse.as_rows(a, nrows)) for k, a in S.items()}
            if P2 is not None and all(a is not None for a in S2.values()):
                if vals.dtype != P2.dtype:
                    vals = vals.astype(P2.dtype)
                if group.get("sparse_mode", "exact") == "lazy":
                    self._lazy(P2, rows, vals, S2, group, t)
                else:
                    self._exact(P2, rows, vals, S2, group, t)
                return
        self._dense(P, _sparse.dense_grad(grad, None), S, group, t)

    def _init_state(self, p, group, state):
        raise NotImplementedError

    def _dense(self, P, G, S, group, t):
        raise NotImplementedError

    def _exact(self, P2, rows, vals, S2, group, t):
        """Exact sparse update: the dense update on the densified gradient (override where the
        math allows touching fewer rows)."""
        G = _dense_like(P2)
        G[rows] = vals
        self._dense(P2, G, S2, group, t)

    def _lazy(self, P2, rows, vals, S2, group, t):
        """Lazy sparse update: the dense update applied to the gathered rows, scattered back."""
        Pr = P2[rows]
        Sr = {k: a[rows] for k, a in S2.items()}
        self._dense(Pr, vals, Sr, group, t)
        P2[rows] = Pr
        for k, a in S2.items():
            a[rows] = Sr[k]

    # ---- helpers for subclasses ----
    def _new_state(self, p, fill=0.0, shape=None):
        """A state tensor like ``p`` (dense, contiguous), filled with ``fill``."""
        xp = _sparse.backend(p).xp
        arr = _sparse.param_array(p)
        shape = arr.shape if shape is None else shape
        # zeros: calloc'd pages the OS zeroes on first touch, so a sparse update touches (and
        # pays for) only the rows it updates (np.full writes the whole table in the first step)
        a = xp.zeros(shape, dtype=arr.dtype) if fill == 0 else xp.full(shape, fill, dtype=arr.dtype)
        return _dispatch.wrap(a, p.dtype, p.device, strided)

    @staticmethod
    def _bump_step(state):
        """Increase ``state['step']`` (a 0-d float32 tensor, as torch keeps it); return the count."""
        st = state.get("step")
        if st is None:
            st = state["step"] = _zero_step()
        if isinstance(st, Tensor):
            a = st._data
            st._data = _xp_of(a).asarray(a + 1, dtype=a.dtype)
            return float(st._data)
        state["step"] = st + 1
        return float(st + 1)

    # ---- state dicts ----
    def state_dict(self) -> dict[str, Any]:
        r"""Return the state of the optimizer as a :class:`dict`.

        ``state`` maps parameter indices to their per-parameter state; ``param_groups`` holds the
        groups' options, with ``params`` replaced by the indices of the group's parameters.
        Tensors are referenced, not copied (as in torch): deepcopy the result to snapshot it.
        """
        mapping = {}
        start = 0
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for i, p in enumerate(g["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in g["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        r"""Load the optimizer state.

        Args:
            state_dict (dict): optimizer state. Should be an object returned from a call to
                :meth:`state_dict`.

        Floating-point state tensors are cast to their parameter's dtype and device (``step``
        is kept as is) and copied, so the loaded optimizer never aliases ``state_dict``.
        """
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = {key: self._cast(p, key, val) for key, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def _cast(self, p, key, value):
        if not isinstance(value, Tensor):
            return value
        if key == "step":
            return value.clone()
        if p.layout is strided and value.ndim > 0:
            want = (p.shape[0],) if key in self._row_state else tuple(p.shape)
            if tuple(value.shape) != want:
                raise ValueError(
                    f"loaded state dict has a state tensor '{key}' of shape {list(value.shape)} "
                    f"for a parameter of shape {list(p.shape)} (expected {list(want)}); the state "
                    "dict belongs to another model or optimizer")
        if value.is_floating_point():
            return value.to(dtype=p.dtype, device=p.device).clone()
        return value.to(device=p.device).clone()


def _zero_step():
    """torch keeps the step count as a 0-d float32 CPU tensor."""
    return _dispatch.wrap(_sparse.CPU.xp.asarray(0.0, dtype=float32.np), float32,
                          _sparse.CPU_DEVICE, strided)


def _dense_like(a):
    return _xp_of(a).zeros(a.shape, dtype=a.dtype)


def _xp_of(a):
    """The array module of ``a`` (numpy or cupy)."""
    import sys

    return sys.modules[type(a).__module__.split(".")[0]]


def _add_hook(table, hook):
    key = object()
    table[key] = hook

    class _Handle:
        def remove(self):
            table.pop(key, None)

    return _Handle()
