"""Sparse vs dense all-reduce of an EmbeddingBag gradient, under MPI (issue 8).

    mpirun -n 2 python benchmarks/bench_allreduce.py           # 9 samples, 1M x 64 table
    mpirun -n 3 python benchmarks/bench_allreduce.py
    mpirun -n 2 python benchmarks/bench_allreduce.py --quick   # 100k x 64 table, 3 samples

Each rank holds the gradient of a 1M x 64 float32 table in which 80k random rows were touched
(what ``EmbeddingBag(sparse=True)`` produces: coalesced, row-sparse hybrid COO). Variants:

- ``sparse all_reduce``: ``dist.all_reduce`` of the sparse gradient (all-gather of the touched
  rows' indices and values, then a local coalesce): the result is the dense sum's sparse form;
- ``dense all_reduce``: ``dist.all_reduce`` of the same gradient densified (256 MB), i.e. what
  DDP does with a dense embedding gradient.

Times are the slowest rank's median (a collective ends when its last rank does). Bytes are
what one rank receives: the sparse all-gather brings in the other ranks' rows
((p-1) * k * (8 + 4 d)); a ring all-reduce moves 2 (p-1)/p * 4 N d per rank (MPICH picks its
own algorithm; on shared memory the bytes copied are of that order). Target: >= 10x less time
and bytes for the sparse all-reduce. See docs/distributed.md for the scaling model.
"""

from __future__ import annotations

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
import sparsetorch.distributed as dist


def row_sparse_grad(n, d, k, seed):
    """A coalesced row-sparse gradient: ``k`` random unique sorted rows of an ``n x d`` table."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
    vals = rng.standard_normal((k, d)).astype(np.float32)
    return st.sparse_coo_tensor(st.from_numpy(rows[None]), st.from_numpy(vals), (n, d),
                                is_coalesced=True)


def main() -> None:
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="table rows N")
    p.add_argument("--dim", type=int, default=64, help="embedding dimension d")
    p.add_argument("--touched", type=int, default=80_000, help="touched rows per rank k")
    args = p.parse_args()
    if args.quick:
        args.rows, args.touched, args.samples = 100_000, 8_000, 3
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    n, d, k = args.rows, args.dim, args.touched
    grad = row_sparse_grad(n, d, k, seed=rank)
    payload = grad._data
    dense = grad.to_dense()

    def sparse_run(reps):
        dist.barrier()
        for _ in range(reps):
            grad._data = payload  # restore this rank's gradient (no copy)
            dist.all_reduce(grad)

    def dense_run(reps):
        dist.barrier()
        for _ in range(reps):
            dist.all_reduce(dense)

    if rank == 0 and not args.no_wait:
        _harness.wait_for_quiet()
    dist.barrier()
    res = _harness.compare({"sparse all_reduce": sparse_run, "dense all_reduce": dense_run},
                           inner_iters=1, samples=args.samples, warmup=args.warmup)
    # correctness of what was timed: the sparse result densified equals the dense reduction
    grad._data = payload
    dist.all_reduce(grad)
    check = grad.to_dense()
    ref = payload_dense = st.from_numpy(np.zeros((n, d), np.float32))
    for r in range(world):
        ref += row_sparse_grad(n, d, k, seed=r).to_dense()
    assert float((check - ref).abs().max()) < 1e-4, "sparse all_reduce result is wrong"
    del payload_dense
    every = [None] * world
    dist.all_gather_object(every, res)
    if rank != 0:
        dist.destroy_process_group()
        return
    worst = {name: {key: max(r[name][key] for r in every) for key in res[name]} for name in res}
    union = grad._nnz()
    sparse_bytes = (world - 1) * k * (8 + 4 * d) + 16 * world
    dense_bytes = 2 * (world - 1) / world * 4 * n * d
    _harness.print_environment(("numpy", "scipy", "sparsetorch", "mpi4py"))
    print(f"{world} ranks, table {n} x {d} float32, {k} touched rows per rank "
          f"({union} in the union)")
    _harness.print_table(worst, baseline="dense all_reduce",
                         title="all_reduce of the gradient (slowest rank's time)")
    print("\n| variant | bytes received per rank | / dense |\n|---|---|---|")
    ratio = sparse_bytes / dense_bytes
    print(f"| sparse all_reduce | {sparse_bytes / 1e6:.1f} MB | {ratio:.3f}x |")
    print(f"| dense all_reduce | {dense_bytes / 1e6:.1f} MB | 1.00x |")
    t = worst["dense all_reduce"]["median_us"] / worst["sparse all_reduce"]["median_us"]
    print(f"\nsparse is {t:.1f}x faster and moves {dense_bytes / sparse_bytes:.1f}x fewer bytes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
