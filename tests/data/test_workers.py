"""DataLoader with worker processes: order, errors, timeouts, sharding, seeding, persistence.

Datasets are tiny and workers start with ``fork`` (milliseconds), so these tests stay fast.
"""

import importlib.util
import itertools
import os
import random
import time

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    collate_id_lists,
    get_worker_info,
)
from sparsetorch.utils.data._multiprocessing import _numba_pool_started


def _flat(batches):
    return [b.tolist() if isinstance(b, st.Tensor) else b for b in batches]


def _cat(lists):
    return list(itertools.chain.from_iterable(lists))


class SlowFirst(Dataset):
    """Item 0 is slow, so later batches arrive before the first one."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 0:
            time.sleep(0.2)
        return i


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


class MissingKey(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return {}["nope"]


class Sleepy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(0.6)
        return i


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


class RandomDraws(Dataset):
    """What a worker sees: its WorkerInfo seed and draws from each seeded RNG."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.seed, st.rand(1).item(), random.random(), float(np.random.rand()))


class Sharded(IterableDataset):
    """Each worker yields its own stride of range(n)."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Pids(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return os.getpid()


class IdLists(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return list(range(i)), float(i % 2)


def test_workers_give_the_same_batches_as_the_main_process():
    x = st.randn(23, 3)
    ds = TensorDataset(x, st.arange(23))
    for shuffle in (False, True):
        runs = []
        for nw in (0, 2):
            g = st.Generator().manual_seed(5)
            dl = DataLoader(ds, batch_size=4, shuffle=shuffle, num_workers=nw, generator=g)
            runs.append([(a.tolist(), b.tolist()) for a, b in dl])
        assert runs[0] == runs[1] and len(runs[0]) == 6


def test_batches_come_back_in_sampler_order():
    dl = DataLoader(SlowFirst(), batch_size=2, num_workers=2)
    assert _flat(dl) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]
    unordered = _flat(DataLoader(SlowFirst(), batch_size=2, num_workers=2, in_order=False))
    assert sorted(unordered) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]


def test_worker_error_reraises_with_traceback():
    dl = DataLoader(Failing(), batch_size=2, num_workers=2)
    it = iter(dl)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(ValueError) as err:
        next(it)
    msg = str(err.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback")
    assert "in __getitem__" in msg and "bad sample 5" in msg
    del it


def test_worker_key_error_message_is_readable():
    with pytest.raises(KeyError) as err:
        list(DataLoader(MissingKey(), num_workers=1))
    assert "Caught KeyError in DataLoader worker process 0" in str(err.value)
    assert "\\n" not in str(err.value)  # shown as text, not as a repr


def test_worker_init_fn_error_is_reported():
    def boom(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")

    with pytest.raises(RuntimeError, match="init failed in"):
        list(DataLoader(list(range(4)), num_workers=2, worker_init_fn=boom))


def test_timeout_raises():
    dl = DataLoader(Sleepy(), num_workers=1, timeout=0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        next(iter(dl))


def test_dead_worker_raises_instead_of_hanging():
    msg = r"DataLoader worker \(pid\(s\) \d+.*exited unexpectedly"
    with pytest.raises(RuntimeError, match=msg):
        list(DataLoader(Dies(), num_workers=1))


def test_iterable_dataset_sharding_has_no_duplicates():
    for bs in (None, 3):
        dl = DataLoader(Sharded(11), batch_size=bs, num_workers=2)
        items = _flat(dl)
        flat = _cat(items) if bs else items
        assert sorted(flat) == list(range(11))
    # without sharding every worker yields the whole stream, as in torch
    dup = _flat(DataLoader(Sharded(5, shard=False), batch_size=None, num_workers=2))
    assert sorted(dup) == sorted(list(range(5)) * 2)
    dropped = _flat(DataLoader(Sharded(11), batch_size=3, drop_last=True, num_workers=2))
    assert all(len(b) == 3 for b in dropped) and len(dropped) == 3  # shards 6 and 5 long


def test_seeding_is_reproducible_with_a_generator():
    def run(seed):
        return _flat(DataLoader(RandomDraws(), batch_size=None, num_workers=2,
                                generator=st.Generator().manual_seed(seed)))

    a = run(0)
    assert a == run(0)
    b = run(1)
    assert [r[2:] for r in a] != [r[2:] for r in b]
    # worker i is seeded base_seed + i, and the workers' streams differ
    seeds = {r[0]: r[1] for r in a}
    assert seeds[1] == seeds[0] + 1
    w0 = [r for r in a if r[0] == 0]
    w1 = [r for r in a if r[0] == 1]
    assert w0[0][2:] != w1[0][2:]


def test_worker_init_fn_and_worker_info():
    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        assert isinstance(info.dataset, Pids)
        with pytest.raises(AttributeError):
            info.id = 5  # WorkerInfo is frozen

    assert len(_flat(DataLoader(Pids(), num_workers=2, worker_init_fn=init))) == 6


def test_persistent_workers_survive_epochs_and_early_break():
    dl = DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    first = set(_cat(_flat(dl)))
    it = iter(dl)
    next(it)  # abandon this epoch early
    second = _cat(_flat(dl))
    assert len(second) == 6 and set(second) == first and len(first) == 2
    workers = dl._iterator._workers
    assert all(w.is_alive() for w in workers)
    dl._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in workers)


def test_persistent_iterable_dataset_restarts_each_epoch():
    dl = DataLoader(Sharded(7), batch_size=2, num_workers=2, persistent_workers=True,
                    prefetch_factor=1)
    for _ in range(2):
        assert sorted(_cat(_flat(dl))) == list(range(7))
    dl._iterator._shutdown_workers()


def test_workers_exit_when_iterator_is_dropped():
    it = iter(DataLoader(list(range(40)), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    assert not any(w.is_alive() for w in workers)


def test_sparse_and_id_list_batches_cross_processes():
    dense = st.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0], [4.0, 0.0, 5.0]])
    coo = TensorDataset(dense)  # samples are dense rows; make them sparse in collate
    dl = DataLoader(coo, batch_size=2, num_workers=2,
                    collate_fn=lambda b: st.stack([r[0] for r in b]).to_sparse_csr())
    out = list(dl)
    assert [b.layout for b in out] == [st.sparse_csr] * 2
    assert st.equal(st.cat([b.to_dense() for b in out]), dense)
    batches = list(DataLoader(IdLists(), batch_size=5, num_workers=2,
                              collate_fn=collate_id_lists))
    ids, offsets, label = batches[0]
    assert offsets.tolist() == [0, 0, 1, 3, 6] and ids.tolist() == [0, 0, 1, 0, 1, 2, 0, 1, 2, 3]
    assert st.nn.EmbeddingBag(4, 2)(ids, offsets).shape == (5, 2)
    assert label.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_fork_workers_after_numba_parallel_kernels():
    # the parent runs numba's parallel pool; forked workers then coalesce sparse tensors
    bag = st.nn.EmbeddingBag(100, 4, mode="sum")
    bag(st.randint(0, 100, (4000,)), st.arange(0, 4000, 4))
    if importlib.util.find_spec("numba") and not os.environ.get("SPARSETORCH_NO_NUMBA"):
        assert _numba_pool_started()  # the hazardous state this test is about

    class Coalesce(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            idx = st.randint(0, 30, (2, 300), generator=st.Generator().manual_seed(i))
            return st.sparse_coo_tensor(idx, st.ones(300), (30, 30)).coalesce()

    main = [b.to_dense() for b in DataLoader(Coalesce(), batch_size=2)]
    work = [b.to_dense() for b in DataLoader(Coalesce(), batch_size=2, num_workers=2, timeout=60)]
    assert all(st.equal(a, b) for a, b in zip(main, work))


class Draws:
    """A map-style dataset for either library: each worker's seed and its Python, library and
    NumPy draws."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        return (info.id, info.seed, random.random(), float(np.random.rand()),
                self.lib.rand(1).item())


def test_workers_draw_what_torchs_workers_draw():
    # dlrm's random data is drawn with NumPy's global RNG inside DataLoader workers: the
    # worker seeds (random, NumPy, the library's generator) must be torch's for the same losses
    torch = pytest.importorskip("torch")
    import torch.utils.data  # noqa: F401

    def run(lib):
        g = lib.Generator().manual_seed(5)
        return [tuple(r) for r in lib.utils.data.DataLoader(
            Draws(lib), batch_size=None, num_workers=2, generator=g)]

    assert run(st) == run(torch)
