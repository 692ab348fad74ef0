"""MPI worker: sharded checkpoints. ``save DIR``: each rank writes its rows of a known table
(row-wise shards) and rank 0 the manifest. ``load DIR``: a run at another world size, row- and
table-wise, loads them and checks its rows. Prints "OK <checks> checks on N ranks".
"""

import json
import os
import sys

import numpy as np
from _worker_util import check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist

N, DIM = 29, 3


def known():
    return np.arange(N * DIM, dtype="f4").reshape(N, DIM) / 7


BAGS = 12


def global_batch(step):
    rng = np.random.default_rng(step)
    return [rng.integers(0, N, int(rng.integers(0, 4))) for _ in range(BAGS)]


def feed(bags):
    ids = np.concatenate([np.asarray(b, np.int64) for b in bags] + [np.zeros(0, np.int64)])
    offs = np.cumsum([0] + [len(b) for b in bags[:-1]]) if bags else np.zeros(0, np.int64)
    return torch.from_numpy(ids), torch.from_numpy(np.asarray(offs, np.int64))


def train(module, opt, steps, rank, n):
    """``steps`` Adam steps; rank r feeds bags r::n of each fixed global batch (loss: sum)."""
    for step in steps:
        opt.zero_grad()
        out = module(*feed(global_batch(step)[rank::n]))
        (out * out).sum().backward()
        opt.step()


def check_optimizer_state(what, path, rank, n):
    """Adam state re-shards: 2 steps at the saving world size + 1 here == 3 in one process."""
    make = lambda p: torch.optim.Adam(p, lr=0.05)
    sh = dist.ShardedEmbeddingBag(N, DIM, mode="sum", _weight=torch.from_numpy(known()))
    opt = make(sh.parameters())
    if what == "save":
        train(sh, opt, range(2), rank, n)
        sh.save_sharded(path, opt)
        return
    sh.load_sharded(path, opt)
    check(int(opt.state[sh.weight]["step"]) == 2, "step count restored")
    train(sh, opt, [2], rank, n)
    ref = torch.nn.EmbeddingBag(N, DIM, mode="sum", sparse=True,
                                _weight=torch.from_numpy(known()))
    ref_opt = make(ref.parameters())
    train(ref, ref_opt, range(3), 0, 1)
    check(np.allclose(sh.weight.detach().numpy(),
                      ref.weight.detach().numpy()[sh.row_start:sh.row_stop], atol=1e-5),
          "3 Adam steps across a re-shard")


def main():
    what, path = sys.argv[1], sys.argv[2]
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    if what == "save":
        sh = dist.ShardedEmbeddingBag(N, DIM, mode="sum")
        with torch.no_grad():
            sh.weight.copy_(torch.from_numpy(known()[sh.row_start:sh.row_stop]))
        sh.save_sharded(path)
        files = sorted(os.listdir(path))
        check(files == ["manifest.json"] + [f"shard-{r:05d}-of-{n:05d}.pt" for r in range(n)],
              f"files {files}")
        with open(os.path.join(path, "manifest.json")) as f:
            m = json.load(f)
        check(m["world_size"] == n and m["num_embeddings"] == N, "manifest")
        check(m["shards"][rank]["rows"] == [sh.row_start, sh.row_stop], "manifest rows")
    else:
        for sharding in ("row_wise", "table_wise"):
            sh = dist.ShardedEmbeddingBag(N, DIM, mode="sum", sharding_type=sharding)
            sh.load_sharded(path)
            if sh.weight is not None:
                check(np.array_equal(sh.weight.detach().numpy(),
                                     known()[sh.row_start:sh.row_stop]), f"{sharding} rows")
        bad = dist.ShardedEmbeddingBag(N + 1, DIM)
        try:
            bad.load_sharded(path)
        except RuntimeError as e:
            check("29 x 3" in str(e), str(e))
        else:
            check(False, "shape mismatch refused")
    check_optimizer_state(what, path + "-trained", rank, n)
    finish(rank, n)


if __name__ == "__main__":
    run(main)
