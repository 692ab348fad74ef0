"""Optimizer state dicts, param groups, closures and hooks, bad inputs, and sparse gradients from
the layers into every optimizer."""

import copy

import numpy as np
import pytest

import sparsetorch as torch
from sparsetorch import optim

from ._refs import CASES, IDS, D, N, _sparse_grads

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
