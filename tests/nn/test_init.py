"""nn.init: distributions, gains, fans, no_grad, generator= and torch parity of the formulas."""

import math

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn as nn
from sparsetorch.nn import init


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_calculate_gain_torch_parity():
    torch = pytest.importorskip("torch")
    for nl, p in [("linear", None), ("conv2d", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.3), ("selu", None)]:
        assert init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)


def test_fans():
    assert init._calculate_fan_in_and_fan_out(st.empty(4, 3)) == (3, 4)
    assert init._calculate_fan_in_and_fan_out(st.empty(8, 2, 3, 3)) == (18, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(st.empty(3))


def test_runs_under_no_grad_on_parameters():
    p = nn.Parameter(st.empty(50, 40))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_,
               init.kaiming_uniform_, init.kaiming_normal_, init.orthogonal_, init.zeros_,
               init.ones_, init.trunc_normal_, init.eye_):
        r = fn(p)
        assert r is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    init.constant_(p, 0.25)
    assert (p.detach().numpy() == 0.25).all()


def test_bounds_and_moments():
    st.manual_seed(0)
    w = st.empty(400, 300)
    init.uniform_(w, -0.5, 2.0)
    a = w.numpy()
    assert a.min() >= -0.5 and a.max() <= 2.0 and abs(a.mean() - 0.75) < 0.02
    init.normal_(w, 1.0, 0.5)
    assert abs(w.numpy().mean() - 1.0) < 0.01 and abs(w.numpy().std() - 0.5) < 0.01
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / 700)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.9 * bound
    init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2.0 / 700)) < 0.002
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = math.sqrt(3.0) * math.sqrt(2.0 / 6) / math.sqrt(300)
    assert np.abs(w.numpy()).max() <= bound
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2.0 / 400)) < 0.002
    init.trunc_normal_(w, mean=0.5, std=1.0, a=-1.0, b=1.5)
    assert w.numpy().min() >= -1.0 and w.numpy().max() <= 1.5
    with pytest.raises(ValueError, match="Mode fan_mid not supported"):
        init.kaiming_uniform_(w, mode="fan_mid")


def test_float32_kept():
    w = st.empty(3, 4)
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_):
        assert fn(w).dtype is st.float32


def test_orthogonal():
    for shape in [(5, 5), (3, 7), (7, 3), (4, 2, 3)]:
        w = init.orthogonal_(st.empty(*shape), gain=2.0)
        a = w.numpy().reshape(shape[0], -1) / 2.0
        if a.shape[0] <= a.shape[1]:
            np.testing.assert_allclose(a @ a.T, np.eye(a.shape[0]), atol=1e-5)
        else:
            np.testing.assert_allclose(a.T @ a, np.eye(a.shape[1]), atol=1e-5)
    with pytest.raises(ValueError):
        init.orthogonal_(st.empty(3))


def test_eye_dirac_sparse():
    np.testing.assert_array_equal(init.eye_(st.empty(2, 3)).numpy(), np.eye(2, 3))
    w = init.dirac_(st.empty(2, 2, 3))
    assert w[0, 0, 1].item() == 1 and w[1, 1, 1].item() == 1 and w.sum().item() == 2
    s = init.sparse_(st.empty(10, 4), sparsity=0.5)
    assert ((s.numpy() == 0).sum(0) >= 5).all()


def test_generator_reproducible():
    g1, g2 = st.Generator().manual_seed(3), st.Generator().manual_seed(3)
    a = init.kaiming_uniform_(st.empty(4, 4), generator=g1)
    b = init.kaiming_uniform_(st.empty(4, 4), generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    a = init.trunc_normal_(st.empty(6), generator=st.Generator().manual_seed(1))
    b = init.trunc_normal_(st.empty(6), generator=st.Generator().manual_seed(1))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning):
        init.uniform(st.empty(2))
