"""``python -m sparsetorch.distributed.run`` (torchrun): start a training script on this node.

    python -m sparsetorch.distributed.run --nproc_per_node 2 train.py --lr 0.1

Workers get torchrun's variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT`` ...) and are started by ``mpirun`` (``--launcher mpirun``, the default: what
``init_process_group("mpi")`` needs) or as local processes (``--launcher local``). torchrun's
options are accepted; those that need a rendezvous server (``--nnodes`` other than 1, a
``c10d``/``etcd`` rendezvous endpoint) are refused with a clear error, as are log redirection
options (mpirun forwards every rank's output). ``--max-restarts`` restarts the whole job.
"""

import argparse
import sys
import uuid

from ._launcher import LaunchError, launch, refuse_multinode

__all__ = ["get_args_parser", "main", "parse_args", "run"]


def get_args_parser():
    p = argparse.ArgumentParser(
        description="sparsetorch's torchrun: start NPROC workers on this node over mpirun")

    def opt(*names, **kw):
        alias = ["--" + n[2:].replace("-", "_") for n in names
                 if n.startswith("--") and "-" in n[2:]]
        p.add_argument(*names, *alias, **kw)

    opt("--nnodes", default="1:1")
    opt("--nproc-per-node", default="1")
    opt("--rdzv-backend", default="static")
    opt("--rdzv-endpoint", default="")
    opt("--rdzv-id", default="none")
    opt("--rdzv-conf", default="")
    opt("--standalone", action="store_true")
    opt("--max-restarts", type=int, default=0)
    opt("--monitor-interval", type=float, default=0.1)
    opt("--start-method", default="spawn", choices=["spawn", "fork", "forkserver"])
    opt("--role", default="default")
    opt("-m", "--module", action="store_true")
    opt("--no-python", action="store_true")
    opt("--run-path", action="store_true")
    opt("--log-dir", default=None)
    opt("-r", "--redirects", default="0")
    opt("-t", "--tee", default="0")
    opt("--local-ranks-filter", default="")
    opt("--node-rank", type=int, default=0)
    opt("--master-addr", default="127.0.0.1")
    opt("--master-port", type=int, default=None)
    opt("--local-addr", default=None)
    opt("--launcher", default="mpirun", choices=["mpirun", "local"],
        help="sparsetorch: start workers with mpirun (default) or as local processes")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nproc(value):
    if value in ("auto", "cpu"):
        import os

        return os.cpu_count() or 1
    if value == "gpu":
        from .. import cuda

        n = cuda.device_count()
        if n == 0:
            raise ValueError("--nproc-per-node=gpu but no GPU is visible")
        return n
    return int(value)


def run(args):
    """Launch the job described by parsed ``args``; raises LaunchError if it failed."""
    lo, _, hi = str(args.nnodes).partition(":")
    refuse_multinode(lo, hi or lo, args.rdzv_endpoint, "sparsetorch.distributed.run")
    if args.node_rank != 0:
        raise ValueError("sparsetorch.distributed.run: --node-rank must be 0 (one node per "
                         "launch; several nodes join through one mpirun, see docs)")
    for flag, off in ((args.log_dir, None), (args.redirects, "0"), (args.tee, "0"),
                      (args.local_ranks_filter, "")):
        if flag != off:
            raise ValueError("sparsetorch.distributed.run: --log-dir, --redirects, --tee and "
                             "--local-ranks-filter are not supported (mpirun forwards every "
                             "rank's output; use mpirun's own output options)")
    if args.module and args.no_python:
        raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at "
                         "the same time.")
    cmd = [args.training_script] + list(args.training_script_args)
    if args.module:
        cmd = ["-m"] + cmd
    elif args.no_python:
        cmd = ["--no-python"] + cmd
    run_id = args.rdzv_id if args.rdzv_id != "none" else str(uuid.uuid4())
    nproc = _nproc(args.nproc_per_node)
    if args.launcher == "local":
        cmd = (cmd[1:] if args.no_python else [sys.executable] + cmd)
    return launch(cmd, nproc, launcher=args.launcher, max_restarts=args.max_restarts,
                  master_addr=args.master_addr, master_port=args.master_port, run_id=run_id,
                  role=args.role, name=args.training_script)


def main(args=None):
    try:
        run(parse_args(sys.argv[1:] if args is None else args))
    except LaunchError as e:
        print(f"sparsetorch.distributed.run: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
