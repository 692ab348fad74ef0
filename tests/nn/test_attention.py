"""scaled_dot_product_attention (dense, bool, causal, sparse masks), MultiheadAttention and the
Transformer layers against torch with copied weights: forward values, input and parameter grads."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor"),
              pytest.mark.filterwarnings("ignore:Support for mismatched")]
TF = torch.nn.functional

DT = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-10)}


def _pair(a, grad=True):
    return (torch.tensor(a, requires_grad=grad), st.tensor(a, requires_grad=grad))


def _close(ours, theirs, tol):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def _copy_params(ours, theirs):
    sd = {k: st.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", ["plain", "bool", "float", "causal", "gqa", "fullrow", "scale",
                                  "farrow"])
def test_sdpa_dense_parity(dt, case):
    npdt, tol = DT[dt]
    rng = np.random.default_rng(0)
    hq = 4
    hk = 2 if case == "gqa" else 4
    q = rng.standard_normal((2, hq, 5, 8)).astype(npdt)
    k = rng.standard_normal((2, hk, 6, 8)).astype(npdt)
    v = rng.standard_normal((2, hk, 6, 3)).astype(npdt)
    tq, sq = _pair(q)
    tk, sk = _pair(k)
    tv, sv = _pair(v)
    kw = {}
    if case in ("bool", "fullrow"):
        m = rng.random((5, 6)) > 0.4
        if case == "fullrow":
            m[2] = False
        kw = {"attn_mask": m}
    elif case == "float":
        kw = {"attn_mask": rng.standard_normal((1, 5, 6)).astype(npdt)}
    elif case == "farrow":  # one row far below the others: the per-row shift takes over
        fm = rng.standard_normal((5, 6)).astype(npdt)
        fm[3] -= 400.0
        kw = {"attn_mask": fm}
    elif case == "causal":
        kw = {"is_causal": True}
    elif case == "gqa":
        kw = {"enable_gqa": True}
    elif case == "scale":
        kw = {"scale": 0.3}
    tkw = {a: torch.tensor(b) if isinstance(b, np.ndarray) else b for a, b in kw.items()}
    skw = {a: st.tensor(b) if isinstance(b, np.ndarray) else b for a, b in kw.items()}
    to = TF.scaled_dot_product_attention(tq, tk, tv, **tkw)
    so = SF.scaled_dot_product_attention(sq, sk, sv, **skw)
    assert so.dtype is getattr(st, dt)
    _close(so, to, tol)
    g = rng.standard_normal(to.shape).astype(npdt)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    for a, b in ((sq, tq), (sk, tk), (sv, tv)):
        _close(a.grad, b.grad, tol * 10)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_sparse_mask(layout, kind):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 7, 4), (2, 3, 9, 4), (2, 3, 9, 5)))
    m = rng.random((7, 9)) > 0.6
    m[3] = False  # a query row with no allowed key: zeros, as torch's dense result
    bias = rng.standard_normal((7, 9))
    tq, sq = _pair(q)
    tk, sk = _pair(k)
    tv, sv = _pair(v)
    if kind == "bool":
        tmask = torch.tensor(m)
        smask = st.tensor(m).to_sparse()
    else:
        tmask = torch.tensor(np.where(m, bias, -np.inf))
        smask = st.tensor(np.where(m, bias, 0.0)).to_sparse()
    if layout == "csr":
        smask = smask.to_sparse_csr()
    to = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask)
    so = SF.scaled_dot_product_attention(sq, sk, sv, attn_mask=smask)
    _close(so, to, 1e-10)
    assert np.all(so.detach().numpy()[:, :, 3] == 0)
    g = rng.standard_normal(to.shape)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    for a, b in ((sq, tq), (sk, tk), (sv, tv)):
        _close(a.grad, b.grad, 1e-10)


def test_sdpa_sparse_batched_mask_and_gradcheck():
    rng = np.random.default_rng(2)
    m = rng.random((2, 4, 5)) > 0.5
    q, k, v = (st.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 4, 3), (2, 5, 3), (2, 5, 2)))
    smask = st.tensor(m).to_sparse()
    dense = SF.scaled_dot_product_attention(q, k, v, attn_mask=st.tensor(m))
    sparse = SF.scaled_dot_product_attention(q, k, v, attn_mask=smask)
    _close(sparse, dense, 1e-12)
    assert st.autograd.gradcheck(
        lambda a, b, c: SF.scaled_dot_product_attention(a, b, c, attn_mask=smask), (q, k, v))


def test_sdpa_gradcheck_dense():
    rng = np.random.default_rng(3)
    q, k, v = (st.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((1, 3, 4), (1, 5, 4), (1, 5, 2)))
    m = st.tensor(rng.random((3, 5)) > 0.3)
    assert st.autograd.gradcheck(
        lambda a, b, c: SF.scaled_dot_product_attention(a, b, c, attn_mask=m), (q, k, v))


def test_sdpa_errors():
    q = st.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="is_causal"):
        SF.scaled_dot_product_attention(q, q, q, attn_mask=st.ones(3, 3, dtype=st.bool),
                                        is_causal=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        SF.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(TypeError):
        SF.scaled_dot_product_attention(q, 1, q)
    with pytest.raises(RuntimeError, match="does not match"):
        SF.scaled_dot_product_attention(q, q, q, attn_mask=st.ones(2, 2).to_sparse())


def _mha_pair(dt, **kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, dtype=getattr(torch, dt), **kw)
    sm = st.nn.MultiheadAttention(8, 2, dtype=getattr(st, dt), **kw)
    assert list(sm.state_dict()) == list(tm.state_dict())
    _copy_params(sm, tm)
    return tm, sm


MHA_CASES = {
    "self": ({}, {}),
    "weights_avg": ({}, {"need_weights": True}),
    "weights_per_head": ({}, {"need_weights": True, "average_attn_weights": False}),
    "kdim_vdim": ({"kdim": 5, "vdim": 3}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    "no_bias": ({"bias": False}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "batch_first_cross": ({"batch_first": True, "kdim": 5, "vdim": 3, "add_bias_kv": True,
                           "add_zero_attn": True},
                          {"need_weights": True, "key_padding_mask": True, "attn_mask": "bool"}),
    "batch_first_sdpa_masks": ({"batch_first": True},
                               {"key_padding_mask": True, "attn_mask": "float"}),
    "masks": ({}, {"attn_mask": "bool", "key_padding_mask": True}),
    "float_mask": ({}, {"attn_mask": "float"}),
    "causal": ({}, {"attn_mask": "causal", "is_causal": True}),
}


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_multihead_attention_parity(dt, case):
    npdt, tol = DT[dt]
    ctor, call = MHA_CASES[case]
    tm, sm = _mha_pair(dt, **ctor)
    rng = np.random.default_rng(4)
    L, S, N = 4, 6, 3
    kdim, vdim = ctor.get("kdim", 8), ctor.get("vdim", 8)
    bf = ctor.get("batch_first", False)
    shp = (lambda t, e: (N, t, e)) if bf else (lambda t, e: (t, N, e))
    self_attn = case in ("self", "causal", "batch_first", "no_bias")
    q = rng.standard_normal(shp(L if not self_attn else S, 8)).astype(npdt)
    tq, sq = _pair(q)
    if self_attn:
        tk = tv = tq
        sk = sv = sq
    else:
        tk, sk = _pair(rng.standard_normal(shp(S, kdim)).astype(npdt))
        tv, sv = _pair(rng.standard_normal(shp(S, vdim)).astype(npdt))
    Lq = S if self_attn else L
    tkw = {"need_weights": call.get("need_weights", False)}
    if "average_attn_weights" in call:
        tkw["average_attn_weights"] = call["average_attn_weights"]
    skw = dict(tkw)
    am = call.get("attn_mask")
    if am == "bool":
        m = rng.random((Lq, S)) > 0.7
        tkw["attn_mask"], skw["attn_mask"] = torch.tensor(m), st.tensor(m)
    elif am == "float":
        m = rng.standard_normal((N * 2, Lq, S)).astype(npdt)
        tkw["attn_mask"], skw["attn_mask"] = torch.tensor(m), st.tensor(m)
    elif am == "causal":
        tkw["attn_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(
            S, dtype=getattr(torch, dt))
        skw["attn_mask"] = st.nn.Transformer.generate_square_subsequent_mask(
            S, dtype=getattr(st, dt))
        tkw["is_causal"] = skw["is_causal"] = True
    if call.get("key_padding_mask"):
        kp = np.zeros((N, S), bool)
        kp[0, -2:] = True
        tkw["key_padding_mask"], skw["key_padding_mask"] = torch.tensor(kp), st.tensor(kp)
    to, tw = tm(tq, tk, tv, **tkw)
    so, sw = sm(sq, sk, sv, **skw)
    _close(so, to, tol)
    if tw is None:
        assert sw is None
    else:
        _close(sw, tw, tol)
    g = rng.standard_normal(to.shape).astype(npdt)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    _close(sq.grad, tq.grad, tol * 10)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, tol * 10)


def test_multihead_attention_unbatched_and_sparse_mask():
    tm, sm = _mha_pair("float64")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 8))
    m = rng.random((5, 5)) > 0.5
    np.fill_diagonal(m, True)
    to, _ = tm(torch.tensor(x), torch.tensor(x), torch.tensor(x), attn_mask=torch.tensor(~m),
               need_weights=False)
    so, _ = sm(st.tensor(x), st.tensor(x), st.tensor(x), attn_mask=st.tensor(~m),
               need_weights=False)
    _close(so, to, 1e-10)
    # a sparse mask lists the allowed pairs (sdpa's convention); the result equals the dense one
    xs = st.tensor(x).unsqueeze(1)
    so2, _ = sm(xs, xs, xs, attn_mask=st.tensor(m).to_sparse(), need_weights=False)
    _close(so2.squeeze(1), to, 1e-10)


def test_multihead_attention_init_and_errors():
    m = st.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    assert m.in_proj_weight.shape == (48, 16) and m.q_proj_weight is None
    assert float(m.in_proj_bias.abs().sum()) == 0 and float(m.out_proj.bias.abs().sum()) == 0
    assert m.bias_k.shape == (1, 1, 16)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    with pytest.raises(AssertionError, match="divisible"):
        st.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="greater than 0"):
        st.nn.MultiheadAttention(0, 3)
    x = st.randn(3, 2, 16)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(x, x, x, attn_mask=st.zeros(4, 4, dtype=st.bool))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="only bool and floating"):
        m(x, x, x, attn_mask=st.zeros(3, 3, dtype=st.int64))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_decoder_parity(norm_first, activation, batch_first):
    act_t = TF.silu if activation == "callable" else activation
    act_s = SF.silu if activation == "callable" else activation
    kw = {"dim_feedforward": 12, "dropout": 0.0, "norm_first": norm_first,
          "batch_first": batch_first, "dtype": torch.float64}
    torch.manual_seed(0)
    tm = torch.nn.Transformer(8, 2, 2, 2, activation=act_t, **kw)
    kw["dtype"] = st.float64
    sm = st.nn.Transformer(8, 2, 2, 2, activation=act_s, **kw)
    assert list(sm.state_dict()) == list(tm.state_dict())
    _copy_params(sm, tm)
    rng = np.random.default_rng(6)
    src = rng.standard_normal((3, 5, 8) if batch_first else (5, 3, 8))
    tgt = rng.standard_normal((3, 4, 8) if batch_first else (4, 3, 8))
    ts, ss = _pair(src)
    tt, stt = _pair(tgt)
    kp = np.zeros((3, 5), bool)
    kp[1, -1] = True
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    smask = st.nn.Transformer.generate_square_subsequent_mask(4, dtype=st.float64)
    to = tm(ts, tt, tgt_mask=tmask, src_key_padding_mask=torch.tensor(kp),
            memory_key_padding_mask=torch.tensor(kp))
    so = sm(ss, stt, tgt_mask=smask, src_key_padding_mask=st.tensor(kp),
            memory_key_padding_mask=st.tensor(kp))
    _close(so, to, 1e-10)
    g = rng.standard_normal(to.shape)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    _close(ss.grad, ts.grad, 1e-9)
    _close(stt.grad, tt.grad, 1e-9)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, 1e-9)


def test_transformer_encoder_layer_float32_and_errors():
    torch.manual_seed(1)
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    sl = st.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    _copy_params(sl, tl)
    te = torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False)
    se = st.nn.TransformerEncoder(sl, 2, enable_nested_tensor=False)
    _copy_params(se, te)
    x = np.random.default_rng(7).standard_normal((6, 2, 8)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    to = te(torch.tensor(x), mask=mask)
    so = se(st.tensor(x), mask=st.nn.Transformer.generate_square_subsequent_mask(6))
    assert so.dtype is st.float32
    _close(so, to, 1e-5)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        st.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    t = st.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number"):
        t(st.randn(3, 2, 8), st.randn(3, 4, 8))
    with pytest.raises(RuntimeError, match="feature number"):
        t(st.randn(3, 2, 8), st.randn(3, 2, 6))
    m = st.nn.Transformer.generate_square_subsequent_mask(3)
    assert m.tolist() == [[0.0, float("-inf"), float("-inf")], [0.0, 0.0, float("-inf")],
                          [0.0, 0.0, 0.0]]


def test_sparse_attention_ops_second_order():
    """sddmm and spmm are each other's derivatives: second derivatives through the sparse path."""
    from sparsetorch.autograd import gradgradcheck

    rng = np.random.default_rng(8)
    m = st.tensor(rng.random((4, 5)) > 0.5).to_sparse()
    q, k, v = (st.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((4, 3), (5, 3), (5, 2)))
    assert gradgradcheck(
        lambda a, b, c: SF.scaled_dot_product_attention(a, b, c, attn_mask=m), (q, k, v))


def test_dense_attention_core_second_order():
    """The fused dense core recomputes differentiably under create_graph: exact second order."""
    from sparsetorch.autograd import gradgradcheck

    rng = np.random.default_rng(9)
    m = st.tensor(rng.random((3, 4)) > 0.4)
    m[0] = False
    q, k, v = (st.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 2), (2, 4, 2), (2, 4, 3)))
    assert gradgradcheck(
        lambda a, b, c: SF.scaled_dot_product_attention(a, b, c, attn_mask=m), (q, k, v))
    bias = st.tensor(rng.standard_normal((3, 4)), requires_grad=True)  # composite path
    assert st.autograd.gradcheck(
        lambda a, b: SF.scaled_dot_product_attention(a, k, v, attn_mask=b), (q, bias))


def test_fused_layer_norm_matches_composite_and_respects_hooks():
    from sparsetorch.autograd import gradgradcheck
    from sparsetorch.nn._functional.fused_norm import layer_norm_last

    rng = np.random.default_rng(10)
    x, w, b = (st.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 2, 5), (5,), (5,)))
    _close(layer_norm_last(x, w, b, 1e-5), SF.layer_norm(x, (5,), w, b), 1e-12)
    assert gradgradcheck(lambda a, c, d: layer_norm_last(a, c, d, 1e-5), (x, w, b))
    layer = st.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    calls = []
    layer.norm2.register_forward_hook(lambda m, i, o: calls.append(1))
    layer(st.randn(3, 2, 8))
    assert calls == [1]  # a hooked LayerNorm runs as a module, not the fused op


@pytest.mark.parametrize("left_aligned", [True, False])
def test_encoder_nested_tensor_inference_path(left_aligned):
    """torch's eval-mode nested-tensor path zeroes padded outputs; we match it (and its warning)."""
    torch.manual_seed(2)
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    sl = st.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    _copy_params(sl, tl)
    te = torch.nn.TransformerEncoder(tl, 2).eval()
    se = st.nn.TransformerEncoder(sl, 2).eval()
    _copy_params(se, te)
    assert se.use_nested_tensor == te.use_nested_tensor
    x = np.random.default_rng(11).standard_normal((3, 5, 8)).astype(np.float32)
    kp = np.zeros((3, 5), bool)
    kp[0, 3:] = True
    kp[2, 1 if not left_aligned else 4] = True
    with torch.no_grad():
        to = te(torch.tensor(x), src_key_padding_mask=torch.tensor(kp))
    with st.no_grad():
        so = se(st.tensor(x), src_key_padding_mask=st.tensor(kp))
    _close(so, to, 1e-5)
    to = te(torch.tensor(x), src_key_padding_mask=torch.tensor(kp))  # grad on: no nested path
    so = se(st.tensor(x), src_key_padding_mask=st.tensor(kp))
    _close(so, to, 1e-5)
    with pytest.warns(UserWarning, match="norm_first was True"):
        st.nn.TransformerEncoder(st.nn.TransformerEncoderLayer(8, 2, norm_first=True), 1)


@pytest.mark.parametrize("mask_shape", [(3, 4, 6), (2, 3, 4, 6)])
def test_sdpa_sparse_mask_batch_dims(mask_shape):
    """A sparse mask with batch dims equal to the query's trailing ones (the rest broadcast)."""
    rng = np.random.default_rng(12)
    q, k, v = (st.tensor(rng.standard_normal(s)) for s in ((2, 3, 4, 5), (2, 3, 6, 5),
                                                           (2, 3, 6, 2)))
    m = st.tensor(rng.random(mask_shape) > 0.5)
    dense = SF.scaled_dot_product_attention(q, k, v, attn_mask=m)
    _close(SF.scaled_dot_product_attention(q, k, v, attn_mask=m.to_sparse()), dense, 1e-12)
    with pytest.raises(NotImplementedError, match="batch dims"):
        SF.scaled_dot_product_attention(q, k, v, attn_mask=st.ones((5, 4, 6)).to_sparse())


def test_mha_forward_static_kv_parity():
    rng = np.random.default_rng(13)
    x, w, wo, b, sk, sv = (rng.standard_normal(s) for s in ((3, 2, 4), (12, 4), (4, 4), (12,),
                                                            (4, 5, 2), (4, 5, 2)))
    outs = []
    for lib in (torch, st):
        t = [lib.tensor(a) for a in (x, w, wo, b, sk, sv)]
        outs.append(lib.nn.functional.multi_head_attention_forward(
            t[0], t[0], t[0], 4, 2, t[1], t[3], None, None, False, 0.0, t[2], None,
            static_k=t[4], static_v=t[5], need_weights=True))
    _close(outs[1][0], outs[0][0], 1e-10)
    _close(outs[1][1], outs[0][1], 1e-10)
    with pytest.raises(AssertionError, match="expecting static_k of size"):
        st.nn.functional.multi_head_attention_forward(
            st.tensor(x), st.tensor(x), st.tensor(x), 4, 2, st.tensor(w), None, None, None, False,
            0.0, st.tensor(wo), None, static_k=st.ones(3, 5, 2), static_v=st.tensor(sv))


@pytest.mark.parametrize("average", [True, False])
def test_mha_weights_are_differentiable_and_nan_rows(average):
    tm, sm = _mha_pair("float64")
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 2, 8))
    tx, sx = _pair(x)
    to, tw = tm(tx, tx, tx, average_attn_weights=average)
    so, sw = sm(sx, sx, sx, average_attn_weights=average)
    g = rng.standard_normal(tuple(tw.shape))
    (to.sum() + (tw * torch.tensor(g)).sum()).backward()
    (so.sum() + (sw * st.tensor(g)).sum()).backward()
    _close(sw, tw, 1e-10)
    _close(sx.grad, tx.grad, 1e-9)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, 1e-9)
    m = np.zeros((4, 4), bool)
    m[2] = True  # query 2 sees no key: NaN output and weights, as torch's explicit softmax
    with torch.no_grad():
        to, tw = tm(tx, tx, tx, attn_mask=torch.tensor(m), average_attn_weights=average)
    so, sw = sm(sx, sx, sx, attn_mask=st.tensor(m), average_attn_weights=average)
    np.testing.assert_allclose(so.detach().numpy(), to.numpy(), rtol=1e-10, atol=1e-10,
                               equal_nan=True)
    np.testing.assert_allclose(sw.detach().numpy(), tw.numpy(), rtol=1e-10, atol=1e-10,
                               equal_nan=True)
    assert np.isnan(sw.detach().numpy()).any()


def test_attention_core_weights_second_order():
    from sparsetorch.autograd import gradgradcheck
    from sparsetorch.nn._functional.attention_core import attention_core

    rng = np.random.default_rng(15)
    q, k, v = (st.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 2), (2, 4, 2), (2, 4, 2)))

    def f(a, b, c):
        out, w = attention_core(a, b, c, None, None, 0.7, True)
        return out.sum(-1) + (w * w).sum(-1)

    assert st.autograd.gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))


@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_sdpa_bfloat16_as_torch(mask):
    """bfloat16 attention against torch's bfloat16 result (the op table's bfloat16 sweep compares
    with a float64 reference, which a bfloat16 float mask can miss by more than its tolerance)."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    kw = {}
    if mask == "bool":
        kw["attn_mask"] = rng.random((3, 5)) < 0.7
    elif mask == "float":
        kw["attn_mask"] = rng.standard_normal((3, 5)).astype(np.float32)
    elif mask == "causal":
        kw["is_causal"] = True

    def run(lib, F):
        args = [lib.from_numpy(a).to(lib.bfloat16) for a in (q, k, v)]
        kws = dict(kw)
        if "attn_mask" in kws:
            m = lib.from_numpy(kws["attn_mask"])
            kws["attn_mask"] = m if m.dtype == lib.bool else m.to(lib.bfloat16)
        return F.scaled_dot_product_attention(*args, **kws).float().numpy()

    got, want = run(st, SF), run(torch, torch.nn.functional)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
