"""Starting a job's worker processes the way ``torchrun`` does, on one node, over ``mpirun``.

``launch(cmd, nproc, ...)`` runs ``cmd`` (an argv list) as ``nproc`` processes: under
``mpirun -n nproc`` (the default: what ``init_process_group("mpi")`` needs), or as plain local
processes (``launcher="local"``: for scripts that only read ``RANK`` & co.; an MPI process group
cannot form then). Each worker sees torchrun's variables (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``ROLE_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``, ``TORCHELASTIC_RESTART_COUNT`` ...): under mpirun they
are set by ``_bootstrap`` from the MPI rank, before the user's code starts. A failed job is
started again, whole, up to ``max_restarts`` times (torchelastic's restart policy). What needs a
rendezvous server (several nodes joining, elastic membership) is refused with a clear error.
"""

import os
import shutil
import subprocess
import sys

__all__ = ["LaunchError", "find_mpirun", "launch", "refuse_multinode", "worker_env"]


class LaunchError(RuntimeError):
    """The workers failed (after every restart); ``failures`` maps rank -> exit code."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = dict(failures)
        super().__init__(f"{name} failed: exit codes by rank {self.failures}")


def refuse_multinode(min_nodes, max_nodes, rdzv_endpoint="", what="launch"):
    if (int(min_nodes), int(max_nodes)) != (1, 1):
        raise ValueError(
            f"{what}: nnodes={min_nodes}:{max_nodes} needs a rendezvous server, which "
            "sparsetorch does not have; run one node per launch, or start every node's ranks "
            "with one MPI launcher (mpirun -f hosts -n N python train.py)")


def find_mpirun():
    here = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return shutil.which("mpirun", path=here) or shutil.which("mpiexec", path=here)


def worker_env(rank, nproc, node_rank=0, nnodes=1, master_addr="127.0.0.1",
               master_port=29500, run_id="none", restart=0, max_restarts=0, role="default"):
    """torchrun's per-worker variables for local rank ``rank`` of ``nproc``."""
    world = nproc * nnodes
    grank = node_rank * nproc + rank
    env = {
        "RANK": grank, "LOCAL_RANK": rank, "WORLD_SIZE": world, "LOCAL_WORLD_SIZE": nproc,
        "GROUP_RANK": node_rank, "GROUP_WORLD_SIZE": nnodes, "ROLE_RANK": grank,
        "ROLE_WORLD_SIZE": world, "ROLE_NAME": role, "MASTER_ADDR": master_addr,
        "MASTER_PORT": master_port, "TORCHELASTIC_RUN_ID": run_id,
        "TORCHELASTIC_RESTART_COUNT": restart, "TORCHELASTIC_MAX_RESTARTS": max_restarts,
        "TORCHELASTIC_USE_AGENT_STORE": "False",
    }
    return {k: str(v) for k, v in env.items()}


def _base_env(nproc, extra):
    env = dict(os.environ)
    if nproc > 1:  # as torchrun: one thread per worker unless told otherwise
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("NUMBA_NUM_THREADS", "1")
    env.update(extra)
    return env


def _mpirun_cmd(exe, nproc):
    cmd = [exe, "-n", str(nproc)]
    v = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    if "Open MPI" in v.stdout + v.stderr:
        cmd.append("--oversubscribe")
    return cmd


def launch(cmd, nproc, launcher="mpirun", max_restarts=0, master_addr="127.0.0.1",
           master_port=None, run_id="none", role="default", env=None, name=None):
    """Run ``cmd`` as ``nproc`` workers, restarting the whole job on failure; returns 0 or raises
    :class:`LaunchError`. ``env``: extra variables for every worker."""
    nproc = int(nproc)
    if nproc < 1:
        raise ValueError(f"nproc_per_node must be >= 1, got {nproc}")
    if launcher not in ("mpirun", "local"):
        raise ValueError(f"launcher must be 'mpirun' or 'local', got {launcher!r}")
    port = 29500 if master_port is None else int(master_port)
    name = name or " ".join(cmd[:3])
    failures = {}
    for restart in range(int(max_restarts) + 1):
        common = {"MASTER_ADDR": master_addr, "MASTER_PORT": str(port),
                  "TORCHELASTIC_RUN_ID": run_id, "TORCHELASTIC_RESTART_COUNT": str(restart),
                  "TORCHELASTIC_MAX_RESTARTS": str(max_restarts), "ROLE_NAME": role,
                  "SPARSETORCH_LAUNCH_NPROC": str(nproc)}
        common.update(env or {})
        if launcher == "mpirun":
            exe = find_mpirun()
            if exe is None:
                raise RuntimeError(
                    "mpirun was not found (install the distributed extra: pip install "
                    "'sparsetorch[distributed]'), or pass launcher='local' for workers that do "
                    "not form an MPI process group")
            boot = [sys.executable, "-m", "sparsetorch.distributed._bootstrap"]
            p = subprocess.run(_mpirun_cmd(exe, nproc) + boot + list(cmd),
                               env=_base_env(nproc, common), check=False)
            failures = {} if p.returncode == 0 else {-1: p.returncode}  # mpirun: job-wide
        else:
            procs = []
            for r in range(nproc):
                wenv = _base_env(nproc, common)
                wenv.update(worker_env(r, nproc, master_addr=master_addr, master_port=port,
                                       run_id=run_id, restart=restart,
                                       max_restarts=max_restarts, role=role))
                procs.append(subprocess.Popen(list(cmd), env=wenv))
            codes = [pr.wait() for pr in procs]
            failures = {r: c for r, c in enumerate(codes) if c != 0}
        if not failures:
            return 0
    raise LaunchError(name, failures)
