"""Optimizers against NumPy references written from the published algorithms (dense, sparse exact,
sparse lazy), against torch (when installed), state_dict round trips and bad inputs."""

import copy
import math

import numpy as np
import pytest

import sparsetorch as torch
from sparsetorch import optim
from sparsetorch.sparse import _spmm

# ---- NumPy references (float64), one step each; ``s`` is the state dict, ``t`` the step ----


def ref_sgd(p, g, s, t, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        s["b"] = g.copy() if "b" not in s else momentum * s["b"] + (1 - dampening) * g
        g = g + momentum * s["b"] if nesterov else s["b"]
    return p - lr * g


def ref_adam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
             maximize=False, decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    vh = s["v"]
    if amsgrad:
        s["vmax"] = np.maximum(s["vmax"], s["v"])
        vh = s["vmax"]
    return p - lr / (1 - b1 ** t) * s["m"] / (np.sqrt(vh) / math.sqrt(1 - b2 ** t) + eps)


def ref_adamw(p, g, s, t, lr, weight_decay=1e-2, **kw):
    return ref_adam(p, g, s, t, lr, weight_decay=weight_decay, decoupled=True, **kw)


def ref_adagrad(p, g, s, t, lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sum"] = s["sum"] + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def ref_rmsprop(p, g, s, t, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sq"] = alpha * s["sq"] + (1 - alpha) * g * g
    avg = s["sq"]
    if centered:
        s["ga"] = alpha * s["ga"] + (1 - alpha) * g
        avg = avg - s["ga"] ** 2
    step = g / (np.sqrt(avg) + eps)
    if momentum > 0:
        s["buf"] = momentum * s["buf"] + step
        step = s["buf"]
    return p - lr * step


def ref_adadelta(p, g, s, t, lr, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sq"] = rho * s["sq"] + (1 - rho) * g * g
    delta = np.sqrt(s["acc"] + eps) / np.sqrt(s["sq"] + eps) * g
    s["acc"] = rho * s["acc"] + (1 - rho) * delta * delta
    return p - lr * delta


def ref_rowwise(p, g, s, t, lr, eps=1e-8, weight_decay=0, initial_accumulator_value=0,
                maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sum"] = s["sum"] + (g * g).mean(axis=1)
    return p - (lr / (np.sqrt(s["sum"]) + eps))[:, None] * g


def ref_sparse_adam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, maximize=False):
    b1, b2 = betas
    g = -g if maximize else g
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    return p - lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * s["m"] / (np.sqrt(s["v"]) + eps)


def init_state(name, shape, hp):
    z = np.zeros(shape)
    if name in ("Adam", "AdamW", "SparseAdam"):
        return {"m": z.copy(), "v": z.copy(), "vmax": z.copy()}
    if name == "Adagrad":
        return {"sum": np.full(shape, float(hp.get("initial_accumulator_value", 0)))}
    if name == "RowWiseAdagrad":
        return {"sum": np.full(shape[0], float(hp.get("initial_accumulator_value", 0)))}
    if name == "RMSprop":
        return {"sq": z.copy(), "ga": z.copy(), "buf": z.copy()}
    if name == "Adadelta":
        return {"sq": z.copy(), "acc": z.copy()}
    return {}


REFS = {"SGD": ref_sgd, "Adam": ref_adam, "AdamW": ref_adamw, "Adagrad": ref_adagrad,
        "RMSprop": ref_rmsprop, "Adadelta": ref_adadelta, "RowWiseAdagrad": ref_rowwise,
        "SparseAdam": ref_sparse_adam}

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.1, "momentum": 0.8, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("RowWiseAdagrad", {"lr": 0.1}),
    ("RowWiseAdagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.1}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in hp.items())}" for n, hp in CASES]

N, D, STEPS = 12, 4, 6


@pytest.fixture(params=[True, False], ids=["numba", "numpy"])
def kernels(request):
    old = _spmm.use_numba(request.param)
    yield request.param
    _spmm.use_numba(old)


def _sparse_grads(rng, steps=STEPS, n=N, d=D):
    """Uncoalesced row-sparse gradients (duplicates, varying rows) and their dense forms."""
    out = []
    for _ in range(steps):
        nnz = int(rng.integers(1, 8))
        rows = rng.integers(0, n, size=nnz)
        vals = rng.standard_normal((nnz, d))
        dense = np.zeros((n, d))
        np.add.at(dense, rows, vals)
        g = torch.sparse_coo_tensor(torch.tensor(rows[None]), torch.tensor(vals), (n, d))
        out.append((g, dense, np.unique(rows)))
    return out


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


# ---- state dicts ----

ROUND_TRIPS = [(n, hp, m) for (n, hp) in CASES for m in ("dense", "exact", "lazy")]
ROUND_TRIPS.append(("SparseAdam", {"lr": 0.05}, "exact"))


@pytest.mark.parametrize("name,hp,mode", ROUND_TRIPS,
                         ids=[f"{i}-{m}" for i in IDS for m in ("dense", "exact", "lazy")] + ["SparseAdam"])
def test_state_dict_round_trip(name, hp, mode):
    rng = np.random.default_rng(9)
    p0 = rng.standard_normal((N, D))
    sg = _sparse_grads(rng)
    grads = [torch.tensor(d) for _, d, _ in sg] if mode == "dense" else [g for g, _, _ in sg]
    kw = dict(hp) if name == "SparseAdam" else dict(hp, sparse_mode="lazy" if mode == "lazy" else "exact")
    a = torch.tensor(p0.copy()).requires_grad_()
    oa = getattr(optim, name)([a], **kw)
    for g in grads[:3]:
        a.grad = g
        oa.step()
    sd = copy.deepcopy(oa.state_dict())
    b = torch.tensor(a.detach().numpy().copy()).requires_grad_()
    ob = getattr(optim, name)([b], **kw)
    ob.load_state_dict(sd)
    for g in grads[3:]:
        a.grad = g
        b.grad = g
        oa.step()
        ob.step()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_state_dict_format_and_casting():
    a = torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    a.grad, b.grad = torch.ones(3, 2, dtype=torch.float64), torch.ones(4)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["lr"] == 0.1
    assert set(sd["state"]) == {0, 1}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert float(sd["state"][0]["step"]) == 1.0
    # load into float32 parameters: state tensors cast to the parameter's dtype, copied
    a32 = torch.zeros(3, 2, requires_grad=True)
    opt2 = optim.Adam([{"params": [a32]}, {"params": [torch.zeros(4, requires_grad=True)]}])
    opt2.load_state_dict(sd)
    st = opt2.state[a32]
    assert st["exp_avg"].dtype == torch.float32
    assert st["exp_avg"] is not sd["state"][0]["exp_avg"]
    assert opt2.param_groups[1]["lr"] == 0.5


def test_state_dict_mismatches():
    a, b = torch.zeros(3, requires_grad=True), torch.zeros(2, requires_grad=True)
    opt = optim.Adam([a, b])
    a.grad, b.grad = torch.ones(3), torch.ones(2)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([a]).load_state_dict(sd)
    with pytest.raises(ValueError, match="shape"):
        optim.Adam([b, a]).load_state_dict(sd)


# ---- API and bad inputs ----

def test_param_groups_and_zero_grad():
    a, b = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    opt = optim.SGD([{"params": a}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["params"] == [a] and opt.param_groups[0]["lr"] == 0.1
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    c = torch.ones(1, requires_grad=True)
    opt.add_param_group({"params": [c]})
    assert len(opt.param_groups) == 3
    a.grad = torch.ones(2)
    opt.zero_grad(set_to_none=False)
    assert a.grad is not None and float(a.grad.abs().sum()) == 0.0 and b.grad is None
    opt.zero_grad()
    assert a.grad is None
    assert "Parameter Group 0" in repr(opt)
    named = optim.Adam([("w", a), ("v", b)])
    assert named.param_groups[0]["param_names"] == ["w", "v"]
    assert named.param_groups[0]["params"] == [a, b]


def test_step_closure_and_hooks():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    calls = []
    h = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0 and calls == ["pre", "post"]
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -1.6], rtol=1e-6)
    assert not w.grad_fn
    h.remove()
    opt.step(closure)
    assert calls == ["pre", "post", "post"]


def test_bad_inputs():
    a = torch.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)
    for cls in (optim.SGD, optim.AdamW, optim.Adagrad, optim.RMSprop, optim.Adadelta,
                optim.SparseAdam, optim.RowWiseAdagrad):
        with pytest.raises(ValueError, match="Invalid learning rate"):
            cls([a], lr=-0.1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        optim.Adam([a], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.SparseAdam([a], betas=(0.9, -0.1))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        optim.Adam([a], eps=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="sparse_mode"):
        optim.Adam([a], sparse_mode="sloppy")
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.Adam(a)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.Adam([a, 1.0])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.Adam([a * 2])
    with pytest.raises(ValueError, match="requires dense parameter tensors"):
        optim.SparseAdam([torch.zeros(2, 2).to_sparse()])
    opt = optim.SparseAdam([a])
    a.grad = torch.ones(3)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()


# ---- sparse gradients from the layers ----

@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta",
                                  "SparseAdam", "RowWiseAdagrad"])
@pytest.mark.parametrize("mode", ["exact", "lazy"])
def test_embedding_sparse_grads_into_every_optimizer(name, mode):
    nn = pytest.importorskip("sparsetorch.nn")
    torch.manual_seed(0)
    kw = {"lr": 0.1} if name == "SparseAdam" else {"lr": 0.1, "sparse_mode": mode}
    if name == "SGD":
        kw["momentum"] = 0.9
    mods = []
    for sparse in (True, False):
        torch.manual_seed(0)
        mods.append((nn.Embedding(10, 3, sparse=sparse), nn.EmbeddingBag(10, 3, mode="mean", sparse=sparse)))
    (e1, b1), (e2, b2) = mods
    o1 = getattr(optim, name)(list(e1.parameters()) + list(b1.parameters()), **kw)
    o2 = None if name == "SparseAdam" else getattr(optim, name)(list(e2.parameters()) + list(b2.parameters()), **kw)
    idx = torch.tensor([1, 2, 1, 5, 7, 7])
    off = torch.tensor([0, 2, 5])
    before = e1.weight.detach().clone()
    for _ in range(3):
        o1.zero_grad()
        (e1(idx) ** 2).sum().add((b1(idx, off) ** 2).sum()).backward()
        assert e1.weight.grad.is_sparse and b1.weight.grad.is_sparse
        o1.step()
        if o2 is not None:
            o2.zero_grad()
            (e2(idx) ** 2).sum().add((b2(idx, off) ** 2).sum()).backward()
            o2.step()
    changed = (e1.weight.detach() != before).any(dim=1).numpy()
    assert changed[[1, 2, 5, 7]].all()
    if mode == "lazy" or name == "SparseAdam":
        assert not changed[[0, 3, 4, 6, 8, 9]].any()
    if o2 is not None and mode == "exact":
        np.testing.assert_allclose(e1.weight.detach().numpy(), e2.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b1.weight.detach().numpy(), b2.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,hp", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}),
                                     ("Adagrad", {"lr": 0.1}), ("RMSprop", {"lr": 0.01})])
def test_sparse_parameter_masked_gradient(name, hp):
    # a sparse parameter (as SparseLinear's weight) with a gradient of its own pattern: the update
    # runs on the stored values, and the pattern is kept
    rng = np.random.default_rng(10)
    dense = np.where(rng.random((4, 5)) < 0.5, rng.standard_normal((4, 5)), 0.0)
    for to_sparse in (lambda t: t.to_sparse_csr(), lambda t: t.to_sparse()):
        w = to_sparse(torch.tensor(dense)).requires_grad_()
        v = torch.tensor(w.values().detach().numpy().copy()).requires_grad_()
        ow, ov = getattr(optim, name)([w], **hp), getattr(optim, name)([v], **hp)
        for _ in range(4):
            gv = rng.standard_normal(v.shape)
            v.grad = torch.tensor(gv)
            pl = w._data
            w.grad = (torch.sparse_csr_tensor(torch.tensor(pl.crow), torch.tensor(pl.col), torch.tensor(gv), w.shape)
                      if w.layout is torch.sparse_csr else
                      torch.sparse_coo_tensor(torch.tensor(pl.indices), torch.tensor(gv), w.shape))
            ow.step()
            ov.step()
        assert w.layout in (torch.sparse_csr, torch.sparse_coo)
        np.testing.assert_allclose(w.values().detach().numpy(), v.detach().numpy(), rtol=1e-12)
        w.grad = to_sparse(torch.ones(4, 5))
        with pytest.raises(RuntimeError, match="sparsity pattern"):
            ow.step()


def test_sgd_exact_momentum_buffer_stays_row_sparse():
    p = torch.zeros(100, 3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    for rows in ([1, 5], [5, 7]):
        p.grad = torch.sparse_coo_tensor(torch.tensor([rows]), torch.ones(2, 3), (100, 3))
        opt.step()
    buf = opt.state[p]["momentum_buffer"]
    assert buf.is_sparse and buf._indices().tolist() == [[1, 5, 7]]
    np.testing.assert_allclose(buf.to_dense().numpy()[[1, 5, 7], 0], [0.9, 1.9, 1.0], rtol=1e-6)
