"""The one-pass dropout (nn/_functional/fused_dropout.py): the draws and values of F.dropout and of
torch, in the Transformer layers and inside the attention core."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.nn._functional.fused_dropout import dropout_fused, usable

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dt", [st.float32, st.float64])
@pytest.mark.parametrize("n", [1, 311, 312, 313, 5000])
def test_fused_dropout_draws_as_f_dropout(dt, n):
    x = st.tensor(np.random.default_rng(n).standard_normal((n, 3)), dtype=dt, requires_grad=True)
    st.manual_seed(2)
    st.rand(n % 7)  # an odd position in the stream
    ref = st.nn.functional.dropout(x, 0.3)
    after_ref = st.rand(3)
    st.manual_seed(2)
    st.rand(n % 7)
    assert usable(x, 0.3)
    y = dropout_fused(x, 0.3)
    assert np.array_equal(y.detach().numpy(), ref.detach().numpy())
    assert np.array_equal(st.rand(3).numpy(), after_ref.numpy())
    assert y.grad_fn.name() == ref.grad_fn.name() == "MulBackward0"
    g = st.randn(n, 3, dtype=dt)
    (gx,) = st.autograd.grad(y, x, g)
    (gr,) = st.autograd.grad(ref, x, g)
    assert np.array_equal(gx.numpy(), gr.numpy())


def test_fused_dropout_transposed_order_and_double_backward():
    base = np.random.default_rng(0).standard_normal((4, 6, 5))
    x = st.tensor(base, requires_grad=True)
    st.manual_seed(1)
    ref = st.nn.functional.dropout(x.detach().transpose(0, 1).contiguous().transpose(0, 1), 0.5)
    st.manual_seed(1)
    y = dropout_fused(x, 0.5, (1, 0, 2))  # drawn in the transposed view's memory order
    assert np.array_equal(y.detach().numpy(), ref.numpy())
    (g,) = st.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = st.autograd.grad(g.sum(), x)
    keep = ref.numpy() != 0
    assert np.allclose(gg.numpy(), np.where(keep, 2 * 4.0, 0.0))
    assert not usable(x, 0.0) and not usable(x, 1.0) and not usable(x.half(), 0.5)
    assert not usable(x.detach().transpose(0, 1), 0.5)  # F.dropout draws in memory order


def _copy(s, t):
    s.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("decoder", [False, True])
def test_transformer_layers_with_dropout_match_torch(batch_first, decoder):
    torch.manual_seed(0)
    cls = "TransformerDecoderLayer" if decoder else "TransformerEncoderLayer"
    t = getattr(torch.nn, cls)(16, 4, 24, dropout=0.3, batch_first=batch_first)
    s = getattr(st.nn, cls)(16, 4, 24, dropout=0.3, batch_first=batch_first)
    _copy(s, t)
    x = np.random.default_rng(1).standard_normal((3, 5, 16)).astype(np.float32)
    mem = np.random.default_rng(2).standard_normal((3, 4, 16) if batch_first else (4, 5, 16))
    mem = mem.astype(np.float32)
    outs = []
    for L, m in ((torch, t), (st, s)):
        xx = L.tensor(x, requires_grad=True)
        L.manual_seed(5)
        out = m(xx, L.tensor(mem)) if decoder else m(xx)
        (out * L.tensor(x)).sum().backward()
        outs.append((out.detach().numpy(), xx.grad.numpy(), L.rand(2).numpy(),
                     out.grad_fn.name()))
    (to, tg, tr, tn), (so, sg, sr, sn) = outs
    np.testing.assert_allclose(so, to, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sg, tg, rtol=1e-4, atol=1e-4)
    assert np.array_equal(sr, tr) and sn == tn


@pytest.mark.parametrize("mask", [False, True])
def test_sdpa_dropout_in_the_core_matches_torch(mask):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 6, 4)).astype(np.float32) for _ in range(3))
    m = rng.random((2, 3, 6, 6)) > 0.3
    m[..., 0, :] = False  # a fully masked row: zeros
    res = []
    for L in (torch, st):
        Q, K, V = (L.tensor(a, requires_grad=True) for a in (q, k, v))
        L.manual_seed(3)
        o = L.nn.functional.scaled_dot_product_attention(
            Q, K, V, attn_mask=L.tensor(m) if mask else None, dropout_p=0.4)
        o.backward(L.tensor(q))
        res.append([o.detach().numpy(), Q.grad.numpy(), K.grad.numpy(), V.grad.numpy(),
                    L.rand(2).numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_sdpa_dropout_core_second_order():
    rng = np.random.default_rng(1)
    q, k, v = (st.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))

    def f(q, k, v):
        st.manual_seed(7)
        return st.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.3)

    assert st.autograd.gradcheck(f, (q, k, v))
    assert st.autograd.gradgradcheck(f, (q, k, v))
