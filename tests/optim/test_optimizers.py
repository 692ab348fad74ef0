"""Optimizers against NumPy references written from the published algorithms (dense, sparse exact,
sparse lazy) and against torch (when installed). State dicts and the API: test_optimizer_api.py."""

import numpy as np
import pytest

import sparsetorch as torch
from sparsetorch import optim
from sparsetorch.sparse import _spmm

from ._refs import CASES, IDS, REFS, STEPS, D, N, _sparse_grads, init_state


@pytest.fixture(params=[True, False], ids=["numba", "numpy"])
def kernels(request):
    old = _spmm.use_numba(request.param)
    yield request.param
    _spmm.use_numba(old)


def _run(name, hp, grads, p0, mode=None):
    p = torch.tensor(p0.copy()).requires_grad_()
    kw = dict(hp) if mode is None else dict(hp, sparse_mode=mode)
    opt = getattr(optim, name)([p], **kw)
    for g in grads:
        p.grad = g
        opt.step()
    return p.detach().numpy(), opt


def _ref(name, hp, dense_grads, p0, lazy_rows=None):
    ref = REFS[name]
    p = p0.copy()
    s = init_state(name, p.shape, hp)
    for t, g in enumerate(dense_grads, 1):
        if lazy_rows is None:
            p = ref(p, g, s, t, **hp)
        else:
            r = lazy_rows[t - 1]
            sr = {k: v[r] for k, v in s.items()}
            had = set(sr)
            p[r] = ref(p[r], g[r], sr, t, **hp)
            for k, v in sr.items():
                if k not in had:
                    s[k] = np.zeros(p.shape)
                s[k][r] = v
    return p


@pytest.mark.parametrize("name,hp", CASES, ids=IDS)
def test_dense_matches_reference(name, hp, kernels):
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((N, D))
    grads = [rng.standard_normal((N, D)) for _ in range(STEPS)]
    got, _ = _run(name, hp, [torch.tensor(g) for g in grads], p0)
    np.testing.assert_allclose(got, _ref(name, hp, grads, p0), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,hp", CASES, ids=IDS)
def test_sparse_exact_matches_densified(name, hp, kernels):
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal((N, D))
    sg = _sparse_grads(rng)
    got, _ = _run(name, hp, [g for g, _, _ in sg], p0)
    np.testing.assert_allclose(got, _ref(name, hp, [d for _, d, _ in sg], p0), rtol=1e-9, atol=1e-11)
    dense, _ = _run(name, hp, [torch.tensor(d) for _, d, _ in sg], p0)
    np.testing.assert_allclose(got, dense, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,hp", CASES, ids=IDS)
def test_sparse_lazy_matches_reference(name, hp, kernels):
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal((N, D))
    sg = _sparse_grads(rng)
    got, _ = _run(name, hp, [g for g, _, _ in sg], p0, mode="lazy")
    want = _ref(name, hp, [d for _, d, _ in sg], p0, lazy_rows=[r for _, _, r in sg])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    untouched = np.setdiff1d(np.arange(N), np.concatenate([r for _, _, r in sg]))
    np.testing.assert_array_equal(got[untouched], p0[untouched])


def test_sparse_adam_matches_reference(kernels):
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal((N, D))
    sg = _sparse_grads(rng)
    for hp in ({"lr": 0.05}, {"lr": 0.05, "betas": (0.8, 0.95), "maximize": True}):
        got, _ = _run("SparseAdam", hp, [g for g, _, _ in sg], p0)
        want = _ref("SparseAdam", hp, [d for _, d, _ in sg], p0, lazy_rows=[r for _, _, r in sg])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,hp", [c for c in CASES if c[0] in ("Adam", "Adagrad", "RowWiseAdagrad")])
def test_float32_fast_paths(name, hp, kernels):
    rng = np.random.default_rng(4)
    p0 = rng.standard_normal((N, D)).astype(np.float32)
    sg = _sparse_grads(rng)
    for mode in ("exact", "lazy"):
        p = torch.tensor(p0.copy()).requires_grad_()
        opt = getattr(optim, name)([p], sparse_mode=mode, **hp)
        for g, _, _ in sg:
            p.grad = g.to(torch.float32)
            opt.step()
        assert p.dtype == torch.float32 and opt.state[p]["sum" if "Adagrad" in name else "exp_avg"].dtype == torch.float32
        rows = None if mode == "exact" else [r for _, _, r in sg]
        want = _ref(name, hp, [d for _, d, _ in sg], p0.astype(np.float64), lazy_rows=rows)
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=2e-5, atol=2e-5)


def test_general_coo_and_csr_gradients():
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal((5, 6))
    dense = np.where(rng.random((5, 6)) < 0.3, rng.standard_normal((5, 6)), 0.0)
    for make in (lambda t: t.to_sparse(), lambda t: t.to_sparse_csr()):
        for name, hp in (("Adam", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                         ("Adagrad", {"lr": 0.1})):
            for mode in ("exact", "lazy"):
                p = torch.tensor(p0.copy()).requires_grad_()
                opt = getattr(optim, name)([p], sparse_mode=mode, **hp)
                for _ in range(3):
                    p.grad = make(torch.tensor(dense))
                    opt.step()
                nz = [np.flatnonzero(dense)] * 3
                want = p0.copy().reshape(-1)
                want = _ref(name, hp, [dense.reshape(-1)] * 3, want, None if mode == "exact" else nz)
                np.testing.assert_allclose(p.detach().numpy().reshape(-1), want, rtol=1e-9, atol=1e-11)


def test_multi_dim_param_row_sparse():
    # a hybrid COO gradient of a 3-D parameter: rows are dim 0, each row a 2x3 block
    rng = np.random.default_rng(6)
    p0 = rng.standard_normal((7, 2, 3))
    rows = np.array([1, 5, 1])
    vals = rng.standard_normal((3, 2, 3))
    dense = np.zeros_like(p0)
    np.add.at(dense, rows, vals)
    for name in ("Adam", "RowWiseAdagrad", "RMSprop"):
        a = torch.tensor(p0.copy()).requires_grad_()
        b = torch.tensor(p0.copy()).requires_grad_()
        oa, ob = getattr(optim, name)([a], lr=0.1), getattr(optim, name)([b], lr=0.1)
        for _ in range(3):
            a.grad = torch.sparse_coo_tensor(torch.tensor(rows[None]), torch.tensor(vals), p0.shape)
            b.grad = torch.tensor(dense)
            oa.step()
            ob.step()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


# ---- torch parity ----

TORCH_DENSE = [c for c in CASES if c[0] != "RowWiseAdagrad"]


@pytest.mark.parametrize("name,hp", TORCH_DENSE, ids=[i for i, c in zip(IDS, CASES) if c[0] != "RowWiseAdagrad"])
def test_torch_parity_dense(name, hp):
    T = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    p0 = rng.standard_normal((N, D)).astype(np.float32)
    a = torch.tensor(p0.copy()).requires_grad_()
    b = T.tensor(p0.copy(), requires_grad=True)
    oa, ob = getattr(optim, name)([a], **hp), getattr(T.optim, name)([b], **hp)
    for _ in range(STEPS):
        g = rng.standard_normal((N, D)).astype(np.float32)
        a.grad, b.grad = torch.tensor(g), T.tensor(g)
        oa.step()
        ob.step()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    sa, sb = oa.state_dict(), ob.state_dict()
    assert sa["param_groups"][0]["params"] == sb["param_groups"][0]["params"]
    assert {k: set(v) for k, v in sa["state"].items()} == {k: set(v) for k, v in sb["state"].items()}


@pytest.mark.parametrize("name,hp", [("SparseAdam", {"lr": 0.05}), ("SGD", {"lr": 0.1}),
                                     ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.01})])
def test_torch_parity_sparse(name, hp, kernels):
    T = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    p0 = rng.standard_normal((N, D)).astype(np.float32)
    a = torch.tensor(p0.copy()).requires_grad_()
    b = T.tensor(p0.copy(), requires_grad=True)
    oa, ob = getattr(optim, name)([a], **hp), getattr(T.optim, name)([b], **hp)
    for g, _, _ in _sparse_grads(rng):
        idx, val = g._indices().numpy(), g._values().numpy().astype(np.float32)
        a.grad = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), (N, D))
        b.grad = T.sparse_coo_tensor(T.tensor(idx), T.tensor(val), (N, D), check_invariants=True)
        oa.step()
        ob.step()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("maximize", [False, True])
def test_sgd_sparse_rows_kernel_same_bits_as_numpy(maximize):
    """SGD without momentum on a row-sparse float32 gradient: the numba row kernel gives the bits
    of the NumPy gather/scatter (``P[rows] - lr * g`` in float32); untouched rows unchanged."""
    rng = np.random.default_rng(11)
    p0 = rng.standard_normal((200, 16)).astype(np.float32)
    idx = rng.choice(200, (1, 120), replace=False)  # unique rows: the coalesce is not under test
    val = rng.standard_normal((120, 16)).astype(np.float32)
    got = []
    for on in (True, False):
        old = _spmm.use_numba(on)
        try:
            p = torch.tensor(p0.copy()).requires_grad_()
            opt = optim.SGD([p], lr=0.1, maximize=maximize)
            for _ in range(2):
                p.grad = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), (200, 16))
                opt.step()
            got.append(p.detach().numpy())
        finally:
            _spmm.use_numba(old)
    np.testing.assert_array_equal(got[0], got[1])
    untouched = np.setdiff1d(np.arange(200), idx[0])
    np.testing.assert_array_equal(got[0][untouched], p0[untouched])
    assert not np.array_equal(got[0], p0)


@pytest.mark.parametrize("maximize", [False, True])
def test_sgd_uncoalesced_embedding_grad_matches_torch(maximize, kernels):
    """Plain SGD from Embedding(sparse=True)'s uncoalesced gradient (repeated ids): each entry
    applied in order without a coalesce on the numba path; torch's values either way (to
    float32 rounding)."""
    T = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    w0 = rng.standard_normal((30, 20)).astype(np.float32)
    ids = rng.integers(0, 30, (6, 9))
    g = rng.standard_normal((6, 9, 20)).astype(np.float32)
    res = []
    for lib in (torch, T):
        emb = lib.nn.Embedding(30, 20, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SGD(emb.parameters(), lr=0.1, maximize=maximize)
        for _ in range(3):
            opt.zero_grad()
            (emb(lib.tensor(ids)) * lib.tensor(g)).sum().backward()
            assert not emb.weight.grad.is_coalesced()
            opt.step()
        res.append(emb.weight.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6, atol=1e-6)  # torch's axpy may fuse
