"""Issue 17's fixes on the device: SpGEMM (the chunked generic path, the one CuPy runs), packed-key
overflow (lexicographic ranks), sparse softmax with inf rows, EmbeddingBag max with NaN, the
scalar refusals and threaded backward, each against the CPU result."""

import math
import threading

import numpy as np
import pytest

import sparsetorch as st

from ._util import CUDA_MARKS

pytestmark = CUDA_MARKS


def _rand(rng, m, n, nnz, dtype=st.float32):
    i = np.stack([rng.integers(0, m, nnz), rng.integers(0, n, nnz)])
    v = rng.integers(-3, 4, nnz)
    return st.sparse_coo_tensor(st.from_numpy(i), st.tensor(v.tolist(), dtype=dtype), (m, n))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_spgemm_matches_cpu(device, dtype):
    rng = np.random.default_rng(0)
    dt = getattr(st, dtype)
    for _ in range(6):
        m, k, n = (int(x) for x in rng.integers(1, 40, 3))
        a, b = _rand(rng, m, k, 80, dt), _rand(rng, k, n, 80, dt)
        want = (a.to_dense() @ b.to_dense()).numpy()
        for x, y in ((a, b), (a.coalesce(), b), (a.to_sparse_csr(), b.to_sparse_csr())):
            r = st.sparse.mm(x.to(device), y.to(device))
            assert r.device == device
            np.testing.assert_array_equal(r.to_dense().cpu().numpy(), want)
        r = st.sparse.mm(b.t().to(device), a.t().to(device))
        np.testing.assert_array_equal(r.to_dense().cpu().numpy(), want.T)


def test_spgemm_many_chunks(device, monkeypatch):
    from sparsetorch.sparse import _spgemm

    monkeypatch.setattr(_spgemm, "_CHUNK", 5)
    rng = np.random.default_rng(1)
    a, b = _rand(rng, 30, 20, 90), _rand(rng, 20, 25, 90)
    r = st.sparse.mm(a.to(device), b.to(device))
    np.testing.assert_array_equal(r.to_dense().cpu().numpy(),
                                  (a.to_dense() @ b.to_dense()).numpy())


def test_packed_key_overflow(device):
    N = 2 ** 33
    a = st.sparse_coo_tensor(st.tensor([[1, 1 + 2 ** 31, 5], [7, 7, N - 1]]),
                             st.tensor([1.0, 2.0, 3.0]), (N, N)).to(device)
    b = st.sparse_coo_tensor(st.tensor([[1 + 2 ** 31, 5], [7, N - 1]]),
                             st.tensor([10.0, 20.0]), (N, N)).to(device)
    ad = (a + b).coalesce().cpu()
    assert dict(zip(map(tuple, ad.indices().T.tolist()), ad.values().tolist())) == {
        (1, 7): 1.0, (5, N - 1): 23.0, (1 + 2 ** 31, 7): 12.0}
    m = (a * b).coalesce().cpu()
    assert dict(zip(map(tuple, m.indices().T.tolist()), m.values().tolist())) == {
        (5, N - 1): 60.0, (1 + 2 ** 31, 7): 20.0}
    s = a.sparse_mask(b.coalesce()).coalesce().cpu()
    assert dict(zip(map(tuple, s.indices().T.tolist()), s.values().tolist())) == {
        (5, N - 1): 3.0, (1 + 2 ** 31, 7): 2.0}


def test_softmax_inf_rows_and_embedding_bag_nan(device):
    inf, nan = math.inf, math.nan
    d = st.tensor([[0, inf, 0, 1.0], [0, -inf, 2, 0], [-inf, 0, 0, -inf], [3, 0, 1, 0]])
    for f in (st.sparse.softmax, st.sparse.log_softmax):
        cpu = f(d.to_sparse(), 1).to_dense().numpy()
        dev = f(d.to_sparse().to(device), 1).to_dense().cpu().numpy()
        np.testing.assert_allclose(dev, cpu, rtol=1e-6, equal_nan=True)
    w = st.tensor([[1.0, 2.0], [nan, 0.0], [3.0, nan]])
    ids, offs = st.tensor([0, 1, 2, 2, 0]), st.tensor([0, 3])
    cpu = st.nn.functional.embedding_bag(ids, w, offs, mode="max").numpy()
    dev = st.nn.functional.embedding_bag(ids.to(device), w.to(device), offs.to(device),
                                         mode="max").cpu().numpy()
    np.testing.assert_array_equal(dev, cpu)
    assert np.isnan(dev[0]).all()


def test_scalar_refusals(device):
    s = st.tensor([[0, 2.0, 0], [-1.0, 0, 0]]).to_sparse().to(device)
    for fn in (lambda x: x / 0, lambda x: x * math.nan, lambda x: x * math.inf):
        with pytest.raises(NotImplementedError, match=r"to_dense\(\)"):
            fn(s)


def test_threads_accumulate_exactly(device):
    w = st.zeros(8, 4, device=device, requires_grad=True)
    x = st.ones(8, 4, device=device)
    emb = st.nn.Embedding(20, 3, sparse=True).to(device)

    def work():
        for _ in range(50):
            (w * x).sum().backward()
            emb(st.tensor([1, 2, 2], device=device)).sum().backward()

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert w.grad.cpu().eq(400.0).all()
    g = emb.weight.grad.to_dense().cpu()
    assert g[1].tolist() == [400.0] * 3 and g[2].tolist() == [800.0] * 3
