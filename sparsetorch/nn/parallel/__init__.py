"""sparsetorch.nn.parallel: data-parallel training across processes. Re-exports only."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
