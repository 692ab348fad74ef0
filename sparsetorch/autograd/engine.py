"""The backward engine: runs graph nodes once each, in dependency order, without recursion.

Dependency counting (HIPS autograd's ``toposort``): a node runs when every node that feeds it a
gradient has run, so a 10,000-op chain needs no recursion. Broadcasting and dtype changes of
an op's inputs are undone here, in one place, after each node.
"""

import itertools
import threading

from .._backend import CPU, get_backend, writeable
from .._device import CPU as CPU_DEVICE
from .._dtype import float32 as _F32, float64 as _F64
from .._layout import sparse_coo, strided
from .._tensor import Tensor, wrap
from .grad_mode import GRAD_ENABLED
from .graph import AccumulateGrad
from ._tape import bump_version, edge, grad_accumulator
from . import profiler as _profiler  # _profiler.ACTIVE: None unless profiling
from . import anomaly_mode as _anomaly

_ANOMALY = _anomaly.STATE  # [enabled, check_nan]

__all__ = ["backward", "grad", "queue_callback", "register_post_accumulate_grad_hook"]

# one list per running backward() of each thread: callbacks queued while it runs execute when it
# finishes (thread-local, as torch's per-thread graph tasks)
_local = threading.local()

# Accumulation into a leaf's ``.grad`` is serialised per leaf (torch's AccumulateGrad mutex), so
# threads calling backward() into one shared parameter never lose an update. Striped locks keyed
# by the leaf's id: backward passes into different leaves still run in parallel.
_ACC_LOCKS = tuple(threading.RLock() for _ in range(64))


def _callback_stack():
    st = getattr(_local, "callbacks", None)
    if st is None:
        st = _local.callbacks = []
    return st


def _tensors(x, what):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        for t in x:
            if not isinstance(t, Tensor):
                raise TypeError(f"{what}: expected Tensors, got {type(t).__name__}")
        return list(x)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _root_grads(outputs, grad_outputs, what):
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    else:
        grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"{what}: got {len(grad_outputs)} gradients for {len(outputs)} outputs; pass one "
            "gradient per output"
        )
    roots, grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs; pass gradient= "
                    f"(a tensor of shape {list(out.shape)}) to backward()"
                )
            if out.dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype}")
            if out.layout is not strided:
                _ones_like(out)
            xp = get_backend(out.device).xp
            shape = out._data.shape  # () mostly: asarray is a C call, ones() a Python one
            one = xp.asarray(1, out.dtype.np) if not shape else xp.ones(shape, out.dtype.np)
            g = wrap(one, out.dtype, out.device, strided)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"{what}: gradients must be Tensors, got {type(g).__name__}")
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"{what}: mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} "
                    f"and output[{i}] has a shape of {list(out.shape)}."
                )
        roots.append(edge(out))
        grads.append(g)
    return roots, grads


def _ones_like(t):
    """The implicit gradient of a sparse scalar output: refused, as ``ones_like`` refuses it."""
    raise NotImplementedError(
        f"ones_like(): layout={t.layout!r} is not supported; create a strided tensor and convert "
        "it with .to_sparse()"
    )


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the ``.grad`` of the leaves (torch.autograd.backward)."""
    outputs = _tensors(tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    roots, grads = _root_grads(outputs, grad_tensors, "backward")
    stack = _callback_stack()
    stack.append([])
    try:
        _backward(roots, grads, retain_graph, create_graph, inputs)
    finally:
        callbacks = stack.pop()
    for cb in callbacks:  # only after a backward that succeeded (torch's queue_callback)
        cb()


def _backward(roots, grads, retain_graph, create_graph, inputs):
    if inputs is not None:
        inputs = _tensors(inputs, "backward(inputs=)")
        if not inputs:
            raise RuntimeError("backward(): 'inputs' argument to backward() cannot be empty.")
        got = _run(roots, grads, retain_graph, create_graph, [_input_edge(t) for t in inputs])
        for t, g in zip(inputs, got):
            if g is not None:
                _accumulate(t, g, create_graph, set())
        return
    _run(roots, grads, retain_graph, create_graph, None)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching ``.grad`` (torch.autograd.grad)."""
    outs = _tensors(outputs, "grad(outputs)")
    ins = _tensors(inputs, "grad(inputs)")
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported; loop over the batch.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots, grads = _root_grads(outs, grad_outputs, "grad")
    got = _run(roots, grads, retain_graph, create_graph, [_input_edge(t) for t in ins])
    result = []
    for t, g in zip(ins, got):
        if g is None:
            if materialize_grads:
                g = t.new_zeros(tuple(t.shape))  # zeros of t's layout, dtype and device
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)


def _input_edge(t):
    if t.grad_fn is not None:
        return edge(t)
    return (grad_accumulator(t), 0)


def _graph(root_nodes, want_parents):
    """Dependency counts (and parent lists and the set of nodes seen, for autograd.grad) of every
    node reachable from the roots, found iteratively."""
    deps = {}
    parents = {} if want_parents else None
    roots = set(root_nodes)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if want_parents:
                parents.setdefault(child, []).append(node)
            if child in deps:
                deps[child] += 1
            else:  # first visit
                deps[child] = 1
                if child not in roots:
                    stack.append(child)
    seen = roots.union(deps) if want_parents else None
    return deps, parents, seen


def _needed(capture_nodes, parents, seen):
    """Nodes from which a captured node can be reached (the only ones autograd.grad must run).

    A captured node itself runs only if another captured node lies below it: its gradient is
    captured on arrival, before it would run.
    """
    need = set()
    stack = [p for n in capture_nodes if n in seen for p in parents.get(n, ())]
    while stack:
        n = stack.pop()
        if n in need:
            continue
        need.add(n)
        stack.extend(parents.get(n, ()))
    return need


def _run(roots, grads, retain_graph, create_graph, capture):
    root_nodes = [n for n, _ in roots if n is not None]
    deps, parents, seen = _graph(root_nodes, capture is not None)
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        if node is not None:
            _add_to_buffer(buffers, node, nr, g)
    captured = None
    need = None
    if capture is not None:
        captured = [None] * len(capture)
        cap_index = {}
        for i, e in enumerate(capture):
            cap_index.setdefault(e, []).append(i)
        need = _needed({n for n, _ in capture}, parents, seen)
    handed = set()  # payloads a leaf's .grad may not take over (the caller's root gradients)
    for g in grads:
        handed.add(id(g._data))
    ready = []
    for n in dict.fromkeys(root_nodes):
        if n not in deps:  # deps holds counts >= 1 only
            ready.append(n)
    tasks = _graph_tasks()
    tasks.append(capture is None)  # for _is_checkpoint_valid()
    token = GRAD_ENABLED.set(bool(create_graph))
    pop_buffer = buffers.pop
    try:
        while ready:
            node = ready.pop()
            # a buffer exists only once a gradient arrived: has_grad is "some output got one"
            gl = pop_buffer(node, None)
            if gl is None:
                gl = [None] * node.num_outputs
                has_grad = False
            else:
                has_grad = True
                if node._pre_hooks:
                    for h in list(node._pre_hooks.values()):
                        r = h(tuple(gl))
                        if r is not None:
                            gl = list(r)
            if captured is not None:
                for nr, g in enumerate(gl):
                    for i in cap_index.get((node, nr), ()):
                        captured[i] = g
            prof = _profiler.ACTIVE
            if node.__class__ is AccumulateGrad:
                if capture is None and gl[0] is not None:
                    if prof is None:
                        _accumulate(node.variable, gl[0], create_graph, handed)
                    else:
                        prof.run_node(node, _accumulate, node.variable, gl[0], create_graph, handed)
                continue
            needed = need is None or node in need
            if needed and has_grad and prof is None and not _ANOMALY[0] \
                    and not (node._hooks or node._custom):
                # the common case in one pass: the node, then per input its gradient's
                # common-case test (dense, same shape and dtype), then its hand-over to the child
                in_grads = node.apply(gl)
                meta = getattr(node, "meta", None)
                for (child, nr), g, m in zip(node.next_functions, in_grads,
                                             _NO_META if meta is None else meta):
                    if child is None:
                        continue
                    if g is not None:
                        if m is not None and (m[3] is not None or g._data.shape != m[0]
                                              or g.dtype is not m[1] or g.layout is not strided):
                            g = _undo(g, m)
                        buf = buffers.get(child)
                        if buf is None:
                            if child.num_outputs == 1:
                                buffers[child] = [g]
                            else:
                                buf = buffers[child] = [None] * child.num_outputs
                                buf[nr] = g
                        else:
                            old = buf[nr]
                            buf[nr] = g if old is None else _sum_grads(old, g, create_graph)
                    left = deps[child] - 1
                    if left:
                        deps[child] = left
                    else:
                        ready.append(child)
                if not retain_graph:
                    release = node.release
                    if release is not None:
                        release()
            elif needed and has_grad:
                if prof is not None:
                    in_grads = prof.run_node(node, _apply, node, gl)
                elif node._hooks or node._custom:
                    in_grads = _apply(node, gl)
                else:  # _apply, inline: the node, then the common-case test of each gradient
                    in_grads = node.apply(gl)
                    meta = getattr(node, "meta", None)
                    if meta is not None:
                        i = -1
                        for g in in_grads:
                            i += 1
                            if g is not None:
                                m = meta[i]
                                if m is not None and (
                                        m[3] is not None or g._data.shape != m[0]
                                        or g.dtype is not m[1] or g.layout is not strided):
                                    in_grads[i] = _undo(g, m)
                if _ANOMALY[0] and _ANOMALY[1]:
                    _anomaly.check_nan(node, in_grads)
                if not retain_graph:
                    # only nodes this pass runs through are freed (torch keeps the saved tensors
                    # of nodes that autograd.grad did not need to execute)
                    release = node.release
                    if release is not None:
                        release()
                i = -1
                for child, nr in node.next_functions:
                    i += 1
                    if child is None:
                        continue
                    g = in_grads[i]
                    if g is not None:
                        buf = buffers.get(child)
                        if buf is None:
                            if child.num_outputs == 1:
                                buffers[child] = [g]
                            else:
                                buf = buffers[child] = [None] * child.num_outputs
                                buf[nr] = g
                        else:
                            old = buf[nr]
                            buf[nr] = g if old is None else _sum_grads(old, g, create_graph)
                    left = deps[child] - 1
                    if left:
                        deps[child] = left
                    else:
                        ready.append(child)
            else:
                if not retain_graph and needed:
                    release = node.release
                    if release is not None:
                        release()
                for child, _ in node.next_functions:
                    if child is not None:
                        left = deps[child] - 1
                        if left:
                            deps[child] = left
                        else:
                            ready.append(child)
    finally:
        GRAD_ENABLED.reset(token)
        tasks.pop()
    return captured


_NO_META = itertools.repeat(None)


def _graph_tasks():
    st = getattr(_local, "tasks", None)
    if st is None:
        st = _local.tasks = []
    return st


def _is_checkpoint_valid():
    """False while this thread runs ``autograd.grad()`` or ``backward(inputs=...)``, where a
    reentrant checkpoint cannot deliver its gradients (torch.autograd._is_checkpoint_valid)."""
    st = _graph_tasks()
    return not st or st[-1]


def _apply(node, gl):
    in_grads = node.apply(gl)
    if node._hooks:
        for h in list(node._hooks.values()):
            r = h(tuple(in_grads), tuple(gl))
            if r is not None:
                in_grads = list(r)
    # custom Function nodes validate their own grads (and ``ctx.meta`` is the user's attribute)
    meta = None if node._custom else getattr(node, "meta", None)
    if meta is None:
        return in_grads
    i = -1
    for g in in_grads:
        i += 1
        if g is None:
            continue
        m = meta[i]
        if m is None or (m[3] is None and g._data.shape == m[0] and g.dtype is m[1]
                         and g.layout is strided):
            continue  # the common case: a dense input, nothing to undo
        in_grads[i] = _undo(g, m)
    return in_grads


def _undo(g, m):
    """Undo broadcasting, dtype changes and (masked semantics) the pattern of a sparse input."""
    shape, dtype, _layout, sparse_input = m
    if g._data.shape != shape:
        g = sum_to(g, shape)
    if g.dtype is not dtype:
        if g.dtype.is_complex and not dtype.is_complex:
            g = g.real  # a real input reached by a complex gradient: its real part (torch)
        g = g.to(dtype) if g.dtype is not dtype else g
    if sparse_input is not None and not _same_pattern(g, sparse_input):
        # masked semantics: the gradient of a sparse input has that input's pattern
        g = _mask_grad(g, sparse_input)
    return g


def _mask_grad(g, x):
    """``g`` restricted to the pattern of the sparse input ``x`` (coalesced first, so that the
    densified result is the dense gradient times the pattern, whatever duplicates ``x`` stores)."""
    if x.layout is sparse_coo and not x._data.coalesced:
        x = x.detach().coalesce()
    return g.sparse_mask(x)


def _same_pattern(g, x):
    """True if sparse ``g`` stores exactly ``x``'s positions (same index buffers)."""
    if g.layout is not x.layout:
        return False
    a, b = g._data, x._data
    if x.layout.name == "sparse_coo":
        return a.indices is b.indices
    return a.crow is b.crow and a.col is b.col


def sum_to(g, shape):
    """Undo broadcasting: sum ``g`` down to ``shape`` (leading dims, then size-1 dims)."""
    shape = tuple(shape)
    gshape = tuple(g.shape)
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"gradient of shape {list(gshape)} cannot be reduced to {list(shape)}")
    if lead:
        g = g.sum(dim=tuple(range(lead)))
    ones = tuple(i for i, (a, b) in enumerate(zip(shape, gshape[lead:])) if a == 1 and b != 1)
    if ones:
        g = g.sum(dim=ones, keepdim=True)
    if tuple(g.shape) != shape:
        raise RuntimeError(f"gradient of shape {list(gshape)} cannot be reduced to {list(shape)}")
    return g


def _sum_grads(a, b, create_graph):
    """``a + b``, two gradients of one output. In a plain backward over strided float32/float64
    CPU tensors of one shape: one NumPy add on the payloads, as torch's input buffer sums them
    (issue 14); otherwise (graph building, profiling, sparse, broadcasting) the op."""
    dt = a.dtype
    if not create_graph and (dt is _F32 or dt is _F64) and b.dtype is dt \
            and a.layout is strided and b.layout is strided and a.device is CPU_DEVICE \
            and b.device is CPU_DEVICE and not a._rg and not b._rg \
            and a._data.shape == b._data.shape != () and _profiler.ACTIVE is None:
        return wrap(_np_add(a._data, b._data), dt, CPU_DEVICE, strided)
    return a + b


_np_add = CPU.xp.add
# the member descriptor of Tensor's ``grad`` slot (under the property _tensor_methods installs)
_GRAD_ATTR = Tensor.__dict__["grad"]
_grad_slot_get = getattr(getattr(_GRAD_ATTR, "fset", None), "__self__", _GRAD_ATTR).__get__


def _add_to_buffer(buffers, node, nr, g):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node.num_outputs
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def queue_callback(callback):
    """Run ``callback()`` once the running ``backward()`` has finished (torch's
    ``Variable._execution_engine.queue_callback``); DistributedDataParallel waits for its
    gradient all-reduces this way."""
    stack = _callback_stack()
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].append(callback)


def register_post_accumulate_grad_hook(t, hook):
    """``t.register_post_accumulate_grad_hook(hook)``: ``hook(t)`` runs after a gradient has been
    accumulated into the leaf ``t.grad`` by ``backward()``."""
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook(): hook must be callable, got "
                        f"{type(hook).__name__}")
    from .graph import RemovableHandle

    if t._extra is None:
        t._extra = {}
    hooks = t._extra.setdefault("post_acc_hooks", {})
    handle = RemovableHandle(hooks)
    hooks[handle._key] = hook
    return handle


def _accumulate(var, g, create_graph, handed):
    """Add ``g`` into the leaf ``var``'s ``.grad`` (serialised per leaf), then its post-accumulate
    hooks. A first gradient is taken over without a copy (as torch does) unless the caller handed
    it in (a root gradient), another leaf already took it, or it views another array."""
    if not create_graph and g._rg:  # grads computed without create_graph carry no graph already
        g = g.detach()
    with _ACC_LOCKS[(id(var) >> 4) & 63]:
        try:  # the slot under Tensor.grad's property (a leaf: the property adds no warning)
            old = _grad_slot_get(var)
        except AttributeError:
            old = None
        if old is None:
            data = g._data
            if id(data) in handed or getattr(data, "base", None) is not None:
                g = g.clone()
                data = g._data
            handed.add(id(data))
            var.grad = g
        elif create_graph or old._rg:
            var.grad = old + g
        elif (old.layout is strided and g.layout is strided and old.dtype is g.dtype
              and old._data.shape == g._data.shape and writeable(old._data)):
            # accumulate into the existing buffer (as torch does), no graph, no temporary
            get_backend(old.device).xp.add(old._data, g._data, out=old._data)
            bump_version(old)
        else:
            var.grad = old + g
    ex = var._extra
    if ex is not None:
        hooks = ex.get("post_acc_hooks")
        if hooks:
            for h in list(hooks.values()):
                h(var)
