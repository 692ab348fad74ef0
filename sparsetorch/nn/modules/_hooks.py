"""Module hooks: RemovableHandle, the global hook tables, and full backward hooks made of identity
autograd Functions around a module's inputs and outputs."""

from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.function import Function

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """A handle whose ``remove()`` deletes a hook from the dict it was registered in."""

    _next_id = 0

    def __init__(self, *dicts):
        self.hooks_dicts = dicts
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        for d in self.hooks_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()



# ---- full backward hooks: identity Functions around inputs and outputs ----

class _HookState:
    __slots__ = ("called", "grad_output", "module", "n_in", "n_args", "positions")

    def __init__(self, module, n_in):
        self.module = module
        self.grad_output = None
        self.n_in = n_in
        self.called = False
        self.n_args = 0  # positional arguments of the call: grad_input has one entry per argument
        self.positions = ()  # which of them are the Tensors routed through _BackwardHookIn


def _run_backward_hooks(state, grad_input):
    gi = grad_input
    for hook in list(state.module._backward_hooks.values()):
        r = hook(state.module, gi, state.grad_output)
        if r is not None:
            if not isinstance(r, tuple):
                r = (r,)
            if len(r) != len(gi):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(r)}, "
                    f"but expected {len(gi)}")
            gi = r
    return gi


class _BackwardHookOut(Function):
    @staticmethod
    def forward(ctx, state, *outs):
        ctx.state = state
        return tuple(o.view_as(o) for o in outs)

    @staticmethod
    def backward(ctx, *grads):
        st = ctx.state
        st.grad_output = grads
        if st.n_in == 0:  # no input requires grad: the hooks see one None per argument
            _run_backward_hooks(st, (None,) * st.n_args)
        return (None,) + grads


class _BackwardHookIn(Function):
    @staticmethod
    def forward(ctx, state, *ins):
        ctx.state = state
        return tuple(i.view_as(i) for i in ins)

    @staticmethod
    def backward(ctx, *grads):
        # torch: grad_input has one entry per positional argument, None where it isn't a Tensor
        st = ctx.state
        full = [None] * st.n_args
        for i, g in zip(st.positions, grads):
            full[i] = g
        full = _run_backward_hooks(st, tuple(full))
        return (None,) + tuple(full[i] for i in st.positions)


def _wrap_tensors(fn_cls, state, obj):
    """Route the Tensors of ``obj`` (a tensor or tuple) through ``fn_cls`` when one of them
    requires grad (all of them, as torch does: the hooks then see a gradient for every Tensor)."""
    single = isinstance(obj, Tensor)
    items = (obj,) if single else (tuple(obj) if isinstance(obj, (tuple, list)) else None)
    if items is None:
        return obj, 0
    if not any(isinstance(t, Tensor) and t.requires_grad for t in items):
        return obj, 0
    idx = [i for i, t in enumerate(items) if isinstance(t, Tensor)]
    if fn_cls is _BackwardHookIn:
        state.n_args = len(items)
        state.positions = tuple(idx)
    new = fn_cls.apply(state, *[items[i] for i in idx])
    if isinstance(new, Tensor):
        new = (new,)
    out = list(items)
    for i, t in zip(idx, new):
        out[i] = t
    if single:
        return out[0], len(idx)
    if isinstance(obj, tuple):
        out = type(obj)(*out) if hasattr(obj, "_fields") else type(obj)(out)  # namedtuples too
    return out, len(idx)
