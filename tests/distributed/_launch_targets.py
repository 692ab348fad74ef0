"""Entrypoints for the launcher tests (importable by the workers)."""

import os
import sys


def rank_info(x):
    """torchrun's variables as a worker sees them, and the MPI group's view."""
    import sparsetorch.distributed as dist

    dist.init_process_group("mpi")
    out = (int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]),
           int(os.environ["WORLD_SIZE"]), dist.get_rank(), dist.get_world_size(), x,
           dist.is_torchelastic_launched())
    dist.destroy_process_group()
    return out


if __name__ == "__main__":
    # as a script: fail on the first attempt when asked to, then print what the worker sees
    if "--fail-first" in sys.argv and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
        sys.exit(3)
    line = (f"worker {rank_info(sys.argv[1:])} {os.environ['MASTER_ADDR']} "
            f"{os.environ['MASTER_PORT']} {os.environ['TORCHELASTIC_RESTART_COUNT']}\n")
    os.write(1, line.encode())  # one write: the ranks' lines do not interleave
