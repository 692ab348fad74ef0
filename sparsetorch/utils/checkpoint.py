"""Activation checkpointing (torch.utils.checkpoint): trade compute for memory.

``checkpoint(fn, *args)`` keeps only ``fn``'s inputs; its intermediate activations are not kept,
and ``fn`` runs again in backward to rebuild them. The RNG state of the forward is restored for
the recomputation (``preserve_rng_state=True``), so dropout inside draws the same mask.

Two variants, as torch:

- ``use_reentrant=True`` (torch's default when the argument is left out, with a warning): the
  forward runs under ``no_grad``; backward recomputes and calls ``autograd.backward`` on the
  recomputed piece, which accumulates into the ``.grad`` of parameters used inside. It cannot
  serve ``autograd.grad()`` / ``backward(inputs=...)`` and needs an input that requires grad.
- ``use_reentrant=False``: the forward runs with grad once to find the leaves (parameters)
  ``fn`` depends on, then drops that graph; the output's node leads straight to those leaves and
  to the inputs. Works with ``autograd.grad``, keyword arguments and inputs without grad.

Sparse (COO/CSR) inputs are checkpointed like dense ones; their gradients keep the masked
semantics of the ops inside.
"""

import contextlib
import warnings

from .. import _dispatch
from .._generator import fork_rng, get_rng_state, set_rng_state
from ..autograd.engine import _is_checkpoint_valid, backward, grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import AccumulateGrad

__all__ = [
    "checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
    "check_backward_validity", "detach_variable", "get_device_states", "set_device_states",
    "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
    "DefaultDeviceType",
]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not reproduce the forward (shapes or dtypes differ)."""


def _is_tensor(x):
    return isinstance(x, _dispatch.Tensor)


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Detached copies of the tensors in the tuple ``inputs``, with their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not _is_tensor(inp):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if _is_tensor(inp)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def get_device_states(*args):
    """Per-device RNG states to restore (sparsetorch draws every device's numbers from the one
    host generator, which checkpoint saves anyway): empty lists."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """See :func:`get_device_states`: nothing to restore."""


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves (kept for torch compatibility)."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


_EARLY_STOP = [True]
_DEBUG = [None]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Accepted for torch compatibility: the recomputation always runs the whole function."""
    old = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = old


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Accepted for torch compatibility (no extra debug output)."""
    old = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = old


# ---- use_reentrant=True ----

class CheckpointFunction(Function):
    """The reentrant variant: forward under no_grad, backward recomputes and runs backward()."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, a in enumerate(args):
            if _is_tensor(a):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if _is_tensor(outputs):
            outputs = (outputs,)
        outs, grads = [], []
        for o, g in zip(outputs, args):
            if _is_tensor(o) and o.requires_grad:
                outs.append(o)
                grads.append(g)
        if not outs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary")
        backward(outs, grads)
        return (None, None) + tuple(x.grad if _is_tensor(x) else None for x in detached)


# ---- use_reentrant=False ----

class _Recompute(Function):
    """The non-reentrant variant's node: inputs are the function's tensor arguments and the
    leaves it reached; backward recomputes and takes ``autograd.grad`` wrt both."""

    @staticmethod
    def forward(ctx, plan, *tensors):
        ctx.plan = plan
        ctx.save_for_backward(*tensors[:plan.n_args])
        outs = plan.outputs
        plan.outputs = None  # the discovery graph dies with it: no activations are kept
        if _is_tensor(outs):
            return outs.detach()
        return tuple(o.detach() if _is_tensor(o) else o for o in outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        plan = ctx.plan
        saved = ctx.saved_tensors
        args = list(plan.args)
        for i, t in zip(plan.tensor_indices, saved):
            x = t.detach()
            x.requires_grad = t.requires_grad
            args[i] = x
        with fork_rng(enabled=plan.rng_state is not None):
            if plan.rng_state is not None:
                set_rng_state(plan.rng_state)
            with enable_grad(), plan.recompute_ctx:
                outputs = plan.function(*args, **plan.kwargs)
        outputs = (outputs,) if _is_tensor(outputs) else tuple(outputs)
        if plan.check:
            _check_same(plan.meta, outputs)
        wrt = [args[i] for i in plan.tensor_indices] + list(plan.leaves)
        wanted = [k for k, t in enumerate(wrt) if t.requires_grad and ctx.needs_input_grad[k + 1]]
        outs, gouts = [], []
        for o, g in zip(outputs, grad_outputs):
            if _is_tensor(o) and o.requires_grad and g is not None:
                outs.append(o)
                gouts.append(g)
        result = [None] * len(wrt)
        if outs and wanted:
            got = grad(outs, [wrt[k] for k in wanted], gouts, retain_graph=True,
                       allow_unused=True)
            for k, g in zip(wanted, got):
                result[k] = g
        return (None,) + tuple(result)


class _Plan:
    __slots__ = ("function", "args", "kwargs", "tensor_indices", "n_args", "leaves", "outputs",
                 "rng_state", "recompute_ctx", "meta", "check")


def _leaves(outputs, stop):
    """Leaf tensors requiring grad that ``outputs`` depend on, found by walking their graph
    (``stop``: ids of AccumulateGrad nodes not to report, those of the detached inputs)."""
    found = []
    seen = set()
    stack = [o.grad_fn for o in outputs if _is_tensor(o) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.__class__ is AccumulateGrad:
            if id(node) not in stop:
                found.append(node.variable)
            continue
        stack.extend(n for n, _ in node.next_functions)
    return found


def _meta(outputs):
    return [(tuple(o.shape), o.dtype) if _is_tensor(o) else None for o in outputs]


def _check_same(meta, outputs):
    now = _meta(outputs)
    if now != meta:
        raise CheckpointError(
            "torch.utils.checkpoint: Recomputed values for the following tensors have different "
            f"metadata than during the forward pass.\nforward: {meta}\nrecomputed: {now}")


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args,
                                  kwargs):
    fwd_ctx, recompute_ctx = context_fn()
    if not is_grad_enabled():
        with fwd_ctx:
            return function(*args, **kwargs)
    rng_state = get_rng_state() if preserve else None
    tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
    detached = list(args)
    for i in tensor_indices:
        x = args[i].detach()
        x.requires_grad = args[i].requires_grad
        detached[i] = x
    with fwd_ctx:
        outputs = function(*detached, **kwargs)
    outs = (outputs,) if _is_tensor(outputs) else outputs
    if not isinstance(outs, tuple) or not any(_is_tensor(o) and o.requires_grad for o in outs):
        return outputs
    stop = {id(_dispatch.grad_accumulator(detached[i])) for i in tensor_indices
            if detached[i].requires_grad}
    plan = _Plan()
    plan.function = function
    plan.args = tuple(None if i in tensor_indices else a for i, a in enumerate(args))
    plan.kwargs = kwargs
    plan.tensor_indices = tensor_indices
    plan.n_args = len(tensor_indices)
    plan.leaves = _leaves(outs, stop)
    plan.outputs = outputs
    plan.rng_state = rng_state
    plan.recompute_ctx = recompute_ctx
    plan.meta = _meta(outs)
    plan.check = determinism_check != "none"
    del outputs, outs, detached
    return _Recompute.apply(plan, *[args[i] for i in tensor_indices], *plan.leaves)


# ---- the public functions ----

def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run ``function(*args)`` without keeping its intermediate activations; they are
    recomputed in backward. ``preserve_rng_state=True`` (a keyword) restores the forward's RNG
    state for the recomputation."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args,
                                         kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequential model in ``segments`` chunks, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is "
            "not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    from ..nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
