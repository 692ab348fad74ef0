"""sparsetorch.distributed: torch.distributed's API on MPI (mpi4py) and NCCL (CuPy).

Launch with an MPI launcher (``mpirun -n 4 python train.py``) and call
``init_process_group("mpi")`` (CPU tensors) or ``init_process_group("nccl")`` (GPU tensors,
bootstrapped over MPI). ``all_reduce`` also reduces sparse COO and CSR tensors (see
``docs/distributed.md``). Re-exports only.
"""

from ._alltoall import all_to_all, all_to_all_single, scatter_object_list
from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from ._sharded_collection import ShardedEmbeddingBagCollection, table_wise_plan
from ._sharded_embedding import ShardedEmbeddingBag, row_bounds, shard_embedding_bag
from ._work import ReduceOp, Work

group = GroupMember  # torch.distributed.group.WORLD

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "ShardedEmbeddingBag",
    "ShardedEmbeddingBagCollection",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "row_bounds",
    "scatter",
    "scatter_object_list",
    "send",
    "shard_embedding_bag",
    "table_wise_plan",
]
