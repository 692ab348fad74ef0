"""sparsetorch.nn: neural network building blocks (torch.nn). Re-exports only."""

from .parameter import Buffer, Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401 - torch.nn.DataParallel
