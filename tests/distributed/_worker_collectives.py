"""MPI worker: every collective, dense and sparse, against the densified expectation.

Run as ``mpirun -n N python _worker_collectives.py``. Every rank builds every rank's input from
a seed (so each can compute the expected result with NumPy), runs the collective and compares.
Exits non-zero (MPI_Abort) on the first failure; prints "OK <checks>" on rank 0 when done.
"""


import numpy as np
from _worker_util import CHECKS, check, finish, run

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch.distributed import ReduceOp

NP_OPS = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MAX: np.max,
          ReduceOp.MIN: np.min, ReduceOp.AVG: np.mean}


def close(got, want, what, tol=1e-5):
    got = np.asarray(got)
    want = np.asarray(want)
    check(got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}")
    check(np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True), f"{what}: {got} != {want}")


def expected(arrays, op):
    stack = np.stack(arrays)
    if op is ReduceOp.BAND:
        return np.bitwise_and.reduce(stack)
    if op is ReduceOp.BOR:
        return np.bitwise_or.reduce(stack)
    if op is ReduceOp.BXOR:
        return np.bitwise_xor.reduce(stack)
    out = NP_OPS[op](stack, axis=0)
    return out.astype(arrays[0].dtype) if op is not ReduceOp.AVG else out


# ---- dense ----

def dense_input(r, shape, dtype):
    rng = np.random.default_rng(100 + r)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("int"):
        return np.asarray(rng.integers(-5, 6, shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape) * 2, dtype=dtype)


def check_dense_all_reduce(rank, n):
    cases = [("float32", ReduceOp.SUM), ("float32", ReduceOp.AVG), ("float64", ReduceOp.MAX),
             ("float64", ReduceOp.MIN), ("float64", ReduceOp.PRODUCT), ("int64", ReduceOp.SUM),
             ("int32", ReduceOp.MAX), ("int64", ReduceOp.BAND), ("int64", ReduceOp.BOR),
             ("int64", ReduceOp.BXOR), ("float16", ReduceOp.SUM)]
    for dtype, op in cases:
        for shape in [(3, 4), (), (0, 2)]:
            arrays = [dense_input(r, shape, dtype) for r in range(n)]
            t = torch.from_numpy(arrays[rank].copy())
            v = t._version
            dist.all_reduce(t, op=op)
            close(t.numpy(), expected(arrays, op), f"all_reduce {dtype} {op} {shape}", 1e-2)
            check(t._version == v + 1, "all_reduce bumps the version counter")
    # bool: SUM is "any", PRODUCT is "all" (torch)
    arrays = [dense_input(r, (7,), "bool") for r in range(n)]
    t = torch.from_numpy(arrays[rank].copy())
    dist.all_reduce(t)
    close(t.numpy(), np.any(arrays, axis=0), "all_reduce bool SUM")
    t = torch.from_numpy(arrays[rank].copy())
    dist.all_reduce(t, op=ReduceOp.PRODUCT)
    close(t.numpy(), np.all(arrays, axis=0), "all_reduce bool PRODUCT")
    # non-contiguous view: staged and written back, the rest of the base untouched
    base = torch.zeros(4, 6) + rank
    view = base[:, ::2]
    dist.all_reduce(view)
    close(base[:, ::2].numpy(), np.full((4, 3), sum(range(n)), "f4"), "all_reduce strided view")
    close(base[:, 1::2].numpy(), np.full((4, 3), rank, "f4"), "all_reduce leaves the rest")
    # a leaf that requires grad: in place, not recorded by autograd
    p = torch.ones(3, requires_grad=True)
    dist.all_reduce(p)
    check(p.grad_fn is None and p.requires_grad, "all_reduce is not recorded by autograd")
    close(p.detach().numpy(), np.full(3, n, "f4"), "all_reduce on a leaf")
    # async
    t = torch.full((5,), float(rank))
    w = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    check(isinstance(w, dist.Work), "async_op returns a Work")
    check(w.wait() is True and w.is_completed() and w.is_success(), "Work.wait")
    close(t.numpy(), np.full(5, (n - 1) / 2, "f4"), "async all_reduce AVG")
    check(dist.all_reduce(torch.ones(1)) is None, "blocking collectives return None")


def check_dense_movement(rank, n):
    last = n - 1
    t = torch.full((2, 3), float(rank))
    dist.broadcast(t, src=last)
    close(t.numpy(), np.full((2, 3), last, "f4"), "broadcast")
    t = torch.full((4,), rank, dtype=torch.int64)
    dist.broadcast(t, src=0, async_op=True).wait()
    close(t.numpy(), np.zeros(4), "async broadcast")
    t = torch.full((3,), float(rank + 1))
    dist.reduce(t, dst=last, op=ReduceOp.PRODUCT)
    want = np.prod(np.arange(1, n + 1)) if rank == last else rank + 1
    close(t.numpy(), np.full(3, want, "f4"), "reduce")
    lst = [torch.zeros(2, 2) for _ in range(n)]
    dist.all_gather(lst, torch.full((2, 2), float(rank)))
    for r in range(n):
        close(lst[r].numpy(), np.full((2, 2), r, "f4"), "all_gather")
    out = torch.zeros(n * 2, 3)
    dist.all_gather_into_tensor(out, torch.full((2, 3), float(rank)), async_op=True).wait()
    want = np.repeat(np.arange(n, dtype="f4"), 6).reshape(n * 2, 3)
    close(out.numpy(), want, "all_gather_into_tensor")
    ins = [torch.full((3,), float(rank * 10 + i)) for i in range(n)]
    out = torch.zeros(3)
    dist.reduce_scatter(out, ins)
    close(out.numpy(), np.full(3, sum(r * 10 + rank for r in range(n)), "f4"), "reduce_scatter")
    inp = torch.arange(n * 2, dtype=torch.float64) + rank
    out = torch.zeros(2, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, inp, op=ReduceOp.MAX)
    close(out.numpy(), np.arange(rank * 2, rank * 2 + 2) + n - 1, "reduce_scatter_tensor")
    gl = [torch.zeros(2) for _ in range(n)] if rank == 0 else None
    dist.gather(torch.full((2,), float(rank)), gl, dst=0)
    if rank == 0:
        for r in range(n):
            close(gl[r].numpy(), np.full(2, r, "f4"), "gather")
    sl = [torch.full((2,), float(i * 3)) for i in range(n)] if rank == last else None
    t = torch.zeros(2)
    dist.scatter(t, sl, src=last)
    close(t.numpy(), np.full(2, rank * 3, "f4"), "scatter")


def check_p2p_and_objects(rank, n):
    right, left = (rank + 1) % n, (rank - 1) % n
    if rank % 2 == 0:
        dist.send(torch.full((3,), float(rank)), dst=right)
        got = torch.zeros(3)
        src = dist.recv(got, src=left)
    else:
        got = torch.zeros(3)
        src = dist.recv(got)  # any source
        dist.send(torch.full((3,), float(rank)), dst=right)
    check(src == left, f"recv returns the sender ({src} != {left})")
    close(got.numpy(), np.full(3, left, "f4"), "send/recv")
    buf = torch.zeros(4, dtype=torch.int64)
    wr = dist.irecv(buf, src=left, tag=7)
    ws = dist.isend(torch.full((4,), rank, dtype=torch.int64), dst=right, tag=7)
    ws.wait()
    wr.wait()
    close(buf.numpy(), np.full(4, left), "isend/irecv")
    dist.barrier()
    dist.barrier(async_op=True).wait()
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "s": "x" * rank})
    check(objs == [{"rank": r, "s": "x" * r} for r in range(n)], "all_gather_object")
    lst = [rank, "a"] if rank == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    check(lst == [1, "a"], "broadcast_object_list")
    out = [None] * n if rank == 0 else None
    dist.gather_object(rank * 2, out, dst=0)
    check(rank != 0 or out == [2 * r for r in range(n)], "gather_object")


def check_groups(rank, n):
    members = [0, n - 1]
    g = dist.new_group(members)
    if rank in members:
        check(dist.get_world_size(g) == 2 and dist.get_rank(g) == members.index(rank), "group rank")
        t = torch.full((2,), float(rank))
        dist.all_reduce(t, group=g)
        close(t.numpy(), np.full(2, n - 1, "f4"), "all_reduce in a group")
        t = torch.full((2,), float(rank))
        dist.broadcast(t, src=n - 1, group=g)  # src is a global rank
        close(t.numpy(), np.full(2, n - 1, "f4"), "broadcast in a group")
        s = torch.sparse_coo_tensor([[rank]], [1.0], (n,))
        dist.all_reduce(s, group=g)
        want = np.bincount(members, minlength=n).astype("f4")
        close(s.to_dense().numpy(), want, "sparse in a group")
    else:
        check(g is dist.GroupMember.NON_GROUP_MEMBER, "non-member gets NON_GROUP_MEMBER")
        check(dist.all_reduce(torch.ones(1), group=g) is None, "non-member: no-op")
        check(dist.get_rank(g) == -1, "non-member rank -1")
    dist.destroy_process_group(g)


def check_errors(rank, n):
    def raises(exc, fn, what):
        try:
            fn()
        except exc:
            CHECKS[0] += 1
            return
        raise AssertionError(f"{what}: expected {exc.__name__}")

    ints, cplx = torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.complex64)
    raises(RuntimeError, lambda: dist.all_reduce(ints, op=ReduceOp.AVG), "AVG int")
    raises(RuntimeError, lambda: dist.all_reduce(cplx, op=ReduceOp.MAX), "MAX complex")
    raises(RuntimeError, lambda: dist.all_reduce(torch.ones(2), op=ReduceOp.BAND), "BAND float")
    raises(TypeError, lambda: dist.all_reduce(torch.ones(2), op="sum"), "op str")
    raises(TypeError, lambda: dist.all_reduce([1.0]), "not a tensor")
    raises(RuntimeError, lambda: dist.broadcast(torch.ones(2).to_sparse(), src=0), "sparse bc")
    raises(ValueError, lambda: dist.broadcast(torch.ones(2), src=n + 3), "bad src")
    too_many = [torch.ones(2)] * (n + 1)
    raises(ValueError, lambda: dist.all_gather(too_many, torch.ones(2)), "list length")
    raises(ValueError, lambda: dist.init_process_group("mpi"), "init twice")
    raises(NotImplementedError, lambda: dist.all_reduce(_batched_csr()), "batched CSR")
    # shape mismatch across ranks: detected on every rank (no garbage, no hang)
    mine = torch.sparse_coo_tensor([[0]], [1.0], (3 + rank,))
    raises(RuntimeError, lambda: dist.all_reduce(mine), "sparse shape mismatch")


def _batched_csr():
    return torch.ones(2, 2, 2).to_sparse_csr()


def main():
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    check(dist.is_initialized() and dist.get_backend() == "mpi", "initialized")
    from _sparse_checks import check_sparse

    check_dense_all_reduce(rank, n)
    check_dense_movement(rank, n)
    check_p2p_and_objects(rank, n)
    check_groups(rank, n)
    check_sparse(rank, n, check, close)
    check_errors(rank, n)
    finish(rank, n)


if __name__ == "__main__":
    run(main)
