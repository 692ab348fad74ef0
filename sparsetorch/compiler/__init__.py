"""sparsetorch.compiler (torch.compiler): the compiler's user-facing switches, for
``torch.compile`` running eagerly (see ``sparsetorch._dynamo.eval_frame``). Re-exports only."""

from .._dynamo._api import assume_constant_result, disable, is_compiling, reset  # noqa: F401
from .._dynamo._api import (  # noqa: F401
    allow_in_graph, cudagraph_mark_step_begin, is_dynamo_compiling, is_exporting,
)
from .._dynamo.eval_frame import compile, list_backends  # noqa: F401

__all__ = [
    "allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin", "disable",
    "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends", "reset",
]

