"""MPI worker: ShardedEmbeddingBag against the unsharded EmbeddingBag on the global batch.

Every rank builds every rank's batch from seeds, runs the unsharded reference on the
concatenated (global) batch itself, and compares its own pooled rows, its rows' gradient and,
after a few steps of every optimizer, its rows of the table. ``mpirun -n N python
_worker_sharded.py``; prints "OK <checks> checks on N ranks".
"""

import numpy as np
from _worker_util import check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch import nn

N, DIM, BAGS = 23, 4, 5


def batch(r, step=0):
    """Rank ``r``'s bags: 1-D ids + offsets (sizes 0..4, empty bags included), weights."""
    rng = np.random.default_rng(10 * r + step)
    sizes = rng.integers(0, 5, BAGS)
    sizes[r % BAGS] = 0
    ids = rng.integers(0, N, int(sizes.sum()))
    ids[:2] = 5  # padding_idx in some runs
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return ids, offsets, rng.standard_normal(ids.size).astype("f4")


def global_batch(n, step=0):
    ids, offs, ws = [], [], []
    base = 0
    for r in range(n):
        i, o, w = batch(r, step)
        ids.append(i)
        offs.append(o + base)
        ws.append(w)
        base += i.size
    return np.concatenate(ids), np.concatenate(offs), np.concatenate(ws)


def table():
    return torch.from_numpy(np.random.default_rng(7).standard_normal((N, DIM)).astype("f4"))


def grads(r):
    return np.random.default_rng(500 + r).standard_normal((BAGS, DIM)).astype("f4")


def close(a, b, what, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    check(a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}")
    check(np.allclose(a, b, rtol=tol, atol=tol), f"{what}: max diff {np.abs(a - b).max()}")
    return np.array_equal(a, b)


def dense_rows(grad, lo, hi):
    return grad.to_dense()[lo:hi] if grad.layout is torch.sparse_coo else grad[lo:hi]


def check_forward_backward(rank, n, bitwise):
    for sharding in ("row_wise", "table_wise"):
        for mode in ("sum", "mean", "max", "sqrtn"):
            for pad in (None, 5):
                for weighted in ((False, True) if mode != "max" else (False,)):
                    ids, offs, w = batch(rank)
                    gi, go, gw = global_batch(n)
                    ref = nn.EmbeddingBag(N, DIM, mode=mode, padding_idx=pad, sparse=True,
                                          _weight=table())
                    sh = dist.ShardedEmbeddingBag(N, DIM, mode=mode, padding_idx=pad,
                                                  sharding_type=sharding, owner=n - 1,
                                                  _weight=table())
                    args = (torch.from_numpy(ids), torch.from_numpy(offs))
                    gargs = (torch.from_numpy(gi), torch.from_numpy(go))
                    kw = {"per_sample_weights": torch.from_numpy(w)} if weighted else {}
                    gkw = {"per_sample_weights": torch.from_numpy(gw)} if weighted else {}
                    out = sh(*args, **kw)
                    want = ref(*gargs, **gkw)
                    what = f"{sharding} {mode} pad={pad} weighted={weighted}"
                    same = close(out, want[rank * BAGS:(rank + 1) * BAGS], "forward " + what)
                    bitwise[mode] = bitwise.get(mode, True) and same
                    gall = np.concatenate([grads(r) for r in range(n)])
                    (out * torch.from_numpy(grads(rank))).sum().backward()
                    (want * torch.from_numpy(gall)).sum().backward()
                    lo, hi = sh.row_start, sh.row_stop
                    if sh.weight is None:
                        check(hi == lo and len(list(sh.parameters())) == 0, "no rows, no param")
                        continue
                    check(sh.weight.grad.layout is torch.sparse_coo, "row-sparse gradient")
                    close(dense_rows(sh.weight.grad, 0, hi - lo),
                          dense_rows(ref.weight.grad, lo, hi), "grad " + what)
                    mine = set((sh.weight.grad.coalesce().indices()[0] + lo).tolist())
                    ri = ref.weight.grad.coalesce().indices()[0].tolist()
                    check(mine == {i for i in ri if lo <= i < hi}, "grad rows " + what)


OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1),
    "SGD-momentum-wd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "Adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1),
    "Adam-exact": lambda p: torch.optim.Adam(p, lr=0.05, weight_decay=0.01),
    "Adam-lazy": lambda p: torch.optim.Adam(p, lr=0.05, sparse_mode="lazy"),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=0.05),
    "RMSprop": lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5),
    "Adadelta": lambda p: torch.optim.Adadelta(p),
    "RowWiseAdagrad": lambda p: torch.optim.RowWiseAdagrad(p, lr=0.1),
    "SparseAdam": lambda p: torch.optim.SparseAdam(p, lr=0.05),
}


def check_training(rank, n):
    for name, make in OPTIMIZERS.items():
        for mode in ("mean", "max"):  # max + lazy: the gradient lists the same rows
            ref = nn.EmbeddingBag(N, DIM, mode=mode, padding_idx=5, sparse=True,
                                  _weight=table())
            sh = dist.ShardedEmbeddingBag(N, DIM, mode=mode, padding_idx=5, _weight=table())
            opt_ref, opt = make(ref.parameters()), make(sh.parameters())
            for step in range(3):
                ids, offs, _ = batch(rank, step)
                gi, go, _ = global_batch(n, step)
                for o in (opt, opt_ref):
                    o.zero_grad()
                out = sh(torch.from_numpy(ids), torch.from_numpy(offs))
                (out * torch.from_numpy(grads(rank))).sum().backward()
                want = ref(torch.from_numpy(gi), torch.from_numpy(go))
                gall = np.concatenate([grads(r) for r in range(n)])
                (want * torch.from_numpy(gall)).sum().backward()
                opt.step()
                opt_ref.step()
            close(sh.weight, ref.weight[sh.row_start:sh.row_stop], f"{name} {mode} 3 steps",
                  1e-4)


def check_shapes_and_errors(rank, n):
    sh = dist.ShardedEmbeddingBag(N, DIM, mode="sum", _weight=table())
    ref = nn.EmbeddingBag(N, DIM, mode="sum", _weight=table())
    x = torch.from_numpy(np.random.default_rng(rank).integers(0, N, (3, 2)))
    close(sh(x), ref(x), "2-D input")  # same input everywhere: same rows
    ids, offs, _ = batch(rank)
    lo = torch.from_numpy(np.concatenate([offs, [ids.size]]))
    sh2 = dist.ShardedEmbeddingBag(N, DIM, mode="sum", include_last_offset=True,
                                   _weight=table())
    close(sh2(torch.from_numpy(ids), lo), ref(torch.from_numpy(ids), torch.from_numpy(offs)),
          "include_last_offset")
    with torch.no_grad():
        out = sh(torch.from_numpy(ids), torch.from_numpy(offs))
    check(out.grad_fn is None, "no_grad forward")
    for args, exc in [((torch.tensor([N]), torch.tensor([0])), IndexError),
                      ((torch.tensor([1]),), ValueError),
                      ((torch.tensor([1]), torch.tensor([1])), RuntimeError)]:
        try:
            sh(*args)
        except exc:
            check(True, "")
        else:
            check(False, f"no {exc.__name__} for {args}")
    try:
        dist.ShardedEmbeddingBag(N, DIM, max_norm=1.0)
    except NotImplementedError:
        check(True, "")
    else:
        check(False, "max_norm refused")


def main():
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    bitwise = {}
    check_forward_backward(rank, n, bitwise)
    check_training(rank, n)
    check_shapes_and_errors(rank, n)
    if rank == 0:
        print("bitwise-equal forward per mode:", bitwise, flush=True)
    finish(rank, n)


if __name__ == "__main__":
    run(main)
