"""torch.multiprocessing and Tensor.share_memory_(): real child processes (fork and spawn) see
the parent's shared tensors and write back into them; spawn reports child failures as torch."""

import multiprocessing as std_mp
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.multiprocessing as mp

from . import _mp_workers as W

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method")
TIMEOUT = 60


def _run(ctx, target, *args):
    p = ctx.Process(target=target, args=args)
    p.start()
    p.join(TIMEOUT)
    assert p.exitcode == 0, f"child exit code {p.exitcode}"


# ---- share_memory_ / is_shared in one process ----

def test_share_memory_moves_payload_in_place():
    x = st.arange(6.0).reshape(2, 3).requires_grad_()
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and x.requires_grad and x.dtype is st.float32
    np.testing.assert_array_equal(x.detach().numpy(), np.arange(6.0).reshape(2, 3))
    x.detach().add_(1)  # still an ordinary, writable tensor
    assert float(x.sum()) == 21.0
    assert x.share_memory_() is x  # no-op the second time


def test_strides_dtypes_and_empty_tensors_survive_the_pickler():
    import pickle

    t = st.arange(6.0).reshape(2, 3).t().share_memory_()
    assert t.stride() == (1, 3) and t.is_shared()  # a transpose stays a transpose
    for x in (t, st.ones(3, dtype=st.bfloat16), st.zeros(0), st.arange(4)[1:3]):
        y = pickle.loads(ForkingPickler.dumps(x))  # a round trip through the handles
        assert y.is_shared() and y.dtype is x.dtype and y.tolist() == x.tolist()
    y = pickle.loads(ForkingPickler.dumps(t))
    y.mul_(2)  # maps the same memory
    assert t.tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]


def test_sparse_tensors_share_their_arrays():
    coo = st.eye(3).to_sparse()
    csr = st.eye(3).to_sparse_csr()
    for s in (coo, csr):
        s.share_memory_()
        assert s.is_shared()
        np.testing.assert_array_equal(s.to_dense().numpy(), np.eye(3, dtype=np.float32))


def test_module_share_memory_shares_parameters_and_grads():
    m = st.nn.Linear(3, 2)
    m(st.ones(1, 3)).sum().backward()
    w = m.weight
    assert m.share_memory() is m
    assert m.weight is w
    assert all(p.is_shared() and p.grad.is_shared() for p in m.parameters())


def test_non_leaf_requiring_grad_is_refused_by_the_pickler():
    y = st.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(y)


def test_sharing_strategies_as_torch():
    torch = pytest.importorskip("torch")
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("bogus")
    public = set(torch.multiprocessing.__all__) | {"spawn", "start_processes", "ProcessContext",
                                                   "ProcessRaisedException"}
    assert not [n for n in public if not hasattr(mp, n)]


# ---- across processes ----

def test_forked_child_writes_are_seen_by_parent():
    t = st.zeros(4).share_memory_()
    _run(std_mp.get_context("fork"), W.fill, t, 3.0)
    assert t.tolist() == [3.0] * 4


@pytest.mark.parametrize("strategy", sorted(mp.get_all_sharing_strategies()))
def test_queue_moves_tensor_to_shared_memory(strategy):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        ctx = mp.get_context("fork")
        q, done = ctx.Queue(), ctx.Queue()
        t = st.zeros(3)
        p = ctx.Process(target=W.fill_from_queue, args=(q, done))
        p.start()
        q.put(t)
        assert done.get(timeout=TIMEOUT) is True  # the child's copy is shared
        p.join(TIMEOUT)
    finally:
        mp.set_sharing_strategy(old)
    assert t.is_shared()  # putting it on the queue moved the sender's tensor, as torch
    assert t.tolist() == [7.0, 7.0, 7.0]


def test_sparse_tensor_through_queue_shares_values():
    ctx = mp.get_context("fork")
    q, done = ctx.Queue(), ctx.Queue()
    s = st.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    p = ctx.Process(target=W.scale_sparse_values, args=(q, done))
    p.start()
    q.put(s)
    assert done.get(timeout=TIMEOUT) is True
    p.join(TIMEOUT)
    assert s.to_dense().tolist() == [[0.0, 10.0], [20.0, 0.0]]


def test_tensor_created_in_child_arrives_shared():
    ctx = mp.get_context("fork")
    q, ack = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=W.send_new_tensor, args=(q, ack))
    p.start()
    t = q.get(timeout=TIMEOUT)
    ack.put(True)
    p.join(TIMEOUT)
    assert t.is_shared() and t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_file_system_segment_outlives_its_producer_then_is_unlinked():
    """A named segment counts its references: the producer may exit right after sending, and
    the last reference (here the parent's) removes the name from /dev/shm."""
    import gc
    import os

    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=W.send_new_tensor, args=(q,))
        p.start()
        p.join(TIMEOUT)  # the producer is gone before the tensor is received
        t = q.get(timeout=TIMEOUT)
        assert t.is_shared() and t.tolist() == [0.0, 1.0, 2.0, 3.0]
        mine = f"sparsetorch_{p.pid}_"
        assert any(n.startswith(mine) for n in os.listdir("/dev/shm"))
        del t
        gc.collect()
        assert not any(n.startswith(mine) for n in os.listdir("/dev/shm"))
    finally:
        mp.set_sharing_strategy(old)


def test_forked_receiver_holding_a_named_segment_releases_it_at_exit():
    import gc
    import os

    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        ctx = mp.get_context("fork")
        q, done = ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=W.keep_from_queue, args=(q, done))
        p.start()
        t = st.ones(3)
        q.put(t)
        assert done.get(timeout=TIMEOUT)
        p.join(TIMEOUT)
        assert p.exitcode == 0
        mine = f"sparsetorch_{os.getpid()}_"
        assert any(n.startswith(mine) for n in os.listdir("/dev/shm"))
        del t
        gc.collect()
        assert not any(n.startswith(mine) for n in os.listdir("/dev/shm"))
    finally:
        mp.set_sharing_strategy(old)


def test_pool_map_with_tensors():
    with mp.get_context("fork").Pool(2) as pool:
        out = pool.map(W.double, [st.ones(2), st.full((2,), 3.0)])
    assert [o.tolist() for o in out] == [[2.0, 2.0], [6.0, 6.0]]


# ---- spawn ----

def test_hogwild_sees_both_processes_updates():
    st.manual_seed(0)
    model = st.nn.Linear(2, 1, bias=False)
    with st.no_grad():
        model.weight.zero_()
    model.share_memory()
    # spawn: each child unpickles the model, whose parameters map the parent's memory
    assert mp.spawn(W.hogwild, args=(model, 40), nprocs=2) is None
    w = model.weight.detach().numpy()[0]
    np.testing.assert_allclose(w, [1.0, 2.0], atol=1e-3)


def test_spawn_forwards_child_exception():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: bad thing in process 0") as e:
        mp.start_processes(W.raise_value_error, nprocs=1, start_method="fork")
    assert e.value.error_index == 0 and "terminated with the following error" in str(e.value)


def test_spawn_reports_exit_code_and_join_false():
    ctx = mp.start_processes(W.exit_with, args=(3,), nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    msg = "process 0 terminated with exit code 3"
    with pytest.raises(mp.ProcessExitedException, match=msg) as e:
        while not ctx.join(TIMEOUT):
            pass
    assert e.value.exit_code == 3


def test_spawn_other_start_method_warns_as_torch():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        assert mp.spawn(W.write_index, args=(None,), nprocs=0, start_method="fork") is None


def test_start_processes_fork_passes_index_and_args():
    t = st.zeros(2).share_memory_()
    assert mp.start_processes(W.write_index, args=(t,), nprocs=2, start_method="fork") is None
    assert t.tolist() == [1.0, 2.0]
