"""nn layers and optimizers on CUDA: a module moved with ``.cuda()``/``.to()`` gives the CPU
module's outputs and gradients, and every optimizer (dense and sparse gradients, exact and lazy
sparse modes) takes the same steps with its state on the parameter's device."""

import copy

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as F
from sparsetorch import nn

from ._util import CUDA_MARKS, assert_close, tensors, to_device

pytestmark = CUDA_MARKS


def _ids(n, hi, seed=0):
    return st.tensor(np.random.default_rng(seed).integers(0, hi, n))


# (name, module factory, input factory); inputs are built on the CPU and moved
LAYERS = [
    ("linear", lambda: nn.Linear(5, 3), lambda: (st.randn(4, 5),)),
    ("bilinear", lambda: nn.Bilinear(3, 4, 2), lambda: (st.randn(5, 3), st.randn(5, 4))),
    ("mlp", lambda: nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2)),
     lambda: (st.randn(3, 6),)),
    ("conv2d", lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
     lambda: (st.randn(2, 2, 6, 6),)),
    ("conv1d", lambda: nn.Sequential(nn.Conv1d(2, 4, 3, stride=2), nn.AvgPool1d(2)),
     lambda: (st.randn(3, 2, 11),)),
    ("batchnorm", lambda: nn.BatchNorm1d(4), lambda: (st.randn(6, 4),)),
    ("lstm", lambda: nn.LSTM(3, 4, num_layers=2, batch_first=True), lambda: (st.randn(2, 5, 3),)),
    ("gru", lambda: nn.GRU(3, 4), lambda: (st.randn(5, 2, 3),)),
    ("embedding", lambda: nn.Embedding(20, 4, padding_idx=0), lambda: (_ids(12, 20).view(3, 4),)),
    ("embedding-sparse", lambda: nn.Embedding(20, 4, sparse=True), lambda: (_ids(12, 20),)),
    ("embedding-maxnorm", lambda: nn.Embedding(20, 4, max_norm=1.0), lambda: (_ids(12, 20),)),
    ("bag-sum", lambda: nn.EmbeddingBag(30, 4, mode="sum"),
     lambda: (_ids(16, 30), st.tensor([0, 3, 3, 9]))),
    ("bag-mean-sparse", lambda: nn.EmbeddingBag(30, 4, mode="mean", sparse=True),
     lambda: (_ids(16, 30), st.tensor([0, 5, 11]))),
    ("bag-max", lambda: nn.EmbeddingBag(30, 4, mode="max"),
     lambda: (_ids(16, 30, 1), st.tensor([0, 4, 4, 10]))),
    ("bag-psw", lambda: nn.EmbeddingBag(30, 4, mode="sum", padding_idx=2),
     lambda: (_ids(16, 30), st.tensor([0, 8]), st.rand(16))),
    ("bag-2d", lambda: nn.EmbeddingBag(30, 4, mode="mean"), lambda: (_ids(12, 30).view(3, 4),)),
    ("sparse-linear", lambda: nn.SparseLinear(6, 3, sparsity=0.5), lambda: (st.randn(4, 6),)),
]


def _forward_backward(module, inputs):
    out = module(*inputs)
    if isinstance(out, tuple):
        out = out[0]
    w = st.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape).to(out.device)
    (out * w).sum().backward()
    return out


@pytest.mark.parametrize("name,make,inputs", [pytest.param(*c, id=c[0]) for c in LAYERS])
def test_layer_on_device_matches_cpu(name, make, inputs, device):
    st.manual_seed(0)
    cpu = make()
    dev = copy.deepcopy(cpu).cuda()
    for p in dev.parameters():
        assert p.device == device
    for b in dev.buffers():
        assert b.device == device
    x = inputs()
    out_c = _forward_backward(cpu, x)
    out_d = _forward_backward(dev, to_device(x, device))
    assert out_d.device == device
    assert_close(out_d, out_c, 1e-5, 1e-6, msg=name)
    for (pn, pc), pd in zip(cpu.named_parameters(), dev.parameters()):
        if pc.grad is None:
            assert pd.grad is None
            continue
        assert pd.grad.device == device and pd.grad.layout is pc.grad.layout, pn
        assert_close(pd.grad, pc.grad, 1e-5, 1e-6, msg=f"{name}.{pn}.grad")
    for bc, bd in zip(cpu.buffers(), dev.buffers()):
        assert_close(bd, bc, 1e-5, 1e-6, msg=f"{name} buffer")


def test_module_to_keeps_parameter_objects(device):
    m = nn.Linear(3, 2)
    w = m.weight
    opt = st.optim.SGD(m.parameters(), lr=0.1)
    m.to(device)
    assert m.weight is w and w.device == device  # optimizers built before .to() keep working
    m(st.randn(2, 3, device="cuda")).sum().backward()
    opt.step()
    assert w.device == device
    m.cpu()
    assert w.device == st.device("cpu")
    m.to("cuda", st.float64)
    assert w.device == device and w.dtype is st.float64


def test_functional_losses_on_device(device):
    logits = st.randn(5, 4)
    target = st.tensor([0, 3, 1, 1, 2])
    for fn in (F.cross_entropy, F.nll_loss, F.multi_margin_loss if hasattr(F, "multi_margin_loss") else F.cross_entropy):
        arg = F.log_softmax(logits, 1) if fn is F.nll_loss else logits
        assert_close(fn(arg.cuda(), target.cuda()), fn(arg, target), 1e-6, 1e-7)
    y = st.rand(5, 4)
    assert_close(F.mse_loss(logits.cuda(), y.cuda()), F.mse_loss(logits, y), 1e-6, 1e-7)
    assert_close(F.binary_cross_entropy_with_logits(logits.cuda(), y.cuda()),
                 F.binary_cross_entropy_with_logits(logits, y), 1e-6, 1e-7)
    assert_close(F.one_hot(target.cuda(), 4), F.one_hot(target, 4))


# ---- optimizers ----

DENSE_OPTS = [
    ("sgd", lambda p: st.optim.SGD(p, lr=0.1)),
    ("sgd-momentum", lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("adam", lambda p: st.optim.Adam(p, lr=0.05)),
    ("adam-amsgrad", lambda p: st.optim.Adam(p, lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("adamw", lambda p: st.optim.AdamW(p, lr=0.05)),
    ("adagrad", lambda p: st.optim.Adagrad(p, lr=0.1, lr_decay=0.01)),
    ("rmsprop", lambda p: st.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True)),
    ("adadelta", lambda p: st.optim.Adadelta(p, lr=1.0)),
]

SPARSE_OPTS = [
    ("sparse-adam", lambda p: st.optim.SparseAdam(p, lr=0.05)),
    ("sgd-sparse", lambda p: st.optim.SGD(p, lr=0.1)),
    ("sgd-sparse-momentum", lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("adagrad-sparse", lambda p: st.optim.Adagrad(p, lr=0.1)),
    ("adagrad-sparse-lazy", lambda p: st.optim.Adagrad(p, lr=0.1, sparse_mode="lazy")),
    ("adam-sparse-lazy", lambda p: st.optim.Adam(p, lr=0.05, sparse_mode="lazy")),
    ("rowwise-adagrad", lambda p: st.optim.RowWiseAdagrad(p, lr=0.1)),
]


def _train(model, opt, batches, dev):
    for x, y in batches:
        opt.zero_grad()
        loss = F.mse_loss(model(to_device(x, dev)), to_device(y, dev))
        loss.backward()
        opt.step()


def _check_same(cpu_model, dev_model, opt, device, name):
    for (n, pc), pd in zip(cpu_model.named_parameters(), dev_model.parameters()):
        assert pd.device == device
        assert_close(pd, pc, 1e-5, 1e-6, msg=f"{name}: {n}")
    for state in opt.state.values():
        for k, v in state.items():
            if isinstance(v, st.Tensor) and k != "step":  # torch keeps `step` on the CPU
                assert v.device == device, f"{name}: state {k} on {v.device}"


@pytest.mark.parametrize("name,make", [pytest.param(*c, id=c[0]) for c in DENSE_OPTS])
def test_dense_optimizer_on_device(name, make, device):
    st.manual_seed(0)
    cpu = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    dev = copy.deepcopy(cpu).to(device)
    batches = [(st.randn(8, 4), st.randn(8, 2)) for _ in range(3)]
    _train(cpu, make(cpu.parameters()), batches, "cpu")
    opt = make(dev.parameters())
    _train(dev, opt, batches, device)
    _check_same(cpu, dev, opt, device, name)


class _Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(40, 3, mode="sum", sparse=True)

    def forward(self, ids):
        return self.emb(ids.view(-1, 4))


@pytest.mark.parametrize("name,make", [pytest.param(*c, id=c[0]) for c in SPARSE_OPTS])
def test_sparse_optimizer_on_device(name, make, device):
    st.manual_seed(0)
    cpu = _Bag()
    dev = copy.deepcopy(cpu).cuda()
    batches = [(_ids(16, 40, s), st.randn(4, 3)) for s in range(3)]  # repeated ids: duplicates
    _train(cpu, make(cpu.parameters()), batches, "cpu")
    opt = make(dev.parameters())
    _train(dev, opt, batches, device)
    assert dev.emb.weight.grad.layout is st.sparse_coo
    _check_same(cpu, dev, opt, device, name)


def test_optimizer_state_dict_moves_to_the_parameter_device(device):
    m = nn.Linear(3, 2)
    opt = st.optim.Adam(m.parameters(), lr=0.1)
    m(st.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    m2 = copy.deepcopy(m).cuda()
    opt2 = st.optim.Adam(m2.parameters(), lr=0.1)
    opt2.load_state_dict(sd)
    for state in opt2.state.values():
        assert state["exp_avg"].device == device and state["exp_avg_sq"].device == device
    m2(st.randn(4, 3, device="cuda")).sum().backward()
    opt2.step()
    assert all(t.device == device for t in tensors(list(m2.parameters())))
