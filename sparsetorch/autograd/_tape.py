"""The tape's bookkeeping (floor 4): edges, saved tensors, version counters, views, in-place
history (CopySlices), tensor hooks and ``retain_grad``.

``_dispatch`` records an op's node with these pieces; the engine and ``autograd.Function`` use
them too. Everything here works on Tensor fields and Tensor methods; nothing imports an op module.
"""

import weakref

from .. import _dtype as D
from .._backend import get_backend, writeable
from .._layout import strided
from .._tensor import Tensor, cast_payload, wrap
from .grad_mode import no_grad
from .graph import AccumulateGrad, Node, RemovableHandle, _init_node

__all__ = []

_new = object.__new__


# ---- graph nodes of table ops ----

class OpNode(Node):
    """Backward node of a table op: applies the op's formulas to the incoming gradient.

    ``saved`` is a tuple of saved values and ``calls`` one ``(formula, argument positions)`` per
    input (None where no gradient is needed), both from the op's plan for the inputs that need a
    gradient (``_dispatch.record``). A formula reads its arguments from ``(grad, *saved)``.
    """

    __slots__ = ("calls", "saved", "meta")
    op = None

    def apply(self, grad_outputs):
        if self._released:
            raise RuntimeError(RELEASED_MESSAGE)
        grad = grad_outputs[0]
        # torch's complex convention: a formula written as for real inputs (grad * f'(z)) gives
        # dL/dz* as conj(f(conj(grad))) = grad * conj(f'(z)); see defop's ``holomorphic``
        flip = grad is not None and grad.dtype.is_complex and self.op.holomorphic
        env = [grad.conj() if flip else grad]
        saved = self.saved
        if saved:
            for v in saved:
                c = v.__class__
                env.append(v.unpack(self) if c is SavedTensor or c is SavedResult else v)
        get = env.__getitem__
        out = []
        for c in self.calls:
            if c is None:
                out.append(None)
            else:
                g = c[0](*map(get, c[1]))
                out.append(g.conj() if flip and isinstance(g, Tensor) else g)
        return out

    def release(self):
        # a node that saved nothing (a cast, an addition) runs again, as in torch: autocast's
        # cached weight casts are backpropagated through once per iteration of a region
        self._released = bool(self.saved)
        self.saved = None


RELEASED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling backward."
)


# ---- edges and saved tensors ----

def edge(t):
    """(node, input_nr) that the gradient of tensor ``t`` flows into."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._extra.get("output_nr", 0) if t._extra else 0)
    if t._rg:
        return (grad_accumulator(t), 0)
    return (None, 0)


def grad_accumulator(t):
    ex = t._extra
    if ex is None:
        ex = t._extra = {}
    acc = ex.get("acc")
    if acc is None:
        acc = ex["acc"] = AccumulateGrad(t)
    return acc


_NO_EDGE = (None, 0)


class SavedTensor:
    """An input saved for backward, with the version it had (in-place changes are detected)."""

    __slots__ = ("tensor", "version")

    def __init__(self, t):
        self.tensor = t
        self.version = t._vc[0] if t._vc else 0

    def unpack(self, node):
        t = self.tensor
        v = t._vc[0] if t._vc else 0
        if v != self.version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.dtype.name} tensor of shape {list(t.shape)}], which is "
                f"used by {node.name()}; is at version {v}; expected version {self.version} "
                "instead. Hint: use .clone() before the in-place op, or avoid the in-place op."
            )
        return t


class SavedResult:
    """An op's output saved by its own node; unpacked as a tensor whose grad_fn is that node."""

    __slots__ = ("data", "dtype", "device", "layout", "vc", "version")

    def __init__(self, t):
        self.data = t._data
        self.dtype = t.dtype
        self.device = t.device
        self.layout = t.layout
        if t._vc is None:
            t._vc = [0]
        self.vc = t._vc
        self.version = t._vc[0]

    def unpack(self, node):
        if self.vc[0] != self.version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: the output of {node.name()} is at version {self.vc[0]}; "
                f"expected version {self.version} instead. Hint: use .clone() before the in-place op."
            )
        t = wrap(self.data, self.dtype, self.device, self.layout)
        t._rg = True
        t.grad_fn = node
        return t


def save_tensor(t):
    """``SavedTensor(t)`` without the class call (the recorder's hot path)."""
    s = _new(SavedTensor)
    s.tensor = t
    vc = t._vc
    s.version = vc[0] if vc else 0
    return s


def save_result(t):
    """``SavedResult(t)`` without the class call (the recorder's hot path)."""
    s = _new(SavedResult)
    s.data = t._data
    s.dtype = t.dtype
    s.device = t.device
    s.layout = t.layout
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    s.vc = vc
    s.version = vc[0]
    return s


def unpack_saved(node):
    """The values an ``OpNode`` saved, unpacked (version-checked), in its save order."""
    return [v.unpack(node) if v.__class__ is SavedTensor or v.__class__ is SavedResult else v
            for v in node.saved]


# ---- views ----

def link_view(result, base, op, params, replay):
    """Link a view op's ``result`` to its ``base``: shared version counter, and a ``view_fn``
    that rebuilds the view from a tensor shaped like the base (for rebasing after in-place
    writes) by ``replay(op, (t,), params, dtype)`` (the dispatcher's ``call``, passed in)."""
    if base._vc is None:
        base._vc = [0]
    result._vc = base._vc
    bex = base._extra
    root = bex.get("base") if bex else None

    # a view that changes the dtype (view_as_real, real, imag) replays with its result dtype
    out_dt = result.dtype if result.dtype is not base.dtype else None

    def this_fn(t, _op=op, _params=params, _dt=out_dt):
        return replay(_op, (t,), _params, _dt)

    if root is None:
        result._extra = {"base": base, "view_fn": this_fn}
    else:
        parent_fn = bex["view_fn"]
        result._extra = {"base": root, "view_fn": lambda t: this_fn(parent_fn(t))}


def view_info(t):
    ex = t._extra
    if ex is None:
        return None, None
    return ex.get("base"), ex.get("view_fn")


# ---- in-place history ----

def check_inplace_allowed(t, name):
    if t._rg and t.grad_fn is None:
        raise RuntimeError(
            f"{name}(): a leaf Variable that requires grad is being used in an in-place operation. "
            "Wrap it in `with torch.no_grad():` (e.g. for a parameter update), or clone it first."
        )
    base, _ = view_info(t)
    if base is not None and t._extra.get("custom_view"):  # set by autograd.Function outputs
        raise RuntimeError(f"{name}(): {t._extra['custom_view']}")
    if base is not None and base._rg and base.grad_fn is None:
        raise RuntimeError(
            f"{name}(): a view of a leaf Variable that requires grad is being used in an in-place "
            "operation. Wrap it in `with torch.no_grad():` or clone the leaf first."
        )


def snapshot(t):
    """A tensor with ``t``'s autograd identity but a private copy of its data.

    The in-place op's node may save its ``self`` input; the snapshot keeps that saved value
    intact after the payload of ``t`` is overwritten.
    """
    s = wrap(t._data.copy(), t.dtype, t.device, t.layout)
    s._rg = t._rg
    s.grad_fn = t.grad_fn
    if t._extra:
        s._extra = {k: v for k, v in t._extra.items() if k in ("acc", "output_nr")}
    return s


def assign_into(self, r, name):
    if self.layout is not r.layout:
        raise RuntimeError(
            f"{name}(): the result has layout {r.layout.name} but self has layout "
            f"{self.layout.name}; use the out-of-place op instead."
        )
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"{name}(): output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    if r.dtype is not self.dtype and not D.can_cast(r.dtype, self.dtype):
        raise RuntimeError(
            f"{name}(): result type {r.dtype.name} can't be cast to the desired output type "
            f"{self.dtype.name}"
        )
    if self.layout is strided:
        be = get_backend(self.device)
        try:
            if not be.on_host and not writeable(self._data):
                raise ValueError("expanded view")  # CuPy has no read-only flag to raise for us
            be.xp.copyto(self._data, r._data, casting="unsafe")
        except ValueError:  # read-only payload: an expanded view (its elements share memory)
            raise RuntimeError(
                f"{name}(): unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before performing "
                "the operation."
            ) from None
    else:
        self._data = cast_payload(r, self.dtype)
    bump_version(self)


def bump_version(t):
    if t._vc is None:
        t._vc = [1]
    else:
        t._vc[0] += 1


def rebase_history(self, r):
    """After ``self`` was overwritten by ``r``, make ``self``'s graph history that of ``r``."""
    base, view_fn = view_info(self)
    if base is None:
        take_history(self, r)
        return
    # In-place on a view: the base changed too (PyTorch's CopySlices).
    new_base = copy_slices(base, r, view_fn)
    take_history(base, new_base)
    take_history(self, view_fn(base))


def take_history(t, src):
    """``t`` takes ``src``'s place in the graph: its grad_fn AND output_nr (a stale output_nr
    from an earlier multi-output node would point past the new node's outputs)."""
    t.grad_fn = src.grad_fn
    t._rg = True
    nr = src._extra.get("output_nr", 0) if src._extra else 0
    if nr:
        if t._extra is None:
            t._extra = {}
        t._extra["output_nr"] = nr
    elif t._extra:
        t._extra.pop("output_nr", None)
    if t._extra and t._extra.get("retains_grad"):  # retain_grad follows t to its new grad_fn
        retain_grad(t)


class CopySlices(Node):
    """The history of a base written through a view (torch's CopySlices).

    When an in-place op writes through a view ``v = view_fn(base)``, the base changed too: the
    new base is "the old base with the view region replaced by ``src``" (``src`` = the in-place
    op's result). The memory is already updated, so only the gradient routing is new: the old
    base gets ``grad`` with the view region zeroed, ``src`` gets ``view_fn(grad)``.
    """

    __slots__ = ("view_fn", "meta")

    def apply(self, grad_outputs):
        if self._released:
            raise RuntimeError(RELEASED_MESSAGE)
        grad = grad_outputs[0]
        view_fn = self.view_fn
        (b, _), (s, _) = self.next_functions
        return [None if b is None else _outside_view(grad, view_fn),
                None if s is None else view_fn(grad)]

    def release(self):
        self._released = True
        self.view_fn = None


def copy_slices(base, src, view_fn):
    """``base`` (already holding ``src`` in its ``view_fn`` region) with CopySlices history; the
    result shares ``base``'s payload."""
    if base.layout is not strided or src.layout is not strided:
        raise NotImplementedError(
            f"copy_slices: not implemented for layouts ({base.layout.name}, {src.layout.name}). "
            f"Convert the sparse input with .to_dense() first."
        )
    result = wrap(base._data, base.dtype, base.device, strided)
    node = _new(CopySlices)
    _init_node(node, (edge(base) if base._rg else _NO_EDGE, edge(src) if src._rg else _NO_EDGE))
    node.view_fn = view_fn
    node.meta = [(base._data.shape, base.dtype, strided, None), (src._data.shape, src.dtype, strided, None)]
    result._rg = True
    result.grad_fn = node
    return result


def _outside_view(grad, view_fn):
    """``grad`` with the region that ``view_fn`` selects zeroed."""
    if grad.dtype.is_complex:
        return _complex_outside(grad, view_fn)
    mask = grad.new_zeros(tuple(grad.shape), dtype=D.bool)
    with no_grad():
        region = view_fn(mask)
    region._data[...] = True  # region shares mask's memory (view_fn only builds views)
    return grad.masked_fill(mask, 0.0)


def _complex_outside(grad, view_fn):
    """Per real component: a view may select only the real or imaginary parts (``x.real``,
    ``x.imag``). ``keep_re`` is 1 where the real part lies outside the view, ``keep_im`` likewise."""
    shape = tuple(grad.shape)
    re = grad.new_ones(shape)
    im = grad.new_full(shape, 1j)
    with no_grad():
        view_fn(re)._data[...] = 0
        view_fn(im)._data[...] = 0
    keep_re, keep_im = re.real * 0.5, im.imag * 0.5
    conj = grad.conj()
    return (grad + conj) * keep_re + (grad - conj) * keep_im


# ---- tensor hooks and retain_grad ----

def _hook_table(t):
    """The ordered hook dict of tensor ``t``, installed as one pre-hook on its grad node.

    Tensor hooks run in registration order on the total gradient of ``t``; a retained grad
    (``retain_grad``) is stored after all of them, as in torch.
    """
    if t.grad_fn is not None:
        node, nr = t.grad_fn, t.output_nr
    else:
        node, nr = grad_accumulator(t), 0
    if t._extra is None:
        t._extra = {}
    entry = t._extra.get("hooks")
    if entry is not None and entry[0] is node:
        return entry[1]
    hooks = {}
    ref = weakref.ref(t)

    def prehook(grads):
        g = grads[nr]
        if g is None:
            return None
        g0 = g
        for h in list(hooks.values()):
            r = h(g)
            if r is not None:
                if r.shape != g.shape:
                    raise RuntimeError(
                        f"hook '{getattr(h, '__name__', 'hook')}' has changed the size of value"
                    )
                g = r
        tr = ref()
        if tr is not None and tr.grad_fn is node and tr._extra.get("retains_grad"):
            _retain(tr, g)
        if g is g0:
            return None
        grads = list(grads)
        grads[nr] = g
        return tuple(grads)

    node.register_prehook(prehook)
    t._extra["hooks"] = (node, hooks)
    return hooks


def _retain(t, g):
    if t.grad is None:
        t.grad = g.clone()  # under create_graph grad mode is on: the retained grad has a graph
    else:
        t.grad = t.grad + g


def register_tensor_hook(t, hook):
    """``t.register_hook(hook)``: ``hook(grad)`` runs when the gradient of ``t`` is computed and
    may return a replacement. Returns a handle whose ``remove()`` unregisters it."""
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not callable(hook):
        raise TypeError(f"register_hook(): hook must be callable, got {type(hook).__name__}")
    hooks = _hook_table(t)
    handle = RemovableHandle(hooks)
    hooks[handle._key] = hook
    return handle


def retain_grad(t):
    """``t.retain_grad()``: populate ``.grad`` of a non-leaf tensor in backward (leaf: no-op)."""
    if t.grad_fn is None:
        if not t._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    _hook_table(t)
    t._extra["retains_grad"] = True
