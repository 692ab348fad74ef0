"""Sparse all-reduce checks run by ``_worker_collectives.py`` (inside an MPI job).

Each case builds every rank's sparse input from a seed; the result on this rank must equal the
dense reduction of the densified inputs (implicit zeros included), keep the layout and dtype,
be coalesced, and replace the tensor's payload in place.
"""

import numpy as np

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch.distributed import ReduceOp

_REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.AVG: np.mean, ReduceOp.MAX: np.max,
           ReduceOp.MIN: np.min, ReduceOp.PRODUCT: np.prod}


def _coo(r, shape, nnz, dense=(), dup=False, dtype="float32", empty_on=()):
    """A COO input of rank ``r``: random positions (duplicates if ``dup``), hybrid if ``dense``."""
    rng = np.random.default_rng(1000 + r)
    if r in empty_on:
        nnz = 0
    idx = np.stack([rng.integers(0, s, nnz) for s in shape])
    if not dup and nnz:
        _, first = np.unique(idx, axis=1, return_index=True)
        idx = idx[:, np.sort(first)]
    vals = rng.standard_normal((idx.shape[1],) + tuple(dense)).astype(dtype)
    if dtype.startswith("int"):
        vals = rng.integers(-4, 5, vals.shape).astype(dtype)
    return torch.sparse_coo_tensor(torch.from_numpy(idx.astype("int64")), torch.from_numpy(vals),
                                   tuple(shape) + tuple(dense))


def _expect(inputs, op):
    dense = np.stack([t.to_dense().numpy() for t in inputs])
    return _REDUCE[op](dense, axis=0).astype(dense.dtype)


def _one(rank, n, make, op, check, close, what, async_op=False):
    inputs = [make(r) for r in range(n)]
    t = make(rank)
    layout, dtype, obj, v = t.layout, t.dtype, t, t._version
    w = dist.all_reduce(t, op=op, async_op=async_op)
    if async_op:
        w.wait()
    check(t is obj and t.layout is layout and t.dtype is dtype, f"{what}: same tensor/layout/dtype")
    check(t._version > v, f"{what}: version bumped")
    if layout is torch.sparse_coo:
        check(t.is_coalesced(), f"{what}: result coalesced")
        check(t._nnz() <= sum(x._nnz() for x in inputs), f"{what}: O(total nnz) result")
    close(t.to_dense().numpy(), _expect(inputs, op), f"{what} {op}", 1e-4)


def check_sparse(rank, n, check, close):
    ops = [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT]
    cases = {
        "coo 2-D": lambda r: _coo(r, (6, 5), 8),
        "coo uncoalesced": lambda r: _coo(r, (4, 3), 10, dup=True),
        "coo hybrid row-sparse uncoalesced": lambda r: _coo(r, (20,), 7, dense=(4,), dup=True),
        "coo 3-D": lambda r: _coo(r, (3, 4, 5), 9, dtype="float64"),
        "coo 1-D": lambda r: _coo(r, (9,), 4),
        "coo empty on rank 0": lambda r: _coo(r, (6, 5), 8, empty_on=(0,)),
        "coo empty everywhere": lambda r: _coo(r, (6, 5), 8, empty_on=range(n)),
        "coo int64": lambda r: _coo(r, (5, 5), 6, dtype="int64"),
        "csr": lambda r: _coo(r, (5, 7), 9).to_sparse_csr(),
        "csr float64 empty on last": lambda r: _coo(r, (5, 7), 9, dtype="float64",
                                                    empty_on=(n - 1,)).to_sparse_csr(),
    }
    for what, make in cases.items():
        for op in ops:
            if op is ReduceOp.AVG and what == "coo int64":
                continue
            _one(rank, n, make, op, check, close, what)
    # async, polled on one rank only, interleaved with a dense collective: every rank issues its
    # MPI calls at call time, so the order matches whatever each rank polls
    make = cases["coo hybrid row-sparse uncoalesced"]
    t = make(rank)
    w = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    d = torch.full((3,), float(rank))
    wd = dist.all_reduce(d, async_op=True)
    if rank == 0:
        for _ in range(3):
            w.is_completed()
    wd.wait()
    w.wait()
    check(w.is_completed(), "sparse Work completed")
    close(t.to_dense().numpy(), _expect([make(r) for r in range(n)], ReduceOp.AVG), "async sparse")
    close(d.numpy(), np.full(3, sum(range(n)), "f4"), "dense interleaved with sparse")
    _one(rank, n, cases["csr"], ReduceOp.SUM, check, close, "async csr", async_op=True)
    # a real row-sparse gradient: Embedding(sparse=True)
    torch.manual_seed(0)
    emb = torch.nn.Embedding(30, 4, sparse=True)
    rng = np.random.default_rng(rank)
    emb(torch.from_numpy(rng.integers(0, 30, 12))).sum().backward()
    grads = [None] * n
    dist.all_gather_object(grads, emb.weight.grad.to_dense().numpy())
    g = emb.weight.grad
    dist.all_reduce(g, op=ReduceOp.AVG)
    check(g.layout is torch.sparse_coo, "embedding grad stays sparse")
    close(g.to_dense().numpy(), np.mean(grads, axis=0), "embedding grad AVG")
