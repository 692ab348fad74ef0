"""split_heads (nn/_functional/attention_heads.py): the packed projection to per-head q, k, v in
one node, against the composite view / permute / select and through MultiheadAttention."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.nn._functional.attention_heads import split_heads

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("bf", [True, False])
@pytest.mark.parametrize("used", [(0, 1, 2), (1,), (0, 2)])
def test_split_heads_matches_the_composite(bf, used):
    n, t, h, hd = 2, 3, 2, 4
    base = np.random.default_rng(0).standard_normal((n, t, 3 * h * hd) if bf else (t, n, 3 * h * hd))
    proj = st.tensor(base, requires_grad=True)
    parts = split_heads(proj, n, t, h, hd, bf)
    if bf:
        ref = proj.view(n, t, 3, h, hd).permute(2, 0, 3, 1, 4)
    else:
        ref = proj.view(t, n, 3, h, hd).permute(2, 1, 3, 0, 4)
    ref = ref.reshape(3, n * h, t, hd)
    for i in range(3):
        assert parts[i].is_contiguous()
        assert np.array_equal(parts[i].detach().numpy(), ref[i].detach().numpy())
    w = [st.tensor(np.random.default_rng(i).standard_normal((n * h, t, hd))) for i in range(3)]
    loss = sum((parts[i] * w[i]).sum() for i in used)
    loss_ref = sum((ref[i] * w[i]).sum() for i in used)
    (g,) = st.autograd.grad(loss, proj)
    (gr,) = st.autograd.grad(loss_ref, proj)
    assert np.array_equal(g.numpy(), gr.numpy())
    assert st.autograd.gradgradcheck(
        lambda p: sum((split_heads(p, n, t, h, hd, bf)[i] ** 2).sum() for i in used), (proj,))


@pytest.mark.parametrize("batch_first", [True, False])
def test_mha_self_attention_gradients_match_torch(batch_first):
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(16, 4, batch_first=batch_first)
    s = st.nn.MultiheadAttention(16, 4, batch_first=batch_first)
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((3, 5, 16)).astype(np.float32)
    res = []
    for L, m in ((torch, t), (st, s)):
        xx = L.tensor(x, requires_grad=True)
        out, w = m(xx, xx, xx)
        (out.sum() + (w * w).sum()).backward()
        res.append((out.detach().numpy(), xx.grad.numpy(), m.in_proj_weight.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("average", [True, False])
def test_mha_head_averaged_weights_second_order(average):
    m = st.nn.MultiheadAttention(4, 2, dtype=st.float64)
    x = st.tensor(np.random.default_rng(2).standard_normal((3, 2, 4)), requires_grad=True)

    def f(a):
        out, w = m(a, a, a, average_attn_weights=average)
        return out.sum() + (w * w).sum()

    assert st.autograd.gradcheck(f, (x,))
    assert st.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("spread", [1.0, 30.0, 300.0])
def test_sdpa_float32_softmax_kernel_matches_torch(spread):
    # spread 300: some rows' sums underflow under the global shift -> the per-row-max fallback
    rng = np.random.default_rng(3)
    q = (rng.standard_normal((2, 3, 7, 5)) * np.linspace(0.01, spread, 7)[:, None]).astype(
        np.float32)
    k, v = (rng.standard_normal((2, 3, 9, 5)).astype(np.float32) for _ in range(2))
    res = []
    for L in (torch, st):
        Q, K, V = (L.tensor(a, requires_grad=True) for a in (q, k, v))
        o = L.nn.functional.scaled_dot_product_attention(Q, K, V)
        o.backward(L.ones_like(o))
        res.append((o.detach().numpy(), Q.grad.numpy(), K.grad.numpy(), V.grad.numpy()))
    for a, b in zip(*res):
        assert np.isfinite(b).all()
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)
