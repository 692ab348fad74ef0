"""sparsetorch.nn.parallel: data-parallel training across devices (DataParallel and its
scatter/replicate/parallel_apply/gather) and across processes (DistributedDataParallel).
Re-exports only."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply",
           "replicate", "scatter"]
