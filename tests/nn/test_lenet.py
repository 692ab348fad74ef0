"""The LeNet of the PyTorch tutorial (examples/lenet.py) builds, matches torch and trains."""

import importlib.util
import pathlib

import numpy as np
import pytest

import sparsetorch as st

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "lenet.py"


def _load(source_replace=None):
    """Import examples/lenet.py (optionally with its imports pointed at real torch)."""
    if source_replace is None:
        spec = importlib.util.spec_from_file_location("_lenet_example", EXAMPLE)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    ns = {"__name__": "_lenet_torch"}
    exec(compile(  # noqa: S102 - runs the example with its imports pointed at torch
        source_replace(EXAMPLE.read_text()), str(EXAMPLE), "exec"), ns)
    return type("M", (), ns)


def _as_torch(src):
    return src.replace("import sparsetorch as torch", "import torch").replace("sparsetorch.",
                                                                               "torch.")


def test_lenet_shapes_and_parameters():
    L = _load()
    st.manual_seed(0)
    net = L.Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                     "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    assert tuple(net.conv1.weight.shape) == (6, 1, 5, 5)
    assert sum(p.numel() for p in net.parameters()) == 61706
    out = net(st.randn(1, 1, 32, 32))
    assert tuple(out.shape) == (1, 10) and out.dtype is st.float32


def test_lenet_tutorial_mse_step_lowers_loss():
    L = _load()
    st.manual_seed(0)
    _, before, after = L.tutorial_step()
    assert after < before


def test_lenet_trains():
    L = _load()
    # a short setting (the example's default is 100 steps of 32 at lr 0.01): a third of the work,
    # and the loss still falls from ~2.3 to ~0.2 by the last steps
    _, losses = L.train(steps=70, batch_size=16, lr=0.02, seed=0)
    assert losses[0] > 2.0
    assert np.mean(losses[-5:]) < 0.5 * losses[0]
    _, again = L.train(steps=3, batch_size=16, lr=0.02, seed=0)
    assert again == losses[:3]  # deterministic under manual_seed


def test_lenet_matches_torch_forward_backward():
    torch = pytest.importorskip("torch")
    L = _load()
    T = _load(_as_torch)
    torch.manual_seed(0)
    tnet = T.Net().double()
    st.manual_seed(0)
    snet = L.Net().double()
    with st.no_grad():
        for (_, p), (_, q) in zip(snet.named_parameters(), tnet.named_parameters()):
            p.copy_(st.tensor(q.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((4, 1, 32, 32))
    y = np.array([1, 3, 5, 7])
    sl = st.nn.CrossEntropyLoss()(snet(st.tensor(x)), st.tensor(y))
    tl = torch.nn.CrossEntropyLoss()(tnet(torch.tensor(x)), torch.tensor(y))
    np.testing.assert_allclose(sl.item(), tl.item(), rtol=1e-12)
    sl.backward()
    tl.backward()
    for (n, p), (_, q) in zip(snet.named_parameters(), tnet.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=n)
