"""Sparse @ sparse (issue 17: bounded memory): both kernels (numba Gustavson, chunked generic)
against the dense product, with duplicates, transposes, CSR, cancellation (kept: structural
pattern), many chunks, several dtypes and shapes whose linear index overflows int64."""

import numpy as np
import pytest

import sparsetorch as torch
from sparsetorch.sparse import _spgemm, _spmm


def _rand(rng, m, n, nnz, dtype=torch.float32):
    i = np.stack([rng.integers(0, m, nnz), rng.integers(0, n, nnz)])
    v = rng.integers(-3, 4, nnz)
    return torch.sparse_coo_tensor(torch.from_numpy(i), torch.tensor(v.tolist(), dtype=dtype),
                                   (m, n))


@pytest.fixture(params=["numba", "generic", "generic-small-chunks"])
def path(request, monkeypatch):
    if request.param != "numba":
        old = _spmm.use_numba(False)
        request.addfinalizer(lambda: _spmm.use_numba(old))
    if request.param == "generic-small-chunks":
        monkeypatch.setattr(_spgemm, "_CHUNK", 7)
    return request.param


def test_matches_dense(path):
    rng = np.random.default_rng(0)
    for _ in range(12):
        m, k, n = (int(x) for x in rng.integers(1, 30, 3))
        a = _rand(rng, m, k, int(rng.integers(0, 60)))
        b = _rand(rng, k, n, int(rng.integers(0, 60)))
        want = a.to_dense() @ b.to_dense()
        for x, y in ((a, b), (a.coalesce(), b), (a.to_sparse_csr(), b.to_sparse_csr())):
            r = torch.sparse.mm(x, y)
            assert torch.equal(r.to_dense(), want)
            if r.layout is torch.sparse_coo:
                assert r.is_coalesced()
                idx = r.indices().T.tolist()
                assert idx == sorted(idx) and len(set(map(tuple, idx))) == len(idx)
        assert torch.equal(torch.sparse.mm(b.t(), a.t()).to_dense(), want.t())


def test_structural_pattern_keeps_cancellations(path):
    a = torch.tensor([[1.0, 1.0]]).to_sparse()
    b = torch.tensor([[2.0], [-2.0]]).to_sparse()
    r = torch.sparse.mm(a, b)
    assert r._nnz() == 1 and r.values().tolist() == [0.0]


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "complex64"])
def test_dtypes(path, dtype):
    dt = getattr(torch, dtype)
    rng = np.random.default_rng(1)
    a, b = _rand(rng, 9, 7, 20, dt), _rand(rng, 7, 5, 20, dt)
    r = torch.sparse.mm(a, b)
    assert r.dtype is dt
    assert torch.equal(r.to_dense(), a.to_dense() @ b.to_dense())


def test_gradient_matches_dense(path):
    rng = np.random.default_rng(2)
    a = _rand(rng, 6, 5, 12, torch.float64).coalesce().requires_grad_(True)
    b = _rand(rng, 5, 4, 10, torch.float64).coalesce().requires_grad_(True)
    torch.sparse.mm(a, b).to_dense().sum().backward()
    ad = a.detach().to_dense().requires_grad_(True)
    bd = b.detach().to_dense().requires_grad_(True)
    (ad @ bd).sum().backward()
    for x, dense_grad in ((a, ad.grad), (b, bd.grad)):  # masked to each input's pattern
        mask = torch.sparse_coo_tensor(x.indices(), torch.ones(x._nnz(), dtype=x.dtype),
                                       x.shape).to_dense()
        assert torch.allclose(x.grad.to_dense(), dense_grad * mask)


def test_linear_index_overflow_shape():
    # (2**40 x 2**20) @ (2**20 x 2**40): the result's row * ncols + col overflows int64
    big, k = 2 ** 40, 2 ** 20
    a = torch.sparse_coo_tensor(torch.tensor([[1, 1 + 2 ** 24, big - 1], [3, 3, 4]]),
                                torch.tensor([1.0, 2.0, 3.0]), (big, k))
    b = torch.sparse_coo_tensor(torch.tensor([[3, 4, 3], [7, 7, big - 1]]),
                                torch.tensor([10.0, 20.0, 30.0]), (k, big))
    r = torch.sparse.mm(a, b).coalesce()
    got = dict(zip(map(tuple, r.indices().T.tolist()), r.values().tolist()))
    assert got == {(1, 7): 10.0, (1, big - 1): 30.0, (1 + 2 ** 24, 7): 20.0,
                   (1 + 2 ** 24, big - 1): 60.0, (big - 1, 7): 60.0}


def test_long_rows(path):
    # output rows longer than the insertion-sort limit (64) take the argsort branch
    rng = np.random.default_rng(3)
    a = _rand(rng, 3, 50, 120)
    b = _rand(rng, 50, 200, 3000)
    r = torch.sparse.mm(a, b)
    assert r.is_coalesced() and r._nnz() > 3 * 64
    assert torch.equal(r.to_dense(), a.to_dense() @ b.to_dense())
