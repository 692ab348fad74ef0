"""DataLoader: argument validation against torch, batching, and the single-process path."""

import itertools
import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    TensorDataset,
    default_collate,
    get_worker_info,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": st.tensor([float(i), float(i * i)]), "i": i}


class Stream(IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if self.length is None:
            raise TypeError("no length")
        return self.length


def _flat(batches):
    return [b.tolist() if isinstance(b, st.Tensor) else b for b in batches]


def _cat(lists):
    return list(itertools.chain.from_iterable(lists))


# ---- argument validation: same error types and messages as torch ----

BAD_ARGS = [
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True},
    {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_size": None, "drop_last": True},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "bogus"},
    {"num_workers": 1, "multiprocessing_context": 3},
]


@pytest.mark.parametrize("kwargs", BAD_ARGS, ids=lambda k: ",".join(k))
def test_argument_errors_match_torch(kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as t_err:
        torch.utils.data.DataLoader(list(range(4)), **kwargs)
    with pytest.raises(type(t_err.value)) as o_err:
        DataLoader(list(range(4)), **kwargs)
    assert str(o_err.value) == str(t_err.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]},
                                    {"batch_sampler": [[0]]}], ids=lambda k: ",".join(k))
def test_iterable_dataset_argument_errors_match_torch(kwargs):
    torch = pytest.importorskip("torch")

    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(Exception) as t_err:
        torch.utils.data.DataLoader(TStream(), **kwargs)
    with pytest.raises(type(t_err.value)) as o_err:
        DataLoader(Stream(3), **kwargs)
    assert str(o_err.value) == str(t_err.value)


def test_attributes_frozen_after_init():
    dl = DataLoader(list(range(4)), batch_size=2)
    for name in ("batch_size", "sampler", "drop_last", "dataset", "batch_sampler"):
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after "
                                             "DataLoader is initialized"):
            setattr(dl, name, None)
    dl.num_workers = 0  # not frozen, as in torch


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (1, 4, True)])
def test_len_matches_torch(n, bs, drop):
    torch = pytest.importorskip("torch")
    theirs = torch.utils.data.DataLoader(list(range(n)), batch_size=bs, drop_last=drop)
    ours = DataLoader(list(range(n)), batch_size=bs, drop_last=drop)
    assert len(ours) == len(theirs) == len(list(ours))


def test_len_of_iterable_dataset():
    assert len(DataLoader(Stream(10, length=10), batch_size=3)) == 4
    assert len(DataLoader(Stream(10, length=10), batch_size=3, drop_last=True)) == 3
    assert len(DataLoader(Stream(10, length=10), batch_size=None)) == 10
    with pytest.raises(TypeError):
        len(DataLoader(Stream(10), batch_size=3))


# ---- single-process loading ----


def test_batches_and_default_collate():
    dl = DataLoader(Squares(5), batch_size=2)
    batches = list(dl)
    assert len(batches) == 3
    assert batches[0]["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert batches[0]["i"].tolist() == [0, 1] and batches[2]["i"].tolist() == [4]
    assert batches[0]["x"].dtype == st.float32


def test_no_auto_batching_converts_samples():
    out = list(DataLoader([np.float32(1), np.arange(2)], batch_size=None))
    assert isinstance(out[0], st.Tensor) and out[0].item() == 1.0
    assert out[1].tolist() == [0, 1]


def test_shuffle_with_generator_is_reproducible_and_reshuffles():
    def epochs(seed):
        dl = DataLoader(list(range(20)), batch_size=5, shuffle=True,
                        generator=st.Generator().manual_seed(seed))
        return [_flat(dl), _flat(dl)]

    a = epochs(0)
    assert a == epochs(0)
    assert a != epochs(1)
    assert a[0] != a[1]  # each epoch reshuffles
    assert sorted(_cat(a[0])) == list(range(20))


def test_batch_sampler_and_custom_collate():
    dl = DataLoader(list(range(6)), batch_sampler=[[5, 0], [2]], collate_fn=lambda b: b)
    assert list(dl) == [[5, 0], [2]]
    assert dl.batch_size is None and dl.drop_last is False
    dl = DataLoader(list(range(5)), sampler=SequentialSampler(range(3)), batch_size=2)
    assert _flat(dl) == [[0, 1], [2]]


def test_getitems_is_used_for_batches():
    class Batched(Squares):
        calls = 0

        def __getitems__(self, idx):
            Batched.calls += 1
            return [self[i] for i in idx]

    assert len(list(DataLoader(Batched(6), batch_size=3))) == 2 and Batched.calls == 2


def test_iterable_dataset_single_process():
    assert _flat(DataLoader(Stream(7), batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _flat(DataLoader(Stream(7), batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert _flat(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]


def test_get_worker_info_in_main_process():
    assert get_worker_info() is None


def test_pin_memory_warns_without_accelerator():
    dl = DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                         "accelerator is found"):
        assert _flat(dl) == [[0, 1], [2, 3]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(DataLoader(list(range(4)), batch_size=2))


def test_tensor_dataset_with_sparse_collate():
    dense = st.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    samples = [r.to_sparse() for r in dense]

    class Rows(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return samples[i], i

    x, _ = next(iter(DataLoader(Rows(), batch_size=3)))
    assert x.layout == st.sparse_coo and st.equal(x.to_dense(), dense)
    assert default_collate([samples[0]]).shape == (1, 3)


def test_torch_code_runs_unchanged():
    import sparsetorch as torch
    from sparsetorch.utils.data import DataLoader as DL

    ds = torch.utils.data.TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,)))
    xs = [x.shape[0] for x, _ in DL(ds, batch_size=4, shuffle=True)]
    assert xs == [4, 4]


# ---- fast paths give what the generic paths give ----


class Rows(Dataset):
    """A TensorDataset in disguise: takes the generic getitem-and-stack path."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, i):
        return tuple(t[i] for t in self.tensors)


def test_tensor_dataset_gather_matches_generic_path():
    from sparsetorch.utils.data import Subset

    ts = (st.randn(11, 3), st.arange(11), st.rand(11).double())
    for make in (lambda d: d, lambda d: Subset(d, [10, -1, 3, 0, 4, 5, 6])):
        fast, slow = make(TensorDataset(*ts)), make(Rows(*ts))
        for kw in ({"batch_size": 4}, {"batch_size": 3, "drop_last": True},
                   {"batch_sampler": [[0, -2, 1], [5]]}):
            a, b = list(DataLoader(fast, **kw)), list(DataLoader(slow, **kw))
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert isinstance(x, list) and len(x) == 3
                for u, v in zip(x, y):
                    assert u.dtype == v.dtype and st.equal(u, v)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (4, 4, True), (3, 5, True)])
def test_batch_sampler_fast_path_matches_generic_path(n, bs, drop):
    from sparsetorch.utils.data import BatchSampler, RandomSampler

    assert list(BatchSampler(SequentialSampler(range(n)), bs, drop)) == \
        list(BatchSampler(list(range(n)), bs, drop))
    fast = BatchSampler(RandomSampler(range(n), generator=st.Generator().manual_seed(2)), bs, drop)
    slow = BatchSampler(iter(RandomSampler(range(n), generator=st.Generator().manual_seed(2))),
                        bs, drop)
    assert list(fast) == list(slow)
