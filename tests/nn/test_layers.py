"""Layers: float64 gradcheck through inputs and parameters, torch parity with copied weights,
BatchNorm running statistics, Dropout modes, init schemes, and gradient clipping (dense and
sparse gradients)."""

import math

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn as nn
from sparsetorch.autograd import gradcheck

RNG = np.random.default_rng(7)


def _module_gradcheck(m, *inputs):
    """gradcheck of ``m(*inputs)`` w.r.t. the inputs and every parameter (float64)."""
    m.double()
    slots = [(mod, name) for mod in m.modules() for name, p in mod._parameters.items()
             if p is not None]
    params = [mod._parameters[name].detach().clone().requires_grad_(True) for mod, name in slots]
    n_in = len(inputs)

    def f(*args):
        for (mod, name), p in zip(slots, args[n_in:]):
            mod._parameters[name] = p
        return m(*args[:n_in])

    return gradcheck(f, tuple(inputs) + tuple(params))


def _x(*shape, rg=True):
    return st.tensor(RNG.standard_normal(shape), requires_grad=rg)


# (constructor(lib), input shapes); modules with several inputs list several shapes
LAYERS = {
    "Linear": (lambda n: n.Linear(5, 3), [(4, 5)]),
    "Linear_nobias_3d": (lambda n: n.Linear(5, 3, bias=False), [(2, 4, 5)]),
    "Bilinear": (lambda n: n.Bilinear(4, 3, 2), [(5, 4), (5, 3)]),
    "Identity": (lambda n: n.Identity(7, foo=1), [(2, 3)]),
    "Flatten": (lambda n: n.Flatten(), [(2, 3, 4)]),
    "Unflatten": (lambda n: n.Unflatten(1, (2, 3)), [(4, 6)]),
    "LayerNorm": (lambda n: n.LayerNorm(5), [(3, 5)]),
    "LayerNorm_2d_nobias": (lambda n: n.LayerNorm((3, 4), bias=False), [(2, 3, 4)]),
    "LayerNorm_noaffine": (lambda n: n.LayerNorm(4, elementwise_affine=False), [(3, 4)]),
    "BatchNorm1d": (lambda n: n.BatchNorm1d(3), [(6, 3)]),
    "BatchNorm1d_3d": (lambda n: n.BatchNorm1d(3, momentum=None), [(4, 3, 5)]),
    "BatchNorm2d": (lambda n: n.BatchNorm2d(2), [(3, 2, 2, 3)]),
    "BatchNorm2d_noaffine": (lambda n: n.BatchNorm2d(2, affine=False), [(3, 2, 2, 2)]),
    "ReLU": (lambda n: n.ReLU(), [(3, 4)]),
    "LeakyReLU": (lambda n: n.LeakyReLU(0.1), [(3, 4)]),
    "ELU": (lambda n: n.ELU(0.5), [(3, 4)]),
    "GELU": (lambda n: n.GELU(), [(3, 4)]),
    "GELU_tanh": (lambda n: n.GELU("tanh"), [(3, 4)]),
    "SiLU": (lambda n: n.SiLU(), [(3, 4)]),
    "Sigmoid": (lambda n: n.Sigmoid(), [(3, 4)]),
    "Tanh": (lambda n: n.Tanh(), [(3, 4)]),
    "Softmax": (lambda n: n.Softmax(dim=1), [(3, 4)]),
    "LogSoftmax": (lambda n: n.LogSoftmax(dim=0), [(3, 4)]),
    "Softplus": (lambda n: n.Softplus(beta=2.0, threshold=5.0), [(3, 4)]),
    "Sequential_mlp": (lambda n: n.Sequential(n.Linear(4, 6), n.Tanh(), n.LayerNorm(6),
                                              n.Linear(6, 2)), [(5, 4)]),
}

LOSSES = {
    "MSELoss": (lambda n: n.MSELoss(), "reg"),
    "L1Loss": (lambda n: n.L1Loss(reduction="sum"), "reg"),
    "SmoothL1Loss": (lambda n: n.SmoothL1Loss(beta=0.5), "reg"),
    "CrossEntropyLoss": (lambda n, lib: n.CrossEntropyLoss(
        weight=lib.tensor([1.0, 2.0, 0.5, 1.5], dtype=lib.float64), ignore_index=2,
        label_smoothing=0.1), "cls"),
    "CrossEntropyLoss_prob": (lambda n: n.CrossEntropyLoss(reduction="none"), "prob"),
    "NLLLoss": (lambda n: n.NLLLoss(reduction="sum"), "cls"),
    "BCELoss": (lambda n: n.BCELoss(), "bce"),
    "BCEWithLogitsLoss": (lambda n, lib: n.BCEWithLogitsLoss(
        pos_weight=lib.tensor([1.0, 2.0, 3.0, 0.5], dtype=lib.float64)), "bcel"),
    "MarginRankingLoss": (lambda n: n.MarginRankingLoss(margin=0.2), "rank"),
    "CosineEmbeddingLoss": (lambda n: n.CosineEmbeddingLoss(margin=0.1), "cos"),
}


def _loss_inputs(kind, lib):
    r = np.random.default_rng(3)
    x = r.standard_normal((5, 4))
    if kind == "reg":
        return [x, r.standard_normal((5, 4))], [0, 1], []
    if kind == "cls":
        return [x], [0], [lib.tensor(np.array([0, 3, 2, 1, 3]))]
    if kind == "prob":
        p = r.random((5, 4))
        return [x, p / p.sum(1, keepdims=True)], [0, 1], []
    if kind == "bce":
        return [1 / (1 + np.exp(-x)), r.random((5, 4))], [0], []
    if kind == "bcel":
        return [x, r.random((5, 4))], [0, 1], []
    y = lib.tensor(np.array([1.0, -1.0, 1.0, 1.0, -1.0]))
    if kind == "rank":
        return [x[:, 0], x[:, 1]], [0, 1], [y]
    return [x, r.standard_normal((5, 4))], [0, 1], [y]


def _make_loss(ctor, lib):
    try:
        return ctor(lib.nn, lib)
    except TypeError:
        return ctor(lib.nn)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_gradcheck(name):
    ctor, shapes = LAYERS[name]
    m = ctor(nn)
    assert _module_gradcheck(m, *[_x(*s) for s in shapes])


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_gradcheck(name):
    ctor, kind = LOSSES[name]
    m = _make_loss(ctor, st)
    arrays, diff, extra = _loss_inputs(kind, st)
    ts = [st.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrays)]
    assert gradcheck(lambda *a: m(*a, *extra), tuple(ts))


def _copy_weights(src_torch, dst):
    sd = {k: st.tensor(v.detach().numpy()) for k, v in src_torch.state_dict().items()}
    dst.load_state_dict(sd)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_torch_parity(name):
    torch = pytest.importorskip("torch")
    ctor, shapes = LAYERS[name]
    tm, sm = ctor(torch.nn).double(), ctor(nn).double()
    _copy_weights(tm, sm)
    arrays = [RNG.standard_normal(s) for s in shapes]
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    sx = [st.tensor(a, requires_grad=True) for a in arrays]
    for step in range(2):  # two steps: BatchNorm's running stats feed the second
        rt, rs = tm(*tx), sm(*sx)
        np.testing.assert_allclose(rs.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-9)
        go = RNG.standard_normal(tuple(rt.shape))
        rt.backward(torch.tensor(go))
        rs.backward(st.tensor(go))
    for a, b in zip(tx, sx):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-9)
    tp, sp = dict(tm.named_parameters()), dict(sm.named_parameters())
    assert list(tp) == list(sp)
    for k in tp:
        np.testing.assert_allclose(sp[k].grad.numpy(), tp[k].grad.numpy(), rtol=1e-6, atol=1e-9)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(sm.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-9)
    tm.eval()
    sm.eval()
    np.testing.assert_allclose(sm(*sx).detach().numpy(), tm(*tx).detach().numpy(),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_torch_parity(name):
    torch = pytest.importorskip("torch")
    ctor, kind = LOSSES[name]
    tl, sl = _make_loss(ctor, torch), _make_loss(ctor, st)
    arrays, diff, _ = _loss_inputs(kind, st)
    _, _, textra = _loss_inputs(kind, torch)
    _, _, sextra = _loss_inputs(kind, st)
    tx = [torch.tensor(a, requires_grad=i in diff and i == 0) for i, a in enumerate(arrays)]
    sx = [st.tensor(a, requires_grad=i in diff and i == 0) for i, a in enumerate(arrays)]
    rt, rs = tl(*tx, *textra), sl(*sx, *sextra)
    np.testing.assert_allclose(rs.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-9)
    rt.sum().backward()
    rs.sum().backward()
    np.testing.assert_allclose(sx[0].grad.numpy(), tx[0].grad.numpy(), rtol=1e-6, atol=1e-9)
    assert list(sl.state_dict()) == list(tl.state_dict())


# ---- BatchNorm, Dropout, Linear init ----

def test_batchnorm_running_stats_and_eval():
    bn = nn.BatchNorm1d(3, momentum=0.5)
    x = st.tensor(RNG.standard_normal((8, 3)), dtype=st.float32)
    bn(x)
    mean = x.numpy().mean(0)
    var = x.numpy().var(0, ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * mean, rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * var, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1 and bn.running_mean.dtype is st.float32
    bn.eval()
    y = bn(x).detach().numpy()
    ref = (x.numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    assert bn.num_batches_tracked.item() == 1  # no update in eval mode
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        bn(st.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(st.randn(2, 3))


def test_batchnorm_cumulative_average_and_no_tracking():
    bn = nn.BatchNorm1d(2, momentum=None)
    xs = [st.randn(4, 2) for _ in range(3)]
    for x in xs:
        bn(x)
    np.testing.assert_allclose(bn.running_mean.numpy(),
                               np.mean([x.numpy().mean(0) for x in xs], 0), rtol=1e-5, atol=1e-6)
    bn2 = nn.BatchNorm1d(2, track_running_stats=False)
    assert bn2.running_mean is None and "running_mean" not in bn2.state_dict()
    bn2.eval()
    assert bn2(st.randn(4, 2)).shape == (4, 2)  # batch statistics in eval mode too


def test_dropout_module_modes():
    d = nn.Dropout(0.5)
    x = st.ones(200)
    assert (d(x).numpy() == 0).any()
    d.eval()
    assert d(x) is x
    assert repr(d) == "Dropout(p=0.5, inplace=False)"
    with pytest.raises(ValueError):
        nn.Dropout(2.0)


def test_linear_init_bounds_and_dtype():
    m = nn.Linear(16, 8)
    bound = 1 / math.sqrt(16)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert m.weight.dtype is st.float32 and m.weight.shape == (8, 16)
    assert nn.Linear(2, 3, dtype=st.float64).weight.dtype is st.float64
    assert m(st.randn(4, 16)).dtype is st.float32


def test_training_loop_reduces_loss():
    st.manual_seed(0)
    x = st.randn(64, 4)
    y = (x[:, :1] * 2 - x[:, 1:2]).detach()
    m = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    lossf = nn.MSELoss()
    first = None
    for _ in range(100):
        loss = lossf(m(x), y)
        first = first if first is not None else loss.item()
        m.zero_grad()
        loss.backward()
        with st.no_grad():
            for p in m.parameters():
                p.sub_(p.grad * 0.05)
    assert loss.item() < 0.3 * first


# ---- clip_grad (dense and sparse gradients, #4829) ----

def _sparse_grad_params():
    i = st.tensor([[0, 2, 0, 3], [1, 0, 1, 2]])  # (0, 1) stored twice: uncoalesced
    v = st.tensor([1.0, -2.0, 3.0, 0.5])
    p1 = nn.Parameter(st.zeros(4, 3))
    p1.grad = st.sparse_coo_tensor(i, v, (4, 3))
    p2 = nn.Parameter(st.zeros(3))
    p2.grad = st.tensor([0.5, -4.0, 1.5])
    p3 = nn.Parameter(st.zeros(3, 3))
    p3.grad = st.tensor([[0.0, 2.0, 0.0], [0.0, 0.0, -1.0], [3.0, 0.0, 0.0]]).to_sparse_csr()
    return [p1, p2, p3]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_sparse_equals_dense(norm_type):
    sparse_ps = _sparse_grad_params()
    dense_ps = _sparse_grad_params()
    for p in dense_ps:
        p.grad = p.grad.to_dense()
    layouts = [p.grad.layout for p in sparse_ps]
    ts = nn.utils.clip_grad_norm_(sparse_ps, 1.5, norm_type)
    td = nn.utils.clip_grad_norm_(dense_ps, 1.5, norm_type)
    np.testing.assert_allclose(ts.item(), td.item(), rtol=1e-6)
    for ps, pd, lay in zip(sparse_ps, dense_ps, layouts):
        assert ps.grad.layout is lay  # never densified
        np.testing.assert_allclose(ps.grad.to_dense().numpy(), pd.grad.numpy(), rtol=1e-6)
    flat = np.concatenate([p.grad.numpy().ravel() for p in dense_ps])
    assert np.linalg.norm(flat, norm_type) <= 1.5 + 1e-4


def test_clip_grad_norm_torch_parity_and_errors():
    torch = pytest.importorskip("torch")
    ps = _sparse_grad_params()
    dense = [p.grad.to_dense().numpy() for p in ps]
    tps = [torch.zeros(d.shape, requires_grad=True) for d in dense]
    for tp, d in zip(tps, dense):
        tp.grad = torch.tensor(d)
    tn = torch.nn.utils.clip_grad_norm_(tps, 2.0)
    sn = nn.utils.clip_grad_norm_(ps, 2.0)
    np.testing.assert_allclose(sn.item(), tn.item(), rtol=1e-6)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.grad.to_dense().numpy(), tp.grad.numpy(), rtol=1e-6)
    p = nn.Parameter(st.zeros(2))
    p.grad = st.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_value_sparse_equals_dense():
    sparse_ps = _sparse_grad_params()
    dense_ps = _sparse_grad_params()
    for p in dense_ps:
        p.grad = p.grad.to_dense()
    g0 = sparse_ps[0].grad
    nn.utils.clip_grad_value_(sparse_ps, 1.2)
    nn.utils.clip_grad_value_(dense_ps, 1.2)
    assert sparse_ps[0].grad is g0 and g0.layout is st.sparse_coo
    for ps, pd in zip(sparse_ps, dense_ps):
        # the duplicate (0, 1) entries sum to 4 before clamping: 1.2, not 1 + 1.2
        np.testing.assert_allclose(ps.grad.to_dense().numpy(), pd.grad.numpy(), rtol=1e-6)
    assert sparse_ps[0].grad.to_dense()[0, 1].item() == pytest.approx(1.2)


def test_parameters_to_vector_round_trip():
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    nn.utils.vector_to_parameters(v * 0 + 1, m.parameters())
    assert (m.weight.detach().numpy() == 1).all()
