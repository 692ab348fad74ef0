"""sparsetorch.jit (torch.jit): TorchScript's API, run eagerly with the same results (see
``_api``). Re-exports only."""

from ._api import *  # noqa: F401,F403
from ._api import (  # noqa: F401 - private names that libraries (torchvision, ...) call
    _overload, _overload_method, _script_if_tracing,
)
from ._api import __all__ as _api_all
from ._fork import Future, fork, wait  # noqa: F401

RecursiveScriptModule = ScriptModule  # noqa: F405
TracedModule = ScriptModule  # noqa: F405
TopLevelTracedModule = ScriptModule  # noqa: F405

__all__ = [*_api_all, "Future", "RecursiveScriptModule", "TopLevelTracedModule",
           "TracedModule", "fork", "wait"]
