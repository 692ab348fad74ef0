"""Custom differentiable operations (``autograd.Function``) and tensor hooks.

A ``Function`` subclass gets its own backward-node class, ``<Name>Backward``, at class creation.
``apply`` makes one instance of it; that instance is both the ``ctx`` the forward sees and the
``grad_fn`` of the outputs (as in PyTorch, where ``ctx`` is the ``BackwardCFunction`` node).
"""

import functools
import inspect
import weakref

from .. import _torch_warnings
from .._backend import get_backend
from .._layout import strided
from .._tensor import Tensor, wrap
from . import _tape
from ._tape import register_tensor_hook, retain_grad  # autograd.function's names (see __all__)
from .grad_mode import GRAD_ENABLED
from .graph import Node, _init_node

__all__ = [
    "Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
    "register_tensor_hook", "retain_grad", "InplaceFunction", "Variable",
]


# ---- ctx ----

class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward hands to backward.

    Arbitrary attributes may be set on it (``ctx.constant = 3``). Tensors must go through
    :meth:`save_for_backward`, which checks on unpacking that they were not modified in place.
    """

    __slots__ = ()  # instances are Node subclasses that carry a __dict__

    def save_for_backward(self, *tensors):
        """Save tensors (or ``None``) for backward; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Accepted for API compatibility (sparsetorch has no forward-mode AD)."""
        self._fn_saved_fwd = tensors

    def mark_dirty(self, *args):
        """Mark tensors that forward modified in place (they must be returned as outputs)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs as non-differentiable: they get ``requires_grad=False``; their grads in
        backward are zeros (or ``None`` without grad materialization)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """If True (the default), ``None`` output grads reach backward as zero tensors."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to :meth:`save_for_backward`, version-checked."""
        d = self.__dict__
        if "_fn_saved" not in d:  # inside forward, or nothing was saved
            return tuple(d.get("to_save", ()))
        saved = d["_fn_saved"]
        if saved is None:
            raise RuntimeError(_tape.RELEASED_MESSAGE)
        return tuple(None if s is None else s.unpack(self) for s in saved)

    saved_variables = saved_tensors


# ---- the backward node ----

class BackwardCFunction(FunctionCtx, Node):
    """Base of every ``<Name>Backward`` node: calls the Function's ``backward`` with ``self``."""

    _custom = True
    _forward_cls = None

    def apply(self, grad_outputs):
        cls = self._forward_cls
        grads = list(grad_outputs)
        if self.materialize_grads:
            for i, g in enumerate(grads):
                meta = self._fn_out_meta[i]
                if g is None and meta is not None:
                    grads[i] = _zeros(meta)
        backward = cls.backward if cls.backward is not Function.backward else cls.vjp
        result = backward(self, *grads)
        return self._check_grads(result)

    def _check_grads(self, result):
        name = self.name()
        if not isinstance(result, tuple):
            result = (result,)
        n = self._fn_nargs
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(result)})"
                )
        positions = self._fn_tensor_pos
        for p, g in enumerate(result):
            if g is not None and p not in positions:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position "
                    f"{p + 1}, but the corresponding forward input was not a Variable"
                )
        out = []
        for k, (p, meta) in enumerate(zip(positions, self._fn_in_meta)):
            g = result[p]
            if g is None or self.next_functions[k][0] is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            shape, dtype = meta
            if g.shape != shape:
                if not _expandable(shape, g.shape):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {k} - got "
                        f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                    )
                from .engine import sum_to

                g = sum_to(g, shape)
            if g.dtype is not dtype:
                g = g.to(dtype)
            out.append(g)
        return out

    def release(self):
        if "_fn_saved" in self.__dict__:
            self._fn_saved = None
        self._released = True


def _zeros(meta):
    shape, dtype, device = meta
    return wrap(get_backend(device).xp.zeros(shape, dtype.np), dtype, device, strided)


def _expandable(shape, gshape):
    """Whether a tensor of ``shape`` broadcasts to ``gshape`` (the grad can be summed back)."""
    if len(shape) > len(gshape):
        return False
    for a, b in zip(reversed(shape), reversed(gshape)):
        if a != b and a != 1:
            return False
    return True


# ---- Function ----

class Function(FunctionCtx):
    """Base class for custom differentiable operations.

    Subclass it and define static ``forward`` and ``backward``; call it with ``.apply``::

        class Exp(Function):
            @staticmethod
            def forward(ctx, i):
                result = i.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                result, = ctx.saved_tensors
                return grad_output * result

        y = Exp.apply(x)

    ``forward`` may instead take only the inputs, with a static
    ``setup_context(ctx, inputs, output)`` that fills ``ctx``. ``backward`` returns one gradient
    (or ``None``) per forward input.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {
            "_forward_cls": cls, "__module__": cls.__module__, "__qualname__": name,
        })

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (runs under ``no_grad``)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: fill ``ctx`` from the inputs and output (then ``forward`` takes no ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradient of the loss w.r.t. each forward input, given those w.r.t. each output."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, if grad mode is on and an input requires grad, record the node."""
        node_cls = cls.__dict__.get("_backward_cls")
        if node_cls is None:
            raise RuntimeError("Function.apply must be called on a subclass of Function")
        setup_style = cls.setup_context is not Function.setup_context
        if kwargs or setup_style:
            args = _bind(cls.forward, args, kwargs, skip_ctx=not setup_style)
        ctx = object.__new__(node_cls)
        needs = tuple(isinstance(a, Tensor) and a._rg for a in args)
        ctx.needs_input_grad = needs
        ctx.materialize_grads = True
        recording = GRAD_ENABLED.get() and any(needs)
        token = GRAD_ENABLED.set(False)
        try:
            if setup_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            GRAD_ENABLED.reset(token)
        return _finish(ctx, args, output, recording)


_SIGNATURES = weakref.WeakKeyDictionary()  # forward -> inspect.Signature (slow to build)


def _bind(forward, args, kwargs, skip_ctx):
    """Keyword arguments of ``apply`` -> positional ones, defaults filled in (as torch does)."""
    sig = _SIGNATURES.get(forward)
    if sig is None:
        sig = _SIGNATURES[forward] = inspect.signature(forward)
    bound = sig.bind(None, *args, **kwargs) if skip_ctx else sig.bind(*args, **kwargs)
    bound.apply_defaults()
    out = bound.args
    return tuple(out[1:]) if skip_ctx else tuple(out)


def _finish(ctx, args, output, recording):
    """Wire the outputs to the node ``ctx``: grad_fn, output_nr, aliases, dirty, saved tensors."""
    positions = []
    nexts = []
    in_meta = []
    for p, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(p)
            in_meta.append((a.shape, a.dtype))
            nexts.append(_tape.edge(a) if recording and a._rg else (None, 0))
    _init_node(ctx, tuple(nexts))
    ctx._fn_nargs = len(args)
    ctx._fn_tensor_pos = tuple(positions)
    ctx._fn_in_meta = in_meta

    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    ctx.num_outputs = len(outputs)
    d = ctx.__dict__
    dirty = {id(t) for t in d.get("dirty_tensors", ())}
    nondiff = {id(t) for t in d.get("non_differentiable", ())}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    out_meta = []
    new_outputs = []
    aliases = {}
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            out_meta.append(None)
            new_outputs.append(o)
            continue
        out_meta.append((o.shape, o.dtype, o.device))
        differentiable = (
            recording and id(o) not in nondiff
            and (o.dtype.is_floating_point or o.dtype.is_complex)
        )
        if id(o) in dirty:
            if recording:
                _rebase_dirty(o, ctx, i, differentiable)
            _tape.bump_version(o)
        elif differentiable:
            if id(o) in input_ids or o._rg or o.grad_fn is not None:
                a = _alias(o)  # never rewrite the history of a tensor the caller holds
                aliases[id(o)] = a
                o = a
            _set_history(o, ctx, i)
            if o._extra and o._extra.get("base") is not None:
                o._extra["custom_view"] = _CUSTOM_VIEW.format(i=i, name=type(ctx).__name__[:-8])
        new_outputs.append(o)
    ctx._fn_out_meta = out_meta
    if dirty:
        returned = {id(o) for o in outputs}
        if not dirty <= returned:
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the Function."
            )
    to_save = d.pop("to_save", None)
    if to_save is not None:
        ctx._fn_saved = [
            None if t is None else _tape.SavedTensor(aliases.get(id(t), t)) for t in to_save
        ]
    if is_tuple:
        return tuple(new_outputs)
    return new_outputs[0]


_CUSTOM_VIEW = (
    "Output {i} of {name} is a view and is being modified inplace. This view was created inside "
    "a custom Function (or because an input was returned as-is) and the autograd logic to handle "
    "view+inplace would override the custom backward associated with the custom Function, "
    "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
    "output of the custom Function."
)


def _alias(t):
    """A new tensor object sharing ``t``'s data and version counter (torch returns a view)."""
    a = t.detach()
    ex = t._extra
    if ex and ex.get("base") is not None:
        a._extra = {"base": ex["base"], "view_fn": ex["view_fn"]}
    else:
        a._extra = {"base": t, "view_fn": _identity_view}
    return a


def _identity_view(t):
    return t.view_as(t)


def _set_history(t, node, nr):
    t._rg = True
    t.grad_fn = node
    if nr:
        if t._extra is None:
            t._extra = {}
        t._extra["output_nr"] = nr
    elif t._extra and "output_nr" in t._extra:
        del t._extra["output_nr"]


def _rebase_dirty(t, node, nr, differentiable):
    """An input that forward modified in place now carries this node's history."""
    _tape.check_inplace_allowed(t, node._forward_cls.__name__)
    if not differentiable:
        return
    base, _ = _tape.view_info(t)
    if base is None:
        _set_history(t, node, nr)
        return
    r = wrap(t._data, t.dtype, t.device, t.layout)
    _set_history(r, node, nr)
    _tape.rebase_history(t, r)


# ---- once_differentiable ----

class _DelayedErrorNode(Node):
    """Raises when someone differentiates through a ``@once_differentiable`` backward."""

    __slots__ = ()

    def __init__(self, nexts):
        _init_node(self, nexts)

    def apply(self, grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs under ``no_grad``,
    and differentiating its result (double backward) raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        token = GRAD_ENABLED.set(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            GRAD_ENABLED.reset(token)
        if not GRAD_ENABLED.get():
            return outputs
        edges = tuple(_tape.edge(a) for a in args if isinstance(a, Tensor) and a._rg)
        if not edges:
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        wrapped = []
        for o in outs:
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = o.detach()
                o._rg = True
                o.grad_fn = _DelayedErrorNode(edges)
            wrapped.append(o)
        return tuple(wrapped) if is_tuple else wrapped[0]

    return wrapper


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (kept for compatibility with old torch code)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# ---- Variable (legacy) ----

class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Legacy ``Variable(tensor, requires_grad=False)``: Variables and Tensors were merged, so
    this returns a new tensor sharing ``tensor``'s data (and ``isinstance(t, Variable)`` holds
    for every tensor), as in torch."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            _torch_warnings.volatile()
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t
