"""Single-process tests of sparsetorch.distributed (no MPI job): the API before
init_process_group, ReduceOp, DistributedSampler (against torch), and the autograd engine
hooks DistributedDataParallel relies on (post-accumulate-grad hooks, queue_callback)."""

import importlib.util

import pytest

import sparsetorch as torch
import sparsetorch.distributed as dist
from sparsetorch.autograd import engine
from sparsetorch.nn.parallel import DistributedDataParallel
from sparsetorch.utils.data.distributed import DistributedSampler

NOT_INIT = "Default process group has not been initialized"


# ---- before init_process_group ----

def test_not_initialized_errors_as_torch():
    assert torch.distributed is dist and torch.nn.parallel.DistributedDataParallel
    assert torch.utils.data.DistributedSampler is DistributedSampler
    assert dist.is_available() and not dist.is_initialized()
    assert dist.is_mpi_available() == (importlib.util.find_spec("mpi4py") is not None)
    for fn in (dist.get_rank, dist.get_world_size, dist.get_backend, dist.barrier,
               dist.destroy_process_group):
        with pytest.raises(ValueError, match=NOT_INIT):
            fn()
    with pytest.raises(ValueError, match=NOT_INIT):
        dist.all_reduce(torch.ones(2))
    with pytest.raises(ValueError, match=NOT_INIT):
        dist.all_reduce(torch.ones(2).to_sparse())
    with pytest.raises(ValueError, match=NOT_INIT):
        DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match=NOT_INIT):
        DistributedSampler(range(4))


def test_init_rejects_unknown_backend():
    with pytest.raises(ValueError, match="backend 'gloo' is not available.*'mpi'"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_reduce_op_like_torch():
    torch_ = pytest.importorskip("torch")
    tdist = torch_.distributed
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(tdist.ReduceOp, name)
        assert int(ours) == int(theirs) and str(ours) == str(theirs)
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX
    with pytest.raises(TypeError, match="op must be a torch.distributed.ReduceOp"):
        dist.all_reduce(torch.ones(1), op="sum")


def test_backend_names():
    assert dist.Backend("MPI") == dist.Backend.MPI == "mpi"
    assert dist.Backend.NCCL == "nccl"
    assert dist.is_nccl_available() in (True, False)


# ---- DistributedSampler ----

@pytest.mark.parametrize("n,replicas", [(10, 3), (9, 3), (2, 3), (0, 2), (7, 1)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_matches_torch_without_shuffle(n, replicas, drop_last):
    tdata = pytest.importorskip("torch.utils.data")
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                          drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_shuffle_partitions_and_reshuffles(drop_last):
    n, replicas = 11, 3
    def shares(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    a = shares(0)
    flat = [i for s in a for i in s]
    assert all(len(s) == len(a[0]) for s in a)
    if drop_last:
        assert len(flat) == len(set(flat)) == 9
    else:
        assert set(flat) == set(range(n)) and len(flat) == 12
    assert shares(0) == a  # deterministic: every rank draws the same permutation
    assert shares(1) != a and shares(0, seed=1) != a


def test_sampler_errors():
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=3, rank=-1)


# ---- engine hooks used by DistributedDataParallel ----

def test_post_accumulate_grad_hook_sees_accumulated_grad():
    w = torch.ones(3, requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (w * 2).sum().backward()
    (w * 3).sum().backward()
    assert [s.tolist() for s in seen] == [[2.0] * 3, [5.0] * 3]  # after accumulation
    torch.autograd.grad((w * 2).sum(), w)  # autograd.grad accumulates nothing: no hook
    assert len(seen) == 2
    h.remove()
    (w * 2).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_grad_hook_like_torch():
    torch_ = pytest.importorskip("torch")
    for lib in (torch, torch_):
        w = lib.ones(2, requires_grad=True)
        calls = []
        w.register_post_accumulate_grad_hook(lambda p, c=calls: c.append(p.grad.sum().item()))
        (w * w).sum().backward()
        assert calls == [4.0]
        with pytest.raises(RuntimeError, match="hooks cannot be registered on non-leaf"):
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda p: None)


def test_queue_callback_runs_after_backward():
    w = torch.ones(2, requires_grad=True)
    order = []

    def hook(p):
        order.append("hook")
        engine.queue_callback(lambda: order.append(("callback", p.grad.tolist())))

    w.register_post_accumulate_grad_hook(hook)
    (w * 4).sum().backward()
    assert order == ["hook", ("callback", [4.0, 4.0])]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward"):
        engine.queue_callback(lambda: None)


# ---- the sparse all-reduce's local merge ----

@pytest.mark.parametrize("runs", [1, 2, 3, 7])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
def test_merge_sum_equals_coalesced_sum(runs, dtype):
    np = pytest.importorskip("numpy")
    pytest.importorskip("numba")
    from sparsetorch._backend import CPU
    from sparsetorch.distributed._merge import merge_sum

    rng = np.random.default_rng(runs)
    parts = [np.unique(rng.integers(0, 50, rng.integers(0, 30))) for _ in range(runs)]
    keys = np.concatenate(parts).astype(np.int64)
    vals = (rng.standard_normal((keys.size, 3)) * 4).astype(dtype)
    starts = np.cumsum([0] + [p.size for p in parts]).astype(np.int64)
    ukeys, out = merge_sum(CPU, keys, vals, starts)
    want_keys = np.unique(keys)
    want = np.zeros((want_keys.size, 3), dtype)
    np.add.at(want, np.searchsorted(want_keys, keys), vals)
    assert np.array_equal(ukeys, want_keys)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert out.dtype == vals.dtype


def test_merge_sum_declines_what_it_cannot_do():
    np = pytest.importorskip("numpy")
    from sparsetorch._backend import CPU
    from sparsetorch.distributed._merge import MAX_RUNS, merge_sum

    keys = np.arange(3, dtype=np.int64)
    assert merge_sum(CPU, keys, np.ones((3, 1), bool), np.array([0, 3])) is None
    many = np.arange(MAX_RUNS + 2, dtype=np.int64)
    assert merge_sum(CPU, many, np.ones((many.size, 1)), np.arange(many.size + 1)) is None
