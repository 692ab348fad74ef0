"""What the mpirun worker scripts share: the check counter, the closing report, and a runner that
aborts every rank when one fails (a failed rank must not leave the others hanging)."""

import sys
import traceback

import sparsetorch.distributed as dist

CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        raise AssertionError(what)


def finish(rank, n):
    """Sum the ranks' check counts, tear the group down, and print the line the test reads."""
    total = [None] * n
    dist.all_gather_object(total, CHECKS[0])
    dist.destroy_process_group()
    check(not dist.is_initialized(), "destroyed")
    if rank == 0:
        print("OK", sum(total), "checks on", n, "ranks", flush=True)


def run(main):
    try:
        main()
    except BaseException:  # noqa: BLE001 - any failure must stop every rank, not hang them
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        from mpi4py import MPI

        MPI.COMM_WORLD.Abort(1)
