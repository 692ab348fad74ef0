"""MPI worker: DistributedDataParallel against single-process training, and DistributedSampler.

Run as ``mpirun -n N python _worker_ddp.py``. Every rank also trains the single-process
reference on the whole global batch, so it can compare its DDP replica with it after each
configuration. Exits non-zero (MPI_Abort) on the first failure; rank 0 prints "OK ...".
"""


import numpy as np
from _worker_util import check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch import nn
from sparsetorch.nn.parallel import DistributedDataParallel as DDP
from sparsetorch.utils.data.distributed import DistributedSampler

B = 12  # global batch: divisible by 2 and 3 ranks
BAG = 3  # EmbeddingBag inputs per sample


class Net(nn.Module):
    """Dense + sparse: an EmbeddingBag and an Embedding with sparse gradients, two Linears."""

    def __init__(self, unused=False):
        super().__init__()
        self.bag = nn.EmbeddingBag(60, 8, mode="mean", sparse=True)
        self.item = nn.Embedding(40, 8, sparse=True)
        self.l1 = nn.Linear(16, 16)
        self.l2 = nn.Linear(16, 1)
        self.register_buffer("scale", torch.ones(1))
        if unused:
            self.extra = nn.Linear(4, 4)  # never used in forward

    def forward(self, bags, items, use_item=True):
        offsets = torch.arange(0, bags.shape[0], BAG)
        h = self.bag(bags, offsets)
        h = torch.cat([h, self.item(items) if use_item else torch.zeros_like(h)], dim=1)
        return self.l2(torch.relu(self.l1(h))).squeeze(-1) * self.scale


def data(steps):
    g = torch.Generator().manual_seed(7)
    n = steps * B
    return (torch.randint(0, 60, (n * BAG,), generator=g), torch.randint(0, 40, (n,), generator=g),
            torch.randn(n, generator=g))


def net(**kw):
    torch.manual_seed(3)
    return Net(**kw)


def optimizers(model, kind):
    dense = [p for n, p in model.named_parameters() if not n.split(".")[-2] in ("bag", "item")]
    sparse = [p for n, p in model.named_parameters() if n.split(".")[-2] in ("bag", "item")]
    if kind == "sgd":
        return [torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)]
    if kind == "adam+sparseadam":
        return [torch.optim.Adam(dense, lr=0.01), torch.optim.SparseAdam(sparse, lr=0.01)]
    return [torch.optim.Adagrad(model.parameters(), lr=0.05)]


def batch(d, idx):
    bags, items, y = d
    bidx = (idx[:, None] * BAG + torch.arange(BAG)[None, :]).reshape(-1)
    return bags[bidx], items[idx], y[idx]


def loss_of(model, d, idx):
    bags, items, y = batch(d, idx)
    return nn.functional.mse_loss(model(bags, items), y)


def same(ref, ddp_model, what, tol=1e-5):
    for (name, a), b in zip(ref.state_dict().items(), ddp_model.module.state_dict().values()):
        err = float((a - b).abs().max()) if a.numel() else 0.0
        check(err <= tol, f"{what}: {name} differs by {err}")


def check_training(rank, n, kind, steps=4, **ddp_kw):
    """DDP on B/n samples a rank == one process on the B-sample global batch."""
    d = data(steps)
    ref, rep = net(), net()
    if rank != 0:
        with torch.no_grad():
            for p in rep.parameters():
                p.add_(0.5)  # replaced by rank 0's values at wrap time
            rep.scale.fill_(3.0)
    model = DDP(rep, **ddp_kw)
    check(float(rep.scale) == 1.0, "buffers broadcast from rank 0")
    opt_ref, opt = optimizers(ref, kind), optimizers(model, kind)
    local = B // n
    for s in range(steps):
        glob = torch.arange(s * B, (s + 1) * B)
        for o in opt_ref:
            o.zero_grad()
        loss_of(ref, d, glob).backward()
        for o in opt_ref:
            o.step()
        for o in opt:
            o.zero_grad()
        loss_of(model, d, glob[rank * local:(rank + 1) * local]).backward()
        check(model.module.bag.weight.grad.layout is torch.sparse_coo, "sparse grad stays sparse")
        for o in opt:
            o.step()
    same(ref, model, f"{kind} {ddp_kw}")
    keys = list(model.state_dict())
    check(keys[0].startswith("module.") and model.module is rep, "state_dict has module. prefix")


def check_no_sync(rank, n):
    """Two micro-batches, the first under no_sync: same as one process accumulating both."""
    d = data(2)
    ref, model = net(), DDP(net())
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    local = B // n
    for m in range(2):
        loss_of(ref, d, torch.arange(m * B, (m + 1) * B)).backward()
    mine = [torch.arange(m * B + rank * local, m * B + (rank + 1) * local) for m in range(2)]
    with model.no_sync():
        loss_of(model, d, mine[0]).backward()
    local_w = model.module.l2.weight.grad.clone()
    loss_of(model, d, mine[1]).backward()
    check(not torch.equal(local_w, model.module.l2.weight.grad), "synced after no_sync")
    for (name, p), q in zip(ref.named_parameters(), model.module.parameters()):
        err = float((p.grad.to_dense() - q.grad.to_dense()).abs().max())
        check(err < 1e-5, f"no_sync: grad of {name} differs by {err}")
    opt_ref.step()
    opt.step()
    same(ref, model, "no_sync")


def check_unused(rank, n):
    d = data(1)
    model = DDP(net(unused=True), find_unused_parameters=True)
    loss_of(model, d, torch.arange(rank, B, n)).backward()
    check(model.module.extra.weight.grad is None, "globally unused parameter: grad stays None")
    check(model.module.l1.weight.grad is not None, "used parameters are reduced")
    # a parameter used on rank 0 only: the others contribute zeros (sparse: an empty gradient)
    model = DDP(net(), find_unused_parameters=True)
    bags, items, y = batch(d, torch.arange(rank, B, n))
    nn.functional.mse_loss(model(bags, items, use_item=rank == 0), y).backward()
    every = [None] * n
    dist.all_gather_object(every, model.module.item.weight.grad.to_dense().numpy())
    check(all(np.allclose(e, every[0]) for e in every), "rank-0-only sparse grad on all ranks")
    # without find_unused_parameters: torch's error, on every rank
    model = DDP(net(unused=True))
    try:
        loss_of(model, d, torch.arange(rank, B, n)).backward()
    except RuntimeError as e:
        check("find_unused_parameters=True" in str(e) and "extra.weight" in str(e), str(e))
    else:
        check(False, "unused parameters without find_unused_parameters must raise")


def check_sampler(rank, n):
    ds = list(range(10))
    for shuffle in (False, True):
        for drop_last in (False, True):
            s = DistributedSampler(ds, shuffle=shuffle, drop_last=drop_last, seed=5)
            s.set_epoch(2)
            mine = list(s)
            every = [None] * n
            dist.all_gather_object(every, mine)
            check(len(mine) == len(s) and all(len(e) == len(s) for e in every), "equal shares")
            flat = [i for e in every for i in e]
            if drop_last:
                check(len(set(flat)) == len(flat) == (10 // n) * n, "drop_last: disjoint shares")
            else:
                check(set(flat) == set(ds), "padding: the shares cover the dataset")
    a = DistributedSampler(ds, seed=1)
    b = DistributedSampler(ds, seed=1)
    b.set_epoch(1)
    check(list(a) != list(b) or n * len(a) > 10, "set_epoch reshuffles")


def main():
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    check_training(rank, n, "sgd")
    check_training(rank, n, "adam+sparseadam", bucket_cap_mb=0.0005)  # several dense buckets
    check_training(rank, n, "adagrad", gradient_as_bucket_view=True)
    check_no_sync(rank, n)
    check_unused(rank, n)
    check_sampler(rank, n)
    finish(rank, n)


if __name__ == "__main__":
    run(main)
