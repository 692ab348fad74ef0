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
    finish(rank, n)


if __name__ == "__main__":
    run(main)
