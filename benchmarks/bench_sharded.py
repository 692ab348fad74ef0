"""A sharded embedding table's training step beside the replicated one, under MPI (issue 21).

    mpirun -n 2 python benchmarks/bench_sharded.py                    # 1M x 32 table
    mpirun -n 3 python benchmarks/bench_sharded.py
    mpirun -n 2 python benchmarks/bench_sharded.py --mem-limit-mb 192 # the table won't fit
    mpirun -n 2 python benchmarks/bench_sharded.py --quick

One training step of an ``N x d`` float32 table with Adagrad (state: one table-sized
accumulator), each rank feeding its own batch of ``B`` bags of ``L`` random ids (sum pooling):

- ``replicated``: every rank holds the whole table (DDP's way): local ``EmbeddingBag`` forward
  and backward, ``all_reduce`` of the row-sparse gradient (sparse all-gather), Adagrad step;
- ``sharded``: ``ShardedEmbeddingBag`` (row-wise): ids all-to-all'd to their owners, partial
  pooled rows all-to-all'd back, their gradients returned to the owners, Adagrad on own rows.

Times are the slowest rank's median step. Bytes are what one rank receives from the others,
counted at the backend (the replicated step's all-gather-v; the sharded step's all-to-all-v).
Memory is the table plus optimizer state held per rank. ``--mem-limit-mb`` sets an artificial
per-rank limit: a variant whose table and state exceed it is not run (it would not fit).
"""

from __future__ import annotations

import time

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
import sparsetorch.distributed as dist
from sparsetorch import nn
from sparsetorch.distributed._group import default_group


def count_bytes(backend, names, me, box):
    """Wrap ``backend``'s ``alltoallv`` / ``allgatherv`` / ``allgather`` to add the bytes this
    rank receives from other ranks to ``box[0]``."""
    def wrap(name):
        fn = getattr(backend, name)

        def counted(*a):
            if name == "alltoallv":
                recv, rc = a[2], a[3]
                box[0] += sum(int(c) for r, c in enumerate(rc) if r != me) * recv.itemsize
            elif name == "allgatherv":
                recv, counts = a[1], a[2]
                box[0] += sum(int(c) for r, c in enumerate(counts) if r != me) * recv.itemsize
            else:
                box[0] += (a[1].size - a[0].size) * a[1].itemsize
            return fn(*a)

        setattr(backend, name, counted)
    for n in names:
        wrap(n)


def batch(rng, n, b, length):
    ids = rng.integers(0, n, b * length)
    return st.from_numpy(ids), st.from_numpy(np.arange(0, b * length, length))


def run_variant(name, make, steps, n, b, length, rank, world, box):
    model, opt = make()
    rng = np.random.default_rng(1000 + rank)
    times = []
    box[0] = 0
    for i in range(steps + 1):
        ids, offs = batch(rng, n, b, length)
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        out = model(ids, offs)
        out.sum().backward()
        if name == "replicated":
            g = model.weight.grad
            dist.all_reduce(g)
        opt.step()
        dt = time.perf_counter() - t0
        if i == 0:
            box[0] = 0  # the first step warms up (and allocates the optimizer's state)
        else:
            times.append(dt)
    worst = [None] * world
    dist.all_gather_object(worst, (float(np.median(times)), box[0] / steps))
    return max(w[0] for w in worst), max(w[1] for w in worst)


def main() -> None:
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="table rows N")
    p.add_argument("--dim", type=int, default=32, help="embedding dimension d")
    p.add_argument("--batch", type=int, default=2048, help="bags per rank B")
    p.add_argument("--bag", type=int, default=20, help="ids per bag L")
    p.add_argument("--steps", type=int, default=5, help="timed steps (after one warm-up)")
    p.add_argument("--mem-limit-mb", type=float, default=0.0,
                   help="artificial per-rank memory limit for table + optimizer state")
    args = p.parse_args()
    if args.quick:
        args.rows, args.batch, args.steps = 100_000, 512, 3
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    n, d, b, length = args.rows, args.dim, args.batch, args.bag
    full_mb = 2 * n * d * 4 / 1e6  # table + Adagrad's accumulator
    block = -(-n // world)
    shard_mb = 2 * block * d * 4 / 1e6
    limit = args.mem_limit_mb or float("inf")
    box = [0]
    results = {}

    def replicated():
        st.manual_seed(0)
        m = nn.EmbeddingBag(n, d, mode="sum", sparse=True)
        return m, st.optim.Adagrad(m.parameters(), lr=0.01)

    def sharded():
        m = dist.ShardedEmbeddingBag(n, d, mode="sum")
        return m, st.optim.Adagrad(m.parameters(), lr=0.01)

    count_bytes(default_group().backend, ("allgatherv", "allgather"), rank, box)
    probe = dist.ShardedEmbeddingBag(1, 1)  # makes the tables' group: count its all-to-alls
    count_bytes(probe.group.backend, ("alltoallv",), rank, box)
    del probe
    if rank == 0 and not args.no_wait:
        _harness.wait_for_quiet()
    for name, make, mb in (("replicated", replicated, full_mb), ("sharded", sharded, shard_mb)):
        if mb > limit:
            results[name] = None
            continue
        results[name] = run_variant(name, make, args.steps, n, b, length, rank, world, box)
    if rank == 0:
        _harness.print_environment(("numpy", "scipy", "sparsetorch", "mpi4py"))
        print(f"{world} ranks, table {n} x {d} float32 + Adagrad, {b} bags x {length} ids per "
              f"rank, limit {args.mem_limit_mb or 'none'} MB per rank\n")
        print("| variant | step (slowest rank, median) | received per rank per step | "
              "table + state per rank |\n|---|---|---|---|")
        for name, mb in (("replicated", full_mb), ("sharded", shard_mb)):
            r = results[name]
            if r is None:
                print(f"| {name} | does not fit | - | {mb:.0f} MB > {limit:.0f} MB |")
            else:
                print(f"| {name} | {r[0] * 1e3:.1f} ms | {r[1] / 1e6:.2f} MB | {mb:.0f} MB |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
