"""default_collate / default_convert against torch, sparse batching, and collate_id_lists."""

import collections

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.utils.data import collate_id_lists, default_collate, default_convert

Point = collections.namedtuple("Point", "x y")


def _same(ours, theirs):
    """Same structure, container types, tensor dtypes and values (torch tensors vs ours)."""
    if isinstance(ours, st.Tensor):
        assert type(theirs).__name__ == "Tensor"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.tolist() == theirs.tolist()
    elif isinstance(ours, dict):
        assert type(ours) is type(theirs) and ours.keys() == theirs.keys()
        for k in ours:
            _same(ours[k], theirs[k])
    elif isinstance(ours, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    else:
        assert ours == theirs


def _to_torch(x, torch):
    if isinstance(x, st.Tensor):
        return torch.from_numpy(x.numpy().copy())
    if isinstance(x, dict):
        return {k: _to_torch(v, torch) for k, v in x.items()}
    if isinstance(x, Point):
        return Point(*(_to_torch(v, torch) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v, torch) for v in x)
    return x


BATCHES = {
    "ints": [1, 2, 3],
    "floats": [1.5, 2.5],
    "bools": [True, False],
    "strings": ["a", "b"],
    "np_scalars": [np.float32(1), np.float32(2)],
    "np_arrays": [np.arange(3), np.arange(3, 6)],
    "tensors": [st.arange(4.).reshape(2, 2), st.ones(2, 2)],
    "int_tensors": [st.arange(3), st.arange(3, 6)],
    "tuples": [(1, 2.0, "a"), (3, 4.0, "b")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "nested": [({"x": st.zeros(2)}, [np.int64(1)]), ({"x": st.ones(2)}, [np.int64(2)])],
}


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_default_collate_matches_torch(name):
    torch = pytest.importorskip("torch")
    batch = BATCHES[name]
    _same(default_collate(batch), torch.utils.data.default_collate(_to_torch(batch, torch)))


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_default_convert_matches_torch(name):
    torch = pytest.importorskip("torch")
    batch = BATCHES[name]
    _same(default_convert(batch), torch.utils.data.default_convert(_to_torch(batch, torch)))


@pytest.mark.parametrize("batch", [[object(), object()], [np.array(["a"]), np.array(["b"])],
                                   [[1, 2], [3]]])
def test_default_collate_errors_match_torch(batch):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as t_err:
        torch.utils.data.default_collate(batch)
    with pytest.raises(type(t_err.value)) as o_err:
        default_collate(batch)
    assert str(o_err.value) == str(t_err.value).replace("torch", "sparsetorch")


# ---- sparse samples ----


def _sparse_samples(n, shape, layout, seed=0, hybrid=None):
    g = st.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        d = st.rand(*shape, generator=g)
        d = d * (d > 0.6)
        if hybrid:
            d = d.unsqueeze(-1).expand(*shape, hybrid).contiguous()
            out.append(d.to_sparse(len(shape)))
        else:
            out.append(d.to_sparse() if layout == "coo" else d.to_sparse_csr())
    return out


@pytest.mark.parametrize("shape", [(5,), (4, 3), (2, 3, 4)])
def test_collate_sparse_coo_equals_dense_stack(shape):
    samples = _sparse_samples(4, shape, "coo")
    batch = default_collate(samples)
    assert batch.layout == st.sparse_coo and batch.shape == (4, *shape)
    assert batch.is_coalesced()  # coalesced samples give a coalesced batch
    assert st.equal(batch.to_dense(), st.stack([s.to_dense() for s in samples]))


def test_collate_sparse_coo_hybrid_and_uncoalesced():
    samples = _sparse_samples(3, (4, 3), "coo", hybrid=2)
    batch = default_collate(samples)
    assert batch.shape == (3, 4, 3, 2) and batch.sparse_dim() == 3 and batch.dense_dim() == 1
    assert st.equal(batch.to_dense(), st.stack([s.to_dense() for s in samples]))
    u = st.sparse_coo_tensor([[2, 0, 2]], st.tensor([1.0, 2.0, 3.0]), (3,))
    batch = default_collate([u, u.coalesce()])
    assert not batch.is_coalesced()
    assert batch.to_dense().tolist() == [[2.0, 0.0, 4.0], [2.0, 0.0, 4.0]]


def test_collate_sparse_csr():
    samples = [st.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr(),
               st.tensor([[3.0, 0.0], [0.0, 4.0]]).to_sparse_csr()]
    batch = default_collate(samples)
    assert batch.layout == st.sparse_csr and batch.shape == (2, 2, 2)
    assert st.equal(batch.to_dense(), st.stack([s.to_dense() for s in samples]))
    uneven = [samples[0], st.tensor([[3.0, 0.0], [0.0, 0.0]]).to_sparse_csr()]
    with pytest.raises(RuntimeError, match="different numbers of specified elements"):
        default_collate(uneven)


def test_collate_sparse_errors():
    a = st.tensor([[0.0, 1.0]]).to_sparse()
    with pytest.raises(TypeError, match="different layouts"):
        default_collate([a, st.ones(1, 2)])
    with pytest.raises(TypeError, match="different layouts"):
        default_collate([a, a.to_sparse_csr()])
    with pytest.raises(RuntimeError, match="must share shape"):
        default_collate([a, st.tensor([[0.0, 1.0, 2.0]]).to_sparse()])


def test_collate_sparse_coo_keeps_autograd():
    a = st.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().requires_grad_()
    batch = default_collate([a, a])
    assert batch.requires_grad
    batch.to_dense().sum().backward()
    assert a.grad.to_dense().tolist() == [[0.0, 2.0], [2.0, 0.0]]


# ---- id lists for EmbeddingBag ----


@pytest.mark.parametrize("kind", ["list", "tuple", "numpy", "tensor"])
def test_collate_id_lists_feeds_embedding_bag(kind):
    seqs = [[1, 2, 2], [], [0], [4, 3, 1, 0]]
    conv = {"list": list, "tuple": tuple, "numpy": lambda s: np.array(s, np.int32),
            "tensor": lambda s: st.tensor(s, dtype=st.int64)}[kind]
    ids, offsets = collate_id_lists([conv(s) for s in seqs])
    assert ids.dtype == offsets.dtype == st.int64
    assert ids.tolist() == [1, 2, 2, 0, 4, 3, 1, 0] and offsets.tolist() == [0, 3, 3, 4]
    bag = st.nn.EmbeddingBag(5, 3, mode="sum")
    out = bag(ids, offsets)
    w = bag.weight.detach()
    for i, s in enumerate(seqs):
        want = w[s].sum(0) if s else st.zeros(3)
        assert st.allclose(out[i], want)


def test_collate_id_lists_records_and_last_offset():
    batch = [([1, 2], 1.0), ([3], 0.0), (np.array([4, 5, 6]), 1.0)]
    ids, offsets, label = collate_id_lists(batch)
    assert ids.tolist() == [1, 2, 3, 4, 5, 6] and offsets.tolist() == [0, 2, 3]
    assert label.dtype == st.float64 and label.tolist() == [1.0, 0.0, 1.0]
    ids, offsets = collate_id_lists([[1, 2], [3]], include_last_offset=True)
    assert offsets.tolist() == [0, 2, 3]
    bag = st.nn.EmbeddingBag(5, 2, mode="mean", include_last_offset=True)
    assert bag(ids, offsets).shape == (2, 2)


@pytest.mark.parametrize("batch,err,msg", [
    ([[1.5, 2]], TypeError, "sample 0's ids must be integers"),
    ([[1], np.zeros((2, 2), np.int64)], ValueError, "sample 1's ids must be 1-D"),
    ([], ValueError, "the batch is empty"),
    ([([1], 0), [2]], TypeError, "not a mix"),
    ([[True, False]], TypeError, "must be integers"),
])
def test_collate_id_lists_errors(batch, err, msg):
    with pytest.raises(err, match=msg):
        collate_id_lists(batch)
