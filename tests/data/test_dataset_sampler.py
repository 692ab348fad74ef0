"""Datasets and samplers: semantics against torch (orders for deterministic samplers, properties
for random ones: the random streams differ from torch's by design)."""

import pytest

import sparsetorch as st
from sparsetorch.utils.data import (
    BatchSampler,
    ConcatDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


def _torch_data():
    torch = pytest.importorskip("torch")
    return torch, torch.utils.data


def _raises_like(ours, theirs):
    """Both callables raise the same exception type with the same message."""
    with pytest.raises(Exception) as t_err:
        theirs()
    with pytest.raises(type(t_err.value)) as o_err:
        ours()
    assert str(o_err.value) == str(t_err.value)


# ---- samplers ----


def test_sequential_sampler_matches_torch():
    _, tud = _torch_data()
    assert list(SequentialSampler(range(7))) == list(tud.SequentialSampler(range(7)))
    assert len(SequentialSampler(range(7))) == 7


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                       (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, bs, drop):
    _, tud = _torch_data()
    ours = BatchSampler(SequentialSampler(range(n)), bs, drop)
    theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0, "drop_last": False},
                                    {"batch_size": True, "drop_last": False},
                                    {"batch_size": 2.0, "drop_last": False},
                                    {"batch_size": 2, "drop_last": 1}])
def test_batch_sampler_errors_match_torch(kwargs):
    _, tud = _torch_data()
    _raises_like(lambda: BatchSampler(range(3), **kwargs),
                 lambda: tud.BatchSampler(range(3), **kwargs))


def test_random_sampler_is_a_permutation_and_reproducible():
    s = RandomSampler(range(50), generator=st.Generator().manual_seed(3))
    a = list(s)
    assert sorted(a) == list(range(50)) and len(s) == 50
    assert list(RandomSampler(range(50), generator=st.Generator().manual_seed(3))) == a
    assert list(RandomSampler(range(50), generator=st.Generator().manual_seed(4))) != a
    st.manual_seed(7)
    b = list(RandomSampler(range(50)))
    st.manual_seed(7)
    assert list(RandomSampler(range(50))) == b  # unseeded samplers follow the default generator


def test_random_sampler_num_samples():
    g = st.Generator().manual_seed(0)
    s = RandomSampler(range(4), num_samples=10, generator=g)
    a = list(s)
    assert len(a) == len(s) == 10
    assert sorted(a[:4]) == sorted(a[4:8]) == [0, 1, 2, 3]  # whole permutations first
    assert len(set(a[8:])) == 2
    r = list(RandomSampler(range(5), replacement=True, num_samples=70, generator=g))
    assert len(r) == 70 and set(r) <= set(range(5))
    assert len(set(r)) == 5  # 70 draws from 5 values: every value appears


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0},
                                    {"num_samples": -1}, {"num_samples": 2.5}])
def test_random_sampler_errors_match_torch(kwargs):
    _, tud = _torch_data()
    _raises_like(lambda: RandomSampler(range(3), **kwargs),
                 lambda: tud.RandomSampler(range(3), **kwargs))


def test_subset_random_sampler():
    idx = [5, 9, 11, 2]
    s = SubsetRandomSampler(idx, generator=st.Generator().manual_seed(1))
    assert sorted(s) == sorted(idx) and len(s) == 4


def test_weighted_random_sampler():
    g = st.Generator().manual_seed(0)
    s = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g)
    a = list(s)
    assert len(a) == len(s) == 200 and set(a) == {1, 3}
    assert a.count(3) > a.count(1)
    b = list(WeightedRandomSampler([0.2, 0.9, 0.4, 0.7, 3.0], 5, replacement=False, generator=g))
    assert sorted(b) == [0, 1, 2, 3, 4]
    assert isinstance(s.weights, st.Tensor) and s.weights.dtype == st.float64


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2),
                                  ([1.0, 2.0], True)])
def test_weighted_random_sampler_errors_match_torch(args):
    _, tud = _torch_data()
    _raises_like(lambda: WeightedRandomSampler(*args),
                 lambda: tud.WeightedRandomSampler(*args))


# ---- datasets ----


def test_tensor_dataset():
    x, y = st.arange(12.).reshape(4, 3), st.arange(4)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(x, st.arange(3))


def test_concat_dataset_matches_torch():
    _, tud = _torch_data()
    parts = [list(range(3)), list(range(10, 15)), [], list(range(20, 22))]
    ours, theirs = ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 10
    assert [ours[i] for i in range(-10, 10)] == [theirs[i] for i in range(-10, 10)]
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    _raises_like(lambda: ours[-11], lambda: theirs[-11])
    _raises_like(lambda: ConcatDataset([]), lambda: tud.ConcatDataset([]))
    assert list((TensorDataset(st.zeros(2)) + TensorDataset(st.ones(3))).cumulative_sizes) == [2, 5]


def test_subset_and_stack_dataset():
    ds = Subset(list(range(10, 20)), [3, 1, 4])
    assert len(ds) == 3 and ds[0] == 13 and ds.__getitems__([2, 0]) == [14, 13]
    sd = StackDataset(a=list(range(3)), b=list("xyz"))
    assert sd[1] == {"a": 1, "b": "y"} and len(sd) == 3
    assert StackDataset([1, 2], [3, 4])[0] == (1, 3)
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset([1], [1, 2])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [0.34, 0.33, 0.33],
                                     [0.1, 0.1, 0.1, 0.7]])
def test_random_split_lengths_match_torch(lengths):
    torch, tud = _torch_data()
    ours = random_split(range(10), lengths, generator=st.Generator().manual_seed(0))
    theirs = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    items = [i for s in ours for i in s]
    assert sorted(items) == list(range(10))  # disjoint and covering
    again = random_split(range(10), lengths, generator=st.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]


def test_random_split_errors_match_torch():
    _, tud = _torch_data()
    _raises_like(lambda: random_split(range(10), [3, 8]),
                 lambda: tud.random_split(range(10), [3, 8]))
    _raises_like(lambda: random_split(range(10), [1.5, -0.5]),
                 lambda: tud.random_split(range(10), [1.5, -0.5]))
    with pytest.warns(UserWarning) as rec:
        random_split(range(2), [0.9, 0.05, 0.05])
    assert [str(w.message)[:26] for w in rec] == ["Length of split at index 1",
                                                 "Length of split at index 2"]
