"""MPI worker: a DLRM-style model (bottom MLP, three embedding tables, concatenation, top MLP)
trained with sharded tables (two placed whole, one row-wise; MLPs under DDP) against the same
model trained unsharded on the global batch in this process. Prints every step's losses and
"OK <checks> checks on N ranks".
"""

import numpy as np
from _worker_util import check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch import nn
from sparsetorch.nn.parallel import DistributedDataParallel as DDP

TABLES = {"user": (40, 6), "item": (60, 6), "cat": (9, 6)}
LOCAL, STEPS = 8, 12


def data(n, step):
    """The global batch of ``step``: dense features, per-table (ids, offsets), labels."""
    rng = np.random.default_rng(step)
    b = LOCAL * n
    dense = rng.standard_normal((b, 4)).astype("f4")
    feats = {}
    for k, (rows, _) in TABLES.items():
        sizes = rng.integers(0, 4, b)
        ids = rng.integers(0, rows, int(sizes.sum()))
        feats[k] = (ids, sizes)
    label = (rng.random(b) < 0.3).astype("f4")
    return dense, feats, label


def part(feat, lo, hi):
    ids, sizes = feat
    start = int(sizes[:lo].sum())
    s = sizes[lo:hi]
    offs = np.concatenate([[0], np.cumsum(s)[:-1]]).astype(np.int64)
    return torch.from_numpy(ids[start:start + int(s.sum())]), torch.from_numpy(offs)


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(6 * 4, 8), nn.ReLU(), nn.Linear(8, 1))


def build():
    torch.manual_seed(0)
    mlps = Top()
    tables = {k: nn.EmbeddingBag(r, d, mode="sum" if k != "cat" else "mean", sparse=True)
              for k, (r, d) in TABLES.items()}
    return mlps, tables


def forward(bottom, top, pooled, dense):
    z = torch.cat([bottom(dense)] + [pooled[k] for k in TABLES], dim=1)
    return top(z).squeeze(1)


def main():
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    loss_fn = nn.BCEWithLogitsLoss()
    # one process, global batch
    ref_mlps, ref_tables = build()
    ref_opt = torch.optim.SGD(ref_mlps.parameters(), lr=0.2)
    ref_sparse = torch.optim.Adagrad([t.weight for t in ref_tables.values()], lr=0.2)
    # sharded
    mlps, tables = build()
    ebc = dist.ShardedEmbeddingBagCollection(
        tables, sharding_type={"user": "table_wise", "item": "row_wise", "cat": "table_wise"},
        gradient_division=True)
    del tables
    bottom, top = DDP(mlps.bottom), DDP(mlps.top)
    opt = torch.optim.SGD(mlps.parameters(), lr=0.2)
    sparse_opt = torch.optim.Adagrad(list(ebc.parameters()), lr=0.2)
    lo, hi = rank * LOCAL, (rank + 1) * LOCAL
    for step in range(STEPS):
        dense, feats, label = data(n, step)
        ref_opt.zero_grad()
        ref_sparse.zero_grad()
        pooled = {k: ref_tables[k](*part(feats[k], 0, LOCAL * n)) for k in TABLES}
        ref_loss = loss_fn(forward(ref_mlps.bottom, ref_mlps.top, pooled,
                                   torch.from_numpy(dense)), torch.from_numpy(label))
        ref_loss.backward()
        ref_opt.step()
        ref_sparse.step()
        opt.zero_grad()
        sparse_opt.zero_grad()
        pooled = ebc({k: part(feats[k], lo, hi) for k in TABLES})
        loss = loss_fn(forward(bottom, top, pooled, torch.from_numpy(dense[lo:hi])),
                       torch.from_numpy(label[lo:hi]))
        loss.backward()
        opt.step()
        sparse_opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg = avg.item() / n
        if rank == 0:
            print(f"step {step}: sharded loss {avg:.6f} one-process loss {ref_loss.item():.6f}",
                  flush=True)
        check(abs(avg - ref_loss.item()) <= 1e-5 * max(1.0, abs(avg)), f"step {step} loss")
    for k, m in ebc.embedding_bags.items():
        if m.weight is not None:
            ref = ref_tables[k].weight[m.row_start:m.row_stop]
            check(np.allclose(m.weight.detach().numpy(), ref.detach().numpy(), atol=1e-5),
                  f"table {k} rows after training")
    check(ebc.plan["user"] != ebc.plan["cat"] or n == 1, "whole tables on different ranks")
    finish(rank, n)


if __name__ == "__main__":
    run(main)
