"""Channel-wise dropout, gumbel_softmax, rrelu and their layers against torch: the same masks and
slopes for a seed, the same gradients, warnings and errors."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn as snn
import sparsetorch.nn.functional as SF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _run(lib, F, fn, x, g, args, kwargs, seed):
    lib.manual_seed(seed)
    t = lib.tensor(x, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = getattr(F, fn)(t, *args, **kwargs)
    r.backward(lib.tensor(g))
    return r.detach().numpy(), t.grad.numpy(), [str(m.message) for m in w], r.dtype


CASES = [
    ("dropout1d", (4, 6, 3), (0.3,), {}),
    ("dropout1d", (6, 3), (0.3,), {}),  # unbatched
    ("dropout2d", (4, 6, 3, 2), (0.5,), {}),
    ("dropout2d", (4, 6, 3), (0.5,), {}),  # torch's (N, C, L) warning
    ("dropout2d", (4, 6), (0.5,), {}),  # odd-dims warning, elementwise on (N, C)
    ("dropout3d", (2, 6, 3, 2, 2), (0.5,), {}),
    ("dropout3d", (6, 3, 2, 2), (0.5,), {}),  # unbatched
    ("dropout3d", (6, 3), (0.5,), {}),  # odd-dims warning
    ("dropout1d", (4, 6, 3), (1.0,), {}),
    ("feature_alpha_dropout", (4, 6, 3), (0.2, True), {}),
    ("feature_alpha_dropout", (4, 6, 3), (0.2,), {}),  # evaluation by default
    ("gumbel_softmax", (5, 7), (), {}),
    ("gumbel_softmax", (5, 7), (), {"tau": 0.5, "hard": True, "dim": 0}),
    ("rrelu", (50, 7), (), {"training": True}),
    ("rrelu", (50, 7), (0.1, 0.9, True), {}),
    ("rrelu", (50, 7), (), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn,shape,args,kwargs", CASES)
def test_same_numbers_as_torch(fn, shape, args, kwargs, dtype):
    x = np.random.RandomState(1).randn(*shape).astype(dtype)
    g = np.random.RandomState(2).randn(*shape).astype(dtype)
    tv, tg, tw, _ = _run(torch, TF, fn, x, g, args, kwargs, 3)
    sv, sg, sw, sdt = _run(st, SF, fn, x, g, args, kwargs, 3)
    np.testing.assert_allclose(sv, tv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sg, tg, rtol=1e-6, atol=1e-7)
    assert sw == tw
    assert sdt is getattr(st, dtype)


def test_rrelu_half_types_as_torch():
    x = np.random.RandomState(1).randn(200).astype("float32")
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        SF.rrelu(st.tensor(x).half(), training=True)
    torch.manual_seed(0)
    st.manual_seed(0)
    tx = torch.tensor(x).bfloat16().requires_grad_()
    sx = st.tensor(x).bfloat16().requires_grad_()
    tr, sr = TF.rrelu(tx, training=True), SF.rrelu(sx, training=True)
    tr.sum().backward()
    sr.sum().backward()
    assert sr.dtype is st.bfloat16
    np.testing.assert_array_equal(sr.float().detach().numpy(), tr.float().detach().numpy())
    np.testing.assert_array_equal(sx.grad.float().numpy(), tx.grad.float().numpy())


def test_masks_are_channelwise_and_seeded():
    st.manual_seed(0)
    y = SF.dropout2d(st.ones(8, 16, 5, 5), 0.5)
    per_channel = y.reshape(8, 16, 25)
    assert bool((per_channel.amax(-1) == per_channel.amin(-1)).all())
    assert set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}


def test_inplace_forms():
    for fn, shape, args in [("dropout1d", (6, 3), (0.5, True, True)),
                            ("dropout2d", (2, 6, 3, 3), (0.5, True, True)),
                            ("feature_alpha_dropout", (2, 6, 3), (0.5, True, True)),
                            ("rrelu", (5, 4), (0.1, 0.3, True, True))]:
        x = np.random.RandomState(4).randn(*shape).astype("float32")
        torch.manual_seed(5)
        st.manual_seed(5)
        tx, sx = torch.tensor(x), st.tensor(x)
        tr, sr = getattr(TF, fn)(tx, *args), getattr(SF, fn)(sx, *args)
        assert sr is sx and tr is tx
        np.testing.assert_array_equal(sx.numpy(), tx.numpy())
    sx = st.tensor([-1.0, 2.0])
    assert SF.rrelu_(sx) is sx
    np.testing.assert_allclose(sx.numpy(), TF.rrelu_(torch.tensor([-1.0, 2.0])).numpy())


def test_errors_and_warnings():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        SF.dropout1d(st.ones(3))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        SF.dropout2d(st.ones(2, 3, 4), 1.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"), \
            pytest.warns(UserWarning, match="Received a 1-D input to dropout2d"):
        SF.dropout2d(st.ones(3))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        SF.rrelu(st.ones(3), 0.5, 0.2)
    with pytest.raises(NotImplementedError, match="rrelu_with_noise_out_cpu"):
        SF.rrelu(st.ones(3, dtype=st.int64), training=True)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        SF.gumbel_softmax(st.ones(2, 3), eps=1e-5)


@pytest.mark.parametrize("name,args", [
    ("Dropout1d", (0.3,)), ("Dropout2d", ()), ("Dropout3d", (0.2, True)),
    ("FeatureAlphaDropout", (0.2,)), ("RReLU", (0.1, 0.3)), ("RReLU", (0.1, 0.3, True))])
def test_layers_as_torch(name, args):
    sm, tm = getattr(snn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(sm) == repr(tm)
    shape = {"Dropout3d": (2, 4, 3, 3, 3), "Dropout2d": (2, 4, 3, 3)}.get(name, (2, 4, 3))
    x = np.random.RandomState(6).randn(*shape).astype("float32")
    for train in (True, False):
        sm.train(train)
        tm.train(train)
        torch.manual_seed(7)
        st.manual_seed(7)
        tr = tm(torch.tensor(x))
        sr = sm(st.tensor(x))
        np.testing.assert_allclose(sr.numpy(), tr.numpy(), rtol=1e-6, atol=1e-7)


def test_multihead_attention_at_torch_path():
    from sparsetorch.nn.modules.activation import MultiheadAttention

    assert MultiheadAttention is snn.MultiheadAttention
