"""MPI worker: all_to_all, all_to_all_single (equal and uneven splits, async) and the object
collectives, against a single-process reference built from every rank's seeded input.

Run as ``mpirun -n N python _worker_alltoall.py``; prints "OK <checks> checks on N ranks".
"""

import numpy as np
from _worker_util import check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist


def splits(r, n):
    """Rows rank ``r`` sends to each rank: uneven, zeros included."""
    return [(r * 3 + q * 2 + 1) % 4 for q in range(n)]


def rows(r, q, n, d, dtype):
    """The rows rank ``r`` sends to rank ``q``."""
    rng = np.random.default_rng(1000 * r + q)
    return np.asarray(rng.integers(-50, 50, (splits(r, n)[q], d)), dtype=dtype)


def check_single(rank, n):
    for dtype in ("float32", "int64", "float64", "complex64"):
        d = 3
        x = np.concatenate([rows(rank, q, n, d, dtype) for q in range(n)])
        want = np.concatenate([rows(r, rank, n, d, dtype) for r in range(n)])
        out = torch.empty(want.shape, dtype=getattr(torch, dtype))
        v = out._version
        dist.all_to_all_single(out, torch.from_numpy(x), output_split_sizes=[splits(r, n)[rank]
                               for r in range(n)], input_split_sizes=splits(rank, n))
        check(np.array_equal(out.numpy(), want), f"all_to_all_single uneven {dtype}")
        check(out._version == v + 1, "all_to_all_single bumps the version")
    # equal splits (None), 1-D, async
    x = torch.arange(2 * n) + 100 * rank
    out = torch.empty(2 * n, dtype=torch.int64)
    work = dist.all_to_all_single(out, x, async_op=True)
    check(work.wait() is True, "Work.wait")
    want = np.concatenate([np.arange(2 * rank, 2 * rank + 2) + 100 * r for r in range(n)])
    check(np.array_equal(out.numpy(), want), "all_to_all_single equal async")
    check(work.is_completed(), "Work.is_completed after wait")
    # a non-contiguous output is staged and written back
    base = torch.zeros(2 * n, 2, dtype=torch.int64)
    dist.all_to_all_single(base[:, 0], x)
    check(np.array_equal(base[:, 0].numpy(), want) and not base[:, 1].numpy().any(),
          "all_to_all_single strided output")
    # empty everywhere
    e = torch.empty(0, 4)
    dist.all_to_all_single(e, torch.empty(0, 4), [0] * n, [0] * n)
    # errors, raised before any communication (identically on every rank)
    for args, exc, msg in [
        ((torch.empty(2 * n), torch.arange(2 * n)), ValueError, "different dtypes"),
        ((torch.empty(2 * n + 1), torch.empty(2 * n + 1)), RuntimeError, "divide equally"),
        ((torch.empty(2 * n), torch.empty(2 * n), None, [1] * n), RuntimeError,
         "Split sizes doesn't match"),
        ((torch.empty(2 * n), [1.0]), TypeError, "Expected parameter `input`"),
    ]:
        try:
            dist.all_to_all_single(*args)
        except exc as e:
            check(msg in str(e), f"message {e}")
        else:
            check(False, f"no {exc.__name__} for {msg}")


def check_list(rank, n):
    # pair (r -> q) sends a tensor of shape (r + q + 1, 2)
    def part(r, q):
        return np.full((r + q + 1, 2), 10 * r + q, dtype="float32")

    ins = [torch.from_numpy(part(rank, q)) for q in range(n)]
    outs = [torch.empty(r + rank + 1, 2) for r in range(n)]
    dist.all_to_all(outs, ins)
    for r in range(n):
        check(np.array_equal(outs[r].numpy(), part(r, rank)), f"all_to_all from {r}")
    outs = [torch.empty(r + rank + 1, 2) for r in range(n)]
    w = dist.all_to_all(outs, ins, async_op=True)
    w.wait()
    check(all(np.array_equal(outs[r].numpy(), part(r, rank)) for r in range(n)),
          "all_to_all async")
    check(len(w.result()) == n, "Work.result")
    try:
        dist.all_to_all(outs[:1], ins)
    except RuntimeError as e:
        check("world_size" in str(e), str(e))
    else:
        check(False, "all_to_all with a short list")
    try:
        dist.all_to_all(tuple(outs), ins)
    except TypeError as e:
        check("List[torch.Tensor]" in str(e), str(e))
    else:
        check(False, "all_to_all with a tuple")


def check_objects(rank, n):
    out = [None]
    src = n - 1
    inp = [{"to": q, "data": list(range(q))} for q in range(n)] if rank == src else None
    dist.scatter_object_list(out, inp, src=src)
    check(out[0] == {"to": rank, "data": list(range(rank))}, "scatter_object_list")
    try:
        dist.scatter_object_list([], inp, src=src)
    except ValueError as e:
        check("at least 1" in str(e), str(e))
    else:
        check(False, "scatter_object_list empty output")
    got = [None] * n
    dist.all_gather_object(got, ("r", rank))
    check(got == [("r", r) for r in range(n)], "all_gather_object")
    lst = [rank, "x"] if rank == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    check(lst == [1, "x"], "broadcast_object_list")
    g = [None] * n if rank == 0 else None
    dist.gather_object(rank * 2, g, dst=0)
    check(rank != 0 or g == [2 * r for r in range(n)], "gather_object")


def main():
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    check_single(rank, n)
    check_list(rank, n)
    check_objects(rank, n)
    finish(rank, n)


if __name__ == "__main__":
    run(main)
