"""layer_norm's numba row kernels (nn/_kernels/layer_norm.py) against torch: values, the three
gradients from one backward pass, frozen / missing affine parameters, an offset mean."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "no_bias", "frozen_weight", "none"])
@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 256), (1, 1)])
def test_layer_norm_matches_torch(dt, affine, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 50).astype(dt)  # an offset mean: two-pass variance
    g = rng.standard_normal(shape).astype(dt)
    d = shape[-1]
    w = rng.standard_normal(d).astype(dt)
    b = rng.standard_normal(d).astype(dt)
    res = []
    for L in (torch, st):
        xx = L.tensor(x, requires_grad=True)
        ww = None if affine == "none" else L.tensor(w, requires_grad=affine != "frozen_weight")
        bb = None if affine in ("none", "no_bias") else L.tensor(b, requires_grad=True)
        y = L.nn.functional.layer_norm(xx, (d,), ww, bb, 1e-5)
        y.backward(L.tensor(g))
        out = [y.detach().numpy(), xx.grad.numpy()]
        if ww is not None and ww.requires_grad:
            out.append(ww.grad.numpy())
        if bb is not None:
            out.append(bb.grad.numpy())
        out.append(y.grad_fn.name())
        res.append(out)
    t, s = res
    assert t[-1] == s[-1]
    tol = 2e-4 if dt == "float32" else 1e-10
    for a, c in zip(t[:-1], s[:-1]):
        assert c.dtype == a.dtype
        np.testing.assert_allclose(c, a, rtol=tol, atol=tol)


def test_layer_norm_double_backward_and_module():
    x = st.tensor(np.random.default_rng(1).standard_normal((4, 6)), requires_grad=True)
    m = st.nn.LayerNorm(6, dtype=st.float64)
    with st.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-1, 1)
    assert st.autograd.gradcheck(lambda a: m(a), (x,))
    assert st.autograd.gradgradcheck(lambda a: m(a), (x,))
    y = m(x)
    y.backward(st.ones_like(y))
    # one pass gave all three; a second backward through a fresh graph gives the same
    gw, gb = m.weight.grad.clone(), m.bias.grad.clone()
    m.zero_grad()
    m(x).backward(st.ones_like(y))
    assert np.array_equal(gw.numpy(), m.weight.grad.numpy())
    assert np.array_equal(gb.numpy(), m.bias.grad.numpy())


def test_layer_norms_sharing_input_and_gradient_keep_their_own_eps():
    # two norms of one input, one gradient array reaching both nodes: the one-pass weight / bias
    # gradients left by one node must not serve the other (different eps; frozen input)
    base = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32) * 1e-2
    res = []
    for L in (torch, st):
        x = L.tensor(base)
        m1, m2 = L.nn.LayerNorm(8, eps=1e-5), L.nn.LayerNorm(8, eps=1e-1)
        (m1(x) + m2(x)).sum().backward()
        res.append([m1.weight.grad.numpy(), m2.weight.grad.numpy(), m2.bias.grad.numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
