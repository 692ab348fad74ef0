"""sparsetorch._dynamo (torch._dynamo), minimal: the pieces training scripts touch around
``torch.compile`` (which runs eagerly here: see ``eval_frame``). Re-exports only."""

from . import config, exc  # noqa: F401
from ._api import (  # noqa: F401
    allow_in_graph, assume_constant_result, disable, explain, graph_break, is_compiling,
    mark_dynamic, mark_static, maybe_mark_dynamic, optimize, reset, run,
)
from .eval_frame import (  # noqa: F401
    OptimizedModule, list_backends, lookup_backend, register_backend,
)

__all__ = [
    "OptimizedModule", "allow_in_graph", "assume_constant_result", "config", "disable", "exc",
    "explain", "graph_break", "is_compiling", "list_backends", "lookup_backend", "mark_dynamic",
    "mark_static", "maybe_mark_dynamic", "optimize", "register_backend", "reset", "run",
]
