"""torch._dynamo's functions that scripts call, for an eager "compiler": nothing is cached, so
``reset`` has nothing to clear; marks and hints are accepted and ignored."""

import functools

from .eval_frame import compile as _compile

__all__ = [
    "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable", "explain",
    "graph_break", "is_compiling", "is_dynamo_compiling", "is_exporting", "mark_dynamic",
    "mark_static", "maybe_mark_dynamic", "optimize", "reset", "run",
]


def reset():
    """Clears the compile caches: there are none (everything runs eagerly)."""


def is_compiling():
    """True while TorchDynamo traces: never here."""
    return False


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Excludes ``fn`` from compilation (``@disable`` or ``@disable()``): returns ``fn``."""
    if fn is None:
        return lambda f: f
    return fn


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             guard_filter_fn=None, disable=False, dynamic=None, rebuild_ctx=None):
    """The older spelling of ``torch.compile(backend=...)``: a decorator."""
    return functools.partial(_compile, backend=backend, disable=disable, dynamic=dynamic)


def run(fn=None):
    return fn if fn is not None else (lambda f: f)


def graph_break():
    """A graph break in compiled code: nothing to break here."""


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Marks a dimension as dynamic for the compiler: ignored (nothing is specialised)."""


def maybe_mark_dynamic(t, index):
    """Hints a dimension as dynamic: ignored."""


def mark_static(t, index=None):
    """Marks a dimension as static: ignored."""


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def explain(f, *extra_args, **extra_kwargs):
    """Why a function breaks into graphs: not available (no graphs are built)."""
    raise NotImplementedError("sparsetorch._dynamo.explain: sparsetorch runs torch.compile "
                              "eagerly and builds no graphs to explain")


def is_dynamo_compiling():
    """True while TorchDynamo traces: never here."""
    return False


def is_exporting():
    """True while torch.export traces: never here."""
    return False


def cudagraph_mark_step_begin():
    """Marks the start of a CUDA-graph step: no CUDA graphs are recorded here."""
