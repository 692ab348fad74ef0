"""sparsetorch.nn: neural network building blocks (torch.nn). Re-exports only."""

from .parameter import Buffer, Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from . import attention  # noqa: F401 - torch.nn.attention (sdpa_kernel, SDPBackend)
from .parallel import DataParallel  # noqa: F401 - torch.nn.DataParallel


def __getattr__(name):  # PEP 562: only names not found above reach here
    if name == "__all__":  # help() lists, and ``import *`` takes, every public name of the moment
        return sorted(n for n in globals() if not n.startswith("_"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
