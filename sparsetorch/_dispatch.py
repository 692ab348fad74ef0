"""The op table: each op is declared once (kernels per layout tuple, derivatives, traits).

This module is the ONE place that picks a kernel, wraps payloads into Tensors, records graph
nodes, and derives the in-place (``op_``) and ``out=`` variants from the functional op.

Hot-path rules (PERF-NOTES.md, spike 1): no keyword arguments on the inner path, dtype identity
checks, the all-strided kernel cached on the op object, outputs built with ``object.__new__``.
"""

import inspect

from . import _dtype as D
from ._backend import CPU, get_backend
from ._device import CPU as CPU_DEVICE
from ._layout import layout, sparse_coo, sparse_csr, strided
from ._tensor import Tensor, cast_payload, wrap
from .autograd.grad_mode import GRAD_ENABLED
from .autograd import profiler as _profiler  # _profiler.ACTIVE: None unless profiling
# the tape's bookkeeping lives in autograd/_tape.py (floor 4); these names stay importable from
# here for the op modules and libraries that use them
from .autograd._tape import (  # noqa: F401
    RELEASED_MESSAGE, OpNode, SavedResult, SavedTensor, _NO_EDGE, assign_into, bump_version,
    check_inplace_allowed, edge, grad_accumulator, link_view, rebase_history, save_result,
    save_tensor, snapshot, take_history, unpack_saved, view_info,
)

__all__ = ["Op", "defop", "call", "wrap", "record_if_grad", "SCALAR"]

SCALAR = layout("scalar")  # dispatch-key stand-in for a Python number operand
_new = object.__new__
_grad_enabled = GRAD_ENABLED.get

_CONVERSION_HINT = {
    sparse_coo: ".to_dense()",
    sparse_csr: ".to_dense() (or .to_sparse_coo())",
}


class composite:
    """A kernel-table entry that is a composition of sparsetorch ops on *Tensors*.

    Used where a layout is served by other differentiable ops (e.g. a zero-preserving unary
    op on COO maps over the stored values; CSR @ CSR goes through COO). The composition gets
    its gradient from its parts, so it needs no derivative of its own.
    """

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class Op:
    """One public op: its kernels per layout tuple and one derivative formula per input."""

    __slots__ = (
        "name", "inputs", "params", "kernels", "strided", "formulas", "node_cls",
        "zero_preserving", "view", "saves", "holomorphic", "plans",
    )

    def __repr__(self):
        return f"<op {self.name}>"

    def kernel_for(self, key):
        """The kernel for a tuple of layouts, or a NotImplementedError that teaches the fix."""
        k = self.kernels.get(key)
        if k is None and SCALAR in key:
            k = self.kernels.get(tuple(strided if x is SCALAR else x for x in key))
        if k is None:
            raise NotImplementedError(missing_kernel_message(self, key))
        return k


def missing_kernel_message(op, key):
    names = ", ".join(x.name for x in key)
    sparse = [x for x in key if x in _CONVERSION_HINT]
    if not sparse:
        return f"{op.name}: not implemented for layouts ({names})."
    if op.zero_preserving is False:
        return (
            f"{op.name}: not implemented for layouts ({names}): {op.name} does not map 0 to 0, so "
            f"the result would be dense. sparsetorch never densifies silently; if that is what "
            f"you want, call {_CONVERSION_HINT[sparse[0]]} on the sparse input first, e.g. "
            f"x.to_dense().{op.name}()."
        )
    return (
        f"{op.name}: not implemented for layouts ({names}). Convert the sparse input with "
        f"{_CONVERSION_HINT[sparse[0]]} first."
    )


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


def defop(name, kernels, inputs=("input",), params=(), grads=None, zero_preserving=None, view=False,
          holomorphic=True, node_name=None):
    """Declare an op.

    ``kernels`` maps a tuple of layouts (one per tensor input) to ``kernel(be, *payloads, *params)``.
    ``grads`` maps an input name to a formula whose argument names are drawn from ``grad``,
    ``result``, the input names and the param names; formulas are written with sparsetorch ops,
    so they work for every layout and give higher derivatives. An input without a formula is not
    differentiable. ``zero_preserving`` records whether f(0) == 0 (used in error hints and checked
    by the tests).

    Complex inputs follow torch's convention: the gradient of a real loss L w.r.t. a complex z is
    dL/dz* (conjugate Wirtinger). With ``holomorphic=True`` (the default) a formula is written as
    for real inputs (``grad * f'(z)``, linear in ``grad``) and, when ``grad`` is complex, the node
    returns ``conj(formula(conj(grad)))``, i.e. ``grad * conj(f'(z))``: right for holomorphic ops
    and for ops with real coefficients (sums, shapes, indexing). Ops that are neither (``sgn``,
    ``complex``, ``real``...) pass ``holomorphic=False`` and write torch's formula themselves.
    ``node_name``: the backward node's class name (``grad_fn``'s type) where torch's is not the
    op's name camel-cased plus ``Backward0``.
    """
    op = Op()
    op.name = name
    op.inputs = tuple(inputs)
    op.params = tuple(params)
    op.kernels = {tuple(k): v for k, v in kernels.items()}
    op.strided = op.kernels.get((strided,) * len(op.inputs))
    op.zero_preserving = zero_preserving
    op.view = view
    op.holomorphic = holomorphic
    grads = grads or {}
    unknown = set(grads) - set(op.inputs)
    if unknown:
        raise TypeError(f"defop({name}): grads for unknown inputs {sorted(unknown)}")
    allowed = {"grad", "result", *op.inputs, *op.params}
    formulas = []
    for inp in op.inputs:
        f = grads.get(inp)
        if f is None:
            formulas.append((None, ()))
            continue
        names = tuple(inspect.signature(f).parameters)
        bad = set(names) - allowed
        if bad:
            raise TypeError(f"defop({name}): formula for {inp!r} uses unknown names {sorted(bad)}")
        formulas.append((f, names))
    op.formulas = tuple(formulas)
    # what the node must save, per input index: (names used)
    op.saves = tuple(frozenset(n for n in names if n != "grad") for _, names in formulas)
    op.plans = {}  # tuple of needed inputs -> (what to save, how each formula reads it): _plan
    # the backward node's class name is torch's grad_fn name: from the op's name, or ``node_name``
    # where torch spells it otherwise (``nll_loss2d`` -> ``NllLoss2DBackward0``)
    op.node_cls = type(node_name or _camel(name) + "Backward0", (OpNode,),
                       {"__slots__": (), "op": op})
    return op


# ---- the generic call path ----

def call(op, inputs, params=(), out_dtype=None, compute_dtype=None):
    """Run ``op`` on ``inputs`` (Tensors or Python numbers) with positional ``params``.

    ``compute_dtype``: cast tensor inputs to it before the kernel. ``out_dtype``: the dtype the
    result is labelled with (defaults to compute dtype, else the first tensor's dtype).
    """
    prof = _profiler.ACTIVE  # profiling: one range around the op, then re-enter unprofiled
    if prof is not None and prof.outer(op, inputs):
        return prof.run_op(call, op, inputs, params, out_dtype, compute_dtype)
    if len(inputs) == 1:
        x = inputs[0]
        if x.layout is strided and op.strided is not None and (
                compute_dtype is None or compute_dtype is x.dtype):
            return _call_dense1(op, x, params, out_dtype or x.dtype)
    dev = None
    key = []
    payloads = []
    first = None
    dense = True  # every input strided or a Python number (_all_dense(key), inline)
    grad = False  # some input has _rg set (the pre-filter of record_if_grad)
    for x in inputs:
        if isinstance(x, Tensor):
            if first is None:
                first = x
                dev = x.device
            elif x.device is not dev:  # devices are interned: identity is equality
                return _call_mixed(op, inputs, params, out_dtype, compute_dtype)
            lay = x.layout
            if lay is not strided:
                dense = False
            if x._rg:
                grad = True
            key.append(lay)
            payloads.append(cast_payload(x, compute_dtype) if compute_dtype is not None else x._data)
        else:
            key.append(SCALAR)
            payloads.append(x)
    kernel = op.strided
    if kernel is None or not dense:
        kernel = op.kernel_for(tuple(key))
    if kernel.__class__ is composite:
        return kernel.fn(*inputs, *params)
    be = CPU if dev is CPU_DEVICE else get_backend(dev)
    try:
        data = kernel(be, *payloads, *params)
    except (ValueError, TypeError) as e:
        raise kernel_error(op, inputs, e) from None
    dt = out_dtype or compute_dtype or first.dtype
    if data.__class__ in SCALAR_TYPES:  # NumPy ufuncs return scalars for 0-d inputs
        data = be.xp.asarray(data)
    lay = _PAYLOAD_LAYOUT.get(data.__class__, strided)
    if lay is strided:
        if data.dtype is not dt.np and data.dtype != dt.np:
            data = data.astype(dt.np)
    elif data.dtype != dt.np:
        data = data.astype(dt)
    result = _new(Tensor)  # wrap(data, dt, dev, lay), inline
    result._data = data
    result.dtype = dt
    result.device = dev
    result.layout = lay
    result._rg = False
    result.grad_fn = None
    result._vc = None
    result._extra = None
    if op.view:
        link_view(result, first, op, params, call)
    if grad and _grad_enabled():  # record_if_grad, inline
        record(op, result, inputs, params)
    return result


def _call_mixed(op, inputs, params, out_dtype, compute_dtype):
    """``call`` with inputs on several devices: as torch, a 0-d CPU tensor combines with tensors
    on one other device (it is moved there, differentiably); anything else is an error."""
    devs = []
    for x in inputs:
        if isinstance(x, Tensor) and x.device not in devs and not (
                x.device is CPU_DEVICE and x.layout is strided and not x._data.shape):
            devs.append(x.device)
    if len(devs) > 1:
        a, b = devs[0], devs[1]
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{a} and {b}! ({op.name}: move them with .to(device) first)"
        )
    target = devs[0]
    moved = tuple(x.to(target) if isinstance(x, Tensor) and x.device is not target else x
                  for x in inputs)
    return call(op, moved, params, out_dtype, compute_dtype)


def _call_dense1(op, x, params, dt):
    """``call`` for one strided input (most ops): no key building, no payload casts."""
    dev = x.device
    be = CPU if dev is CPU_DEVICE else get_backend(dev)
    try:
        data = op.strided(be, x._data, *params)
    except (ValueError, TypeError) as e:
        raise kernel_error(op, (x,), e) from None
    if data.__class__ in SCALAR_TYPES:
        data = be.xp.asarray(data)
    elif data.__class__ in _PAYLOAD_LAYOUT:
        result = wrap(data, dt, dev, _PAYLOAD_LAYOUT[data.__class__])
        if x._rg:
            record_if_grad(op, result, (x,), params)
        return result
    if data.dtype is not dt.np and data.dtype != dt.np:
        data = data.astype(dt.np)
    t = _new(Tensor)
    t._data = data
    t.dtype = dt
    t.device = dev
    t.layout = strided
    t._rg = False
    t.grad_fn = None
    t._vc = None
    t._extra = None
    if op.view:
        link_view(t, x, op, params, call)
    if x._rg:
        record_if_grad(op, t, (x,), params)
    return t


def kernel_error(op, inputs, e):
    """Turn a NumPy/SciPy error from inside a kernel into a torch-style error naming the op."""
    shapes = [tuple(x.shape) for x in inputs if isinstance(x, Tensor)]
    msg = str(e)
    if "broadcast" in msg and len(shapes) >= 2:
        return RuntimeError(f"{op.name}(): " + broadcast_message(shapes))
    dtypes = ", ".join(x.dtype.name for x in inputs if isinstance(x, Tensor))
    return RuntimeError(f"{op.name}(): {msg} (input shapes {shapes}, dtypes {dtypes})")


def broadcast_message(shapes):
    """torch's text for shapes that do not broadcast."""
    a, b = shapes[0], shapes[1]
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(a), len(b)) - i
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {dim}")
    return f"shapes {[list(s) for s in shapes]} cannot be broadcast together"


_PAYLOAD_LAYOUT = {}
SCALAR_TYPES = frozenset(d.np.type for d in D.ALL)


def result_layout(data):
    """Layout of a kernel's result payload (ndarray-like -> strided; sparse payload classes)."""
    lay = _PAYLOAD_LAYOUT.get(data.__class__)
    return strided if lay is None else lay


def register_payload(cls, lay):
    _PAYLOAD_LAYOUT[cls] = lay


def cpu_float_payloads(*ts):
    """The payloads of ``ts`` when all are strided CPU tensors of one dtype, float32 or float64
    (what the payload-level backward paths of the hot nodes run on), else None."""
    dt = ts[0].dtype
    if dt is not D.float32 and dt is not D.float64:
        return None
    for t in ts:
        if t.dtype is not dt or t.layout is not strided or t.device is not CPU_DEVICE:
            return None
    return [t._data for t in ts]


# ---- recording the graph ----

def record_if_grad(op, result, inputs, params=()):
    """The record-if-grad rule, in one place: attach ``op``'s node to ``result`` when grad mode is
    on and some input needs a gradient (``record`` decides which inputs do, and that integer and
    bool results never do). Every path that builds a result itself (``call``, the hand-written
    fast paths of the op modules) ends with this. A hot path may skip the call when no input has
    ``_rg`` set: that pre-filter only saves the call, it never changes what is recorded."""
    if _grad_enabled():
        record(op, result, inputs, params)


_ONE_NEEDED = (True,)


def record(op, result, inputs, params):
    """Attach a backward node for ``op`` to ``result`` if some input needs a gradient."""
    rdt = result.dtype
    if not (rdt.is_floating_point or rdt.is_complex):
        return  # integer and bool results are never differentiable
    formulas = op.formulas
    if len(inputs) == 1:  # most ops: no per-input lists
        x = inputs[0]
        if not (isinstance(x, Tensor) and x._rg and formulas[0][0] is not None):
            return
        fn = x.grad_fn  # the edge (_tape.edge), inline
        ex = x._extra
        if fn is not None:
            nexts = ((fn, ex.get("output_nr", 0) if ex else 0),)
        else:
            acc = ex.get("acc") if ex else None
            nexts = ((acc if acc is not None else grad_accumulator(x), 0),)
        lay = x.layout
        meta = [(x._data.shape, x.dtype, lay, None if lay is strided else x)]
        needs = _ONE_NEEDED
    else:
        needs = []
        nexts = []
        meta = []
        i = 0
        for x in inputs:
            if isinstance(x, Tensor):
                lay = x.layout
                # sparse inputs keep a reference to themselves: the engine masks a dense
                # gradient to their pattern (masked semantics, as torch.sparse.mm)
                meta.append((x._data.shape, x.dtype, lay, None if lay is strided else x))
                if x._rg and formulas[i][0] is not None:
                    needs.append(True)
                    fn = x.grad_fn  # the edge (_tape.edge), inline
                    ex = x._extra
                    if fn is not None:
                        nexts.append((fn, ex.get("output_nr", 0) if ex else 0))
                    else:
                        acc = ex.get("acc") if ex else None
                        nexts.append((acc if acc is not None else grad_accumulator(x), 0))
                else:
                    needs.append(False)
                    nexts.append(_NO_EDGE)
            else:
                needs.append(False)
                meta.append(None)
                nexts.append(_NO_EDGE)
            i += 1
        if True not in needs:
            return
        needs = tuple(needs)
        nexts = tuple(nexts)
    plan = op.plans.get(needs)
    if plan is None:
        plan = _plan(op, needs)
    node = _new(op.node_cls)
    node.next_functions = nexts
    node._pre_hooks = None
    node._hooks = None
    node._released = False
    node.metadata = None
    node.calls = plan[1]
    node.meta = meta
    specs = plan[0]
    if specs:
        saved = []
        for kind, j in specs:
            if kind == 2:  # an input
                x = inputs[j]
                saved.append(save_tensor(x) if isinstance(x, Tensor) else x)
            elif kind == 1:  # a param
                saved.append(params[j])
            else:
                saved.append(save_result(result))
        node.saved = tuple(saved)
    else:
        node.saved = ()
    result._rg = True
    result.grad_fn = node


def _plan(op, needs):
    """What a node of ``op`` saves and how each formula reads its arguments, for one tuple of
    needed inputs; built once per (op, tuple), so recording never inspects formulas.

    Returns ``(specs, calls)``: ``specs`` lists the saved values as ``(kind, index)`` (kind 0:
    the result, 1: a param, 2: an input); ``calls`` has, per input, ``(formula, positions)``
    with positions into ``(grad, *saved)``, or None where no gradient is needed.
    """
    names = []
    for need, (_, fnames) in zip(needs, op.formulas):
        if need:
            for n in fnames:
                if n != "grad" and n not in names:
                    names.append(n)
    specs = []
    for n in names:
        if n == "result":
            specs.append((0, None))
        elif n in op.params:
            specs.append((1, op.params.index(n)))
        else:
            specs.append((2, op.inputs.index(n)))
    pos = {n: j + 1 for j, n in enumerate(names)}
    pos["grad"] = 0
    calls = tuple((f, tuple(pos[n] for n in fnames)) if need else None
                  for need, (f, fnames) in zip(needs, op.formulas))
    plan = op.plans[needs] = (tuple(specs), calls)
    return plan


# ---- views ----

def make_view(result, base, op, params):
    """Link a view op's result to its base (``_tape.link_view``, replaying the op by ``call``)."""
    link_view(result, base, op, params, call)


# ---- derived variants: in-place and out= ----

def inplace(fn, self, args, kwargs=None, name=None):
    """``self.op_(*args)``: run the functional op, write the result into ``self``'s payload."""
    name = name or getattr(fn, "__name__", "op") + "_"
    if not isinstance(self, Tensor):
        raise TypeError(f"{name}(): expected a Tensor as self, got {type(self).__name__}")
    recording = _grad_enabled() and (self._rg or any(getattr(a, "_rg", False) for a in args))
    if recording:
        check_inplace_allowed(self, name)
        src = snapshot(self)
    else:
        src = self
    r = fn(src, *args, **kwargs) if kwargs else fn(src, *args)
    assign_into(self, r, name)
    if recording and r.grad_fn is not None:
        rebase_history(self, r)
    return self


def write_out(r, out, name):
    """The ``out=`` contract: results are copied (safely cast) into ``out``, resized if needed."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be a Tensor, not {type(out).__name__}")
    if _grad_enabled() and (r._rg or out._rg):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad."
        )
    if out.device != r.device:
        raise RuntimeError(
            f"{name}(): expected out tensor to be on device {r.device}, but it is on {out.device}"
        )
    if r.dtype is not out.dtype and not D.can_cast(r.dtype, out.dtype):
        raise RuntimeError(
            f"{name}(): result type {r.dtype.name} can't be cast to the desired output type "
            f"{out.dtype.name}"
        )
    if out.layout is not strided or r.layout is not strided:
        out._data = cast_payload(r, out.dtype)
        out.layout = r.layout
    else:
        if tuple(out.shape) != tuple(r.shape):
            out._data = get_backend(out.device).xp.empty(r._data.shape, out.dtype.np)
        get_backend(out.device).xp.copyto(out._data, r._data, casting="unsafe")
    bump_version(out)
    return out
