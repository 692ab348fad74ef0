"""The per-rank shim the launcher runs under mpirun: ``python -m
sparsetorch.distributed._bootstrap <cmd...>`` sets torchrun's variables from this process's MPI
rank (read from the launcher's environment, without initialising MPI), then runs ``cmd``:
a script path (run as ``__main__``), ``-m module``, ``--no-python exe ...``, or
``--call <pickle file>`` (a callable and its arguments, from ``elastic_launch``).
"""

import os
import pickle
import runpy
import sys

from ._launcher import worker_env

_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


def _first(names, env):
    for k in names:
        if k in env:
            return int(env[k])
    return None


def mpi_rank_size(env):
    """(rank, size) from the MPI launcher's variables; mpi4py as the last resort."""
    r, n = _first(_RANK_VARS, env), _first(_SIZE_VARS, env)
    if r is None or n is None:
        from mpi4py import MPI

        r, n = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
    return r, n


def main(argv):
    env = os.environ
    rank, size = mpi_rank_size(env)
    nproc = int(env.get("SPARSETORCH_LAUNCH_NPROC", size))
    env.update(worker_env(
        rank % nproc, nproc, node_rank=rank // nproc, nnodes=max(1, size // nproc),
        master_addr=env.get("MASTER_ADDR", "127.0.0.1"),
        master_port=env.get("MASTER_PORT", "29500"),
        run_id=env.get("TORCHELASTIC_RUN_ID", "none"),
        restart=env.get("TORCHELASTIC_RESTART_COUNT", "0"),
        max_restarts=env.get("TORCHELASTIC_MAX_RESTARTS", "0"),
        role=env.get("ROLE_NAME", "default")))
    if argv[0] == "--call":
        with open(argv[1], "rb") as f:
            fn, args = pickle.load(f)
        result = fn(*args)
        with open(os.path.join(argv[2], f"result-{rank}.pkl"), "wb") as f:
            pickle.dump(result, f)
        return
    if argv[0] == "--no-python":
        os.execvp(argv[1], argv[1:])
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
