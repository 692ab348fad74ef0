"""ConvTranspose1d/2d/3d, GroupNorm and PReLU against torch with copied weights: forward values,
input and parameter gradients (float32 and float64), gradcheck, init and bad-input errors."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF

torch = pytest.importorskip("torch")

DT = {"float32": (np.float32, 3e-5), "float64": (np.float64, 1e-10)}


def _close(ours, theirs, tol):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def _module_parity(tm, sm, shape, dt, fwd_kw=None, seed=0):
    npdt, tol = DT[dt]
    assert list(sm.state_dict()) == list(tm.state_dict())
    sm.load_state_dict({k: st.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(npdt)
    tx, sx = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    to, so = tm(tx, **(fwd_kw or {})), sm(sx, **(fwd_kw or {}))
    assert tuple(so.shape) == tuple(to.shape)
    assert so.dtype is getattr(st, dt)
    _close(so, to, tol)
    g = rng.standard_normal(to.shape).astype(npdt)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    _close(sx.grad, tx.grad, tol * 10)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, tol * 10)


CT_CASES = [
    (1, {}, (2, 4, 7)),
    (1, {"stride": 3, "padding": 1, "output_padding": 2, "groups": 2, "dilation": 2}, (2, 4, 5)),
    (1, {"bias": False}, (4, 6)),  # unbatched
    (2, {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 5, 6)),
    (2, {"stride": (2, 3), "padding": (0, 1), "output_padding": (1, 0), "groups": 4, "dilation": (2, 1)},
     (1, 4, 4, 5)),
    (3, {"stride": 2, "padding": 1}, (1, 4, 3, 4, 3)),
]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CT_CASES)))
def test_conv_transpose_parity(dt, case):
    nd, kw, shape = CT_CASES[case]
    tdt, sdt = getattr(torch, dt), getattr(st, dt)
    tcls = getattr(torch.nn, f"ConvTranspose{nd}d")
    scls = getattr(st.nn, f"ConvTranspose{nd}d")
    tm = tcls(4, 8, 3, dtype=tdt, **kw)
    sm = scls(4, 8, 3, dtype=sdt, **kw)
    assert repr(sm) == repr(tm)
    assert sm.weight.shape == tm.weight.shape
    _module_parity(tm, sm, shape, dt)


def test_conv_transpose_output_size_and_gradcheck():
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, dtype=torch.float64)
    sm = st.nn.ConvTranspose2d(2, 3, 3, stride=2, dtype=st.float64)
    _module_parity(tm, sm, (1, 2, 4, 5), "float64", {"output_size": [10, 11]})
    _module_parity(tm, sm, (1, 2, 4, 5), "float64", {"output_size": (1, 3, 9, 12)})
    with pytest.raises(ValueError, match="valid sizes range from"):
        sm(st.randn(1, 2, 4, 5, dtype=st.float64), output_size=[20, 11])
    x = st.randn(1, 2, 3, 3, dtype=st.float64, requires_grad=True)
    w = st.randn(2, 2, 2, 2, dtype=st.float64, requires_grad=True)
    b = st.randn(2, dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(
        lambda a, c, d: SF.conv_transpose2d(a, c, d, stride=2, output_padding=1), (x, w, b))


def test_conv_transpose_errors():
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        SF.conv_transpose2d(st.randn(1, 2, 3, 3), st.randn(2, 2, 2, 2), output_padding=1)
    with pytest.raises(RuntimeError, match="expected input"):
        SF.conv_transpose1d(st.randn(1, 3, 5), st.randn(2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 2D \\(unbatched\\)"):
        SF.conv_transpose1d(st.randn(5), st.randn(2, 2, 2))
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        st.nn.ConvTranspose1d(2, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="divisible by groups"):
        st.nn.ConvTranspose2d(3, 4, 3, groups=2)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,groups,kw", [
    ((3, 6, 5), 3, {}), ((2, 6, 4, 3), 2, {"eps": 1e-3}), ((2, 6), 6, {}),
    ((2, 4, 3, 2, 2), 1, {"affine": False}), ((2, 4, 5), 2, {"bias": False}),
])
def test_group_norm_parity(dt, shape, groups, kw):
    tm = torch.nn.GroupNorm(groups, shape[1], dtype=getattr(torch, dt), **kw)
    sm = st.nn.GroupNorm(groups, shape[1], dtype=getattr(st, dt), **kw)
    assert repr(sm) == repr(tm)
    if sm.weight is not None:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            if tm.bias is not None:
                tm.bias.uniform_(-1, 1)
    _module_parity(tm, sm, shape, dt)


def test_group_norm_errors_and_gradcheck():
    with pytest.raises(ValueError, match="must be divisible by num_groups"):
        st.nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        SF.group_norm(st.randn(2, 4, 3), 3)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        SF.group_norm(st.randn(4), 2)
    x = st.randn(2, 4, 3, dtype=st.float64, requires_grad=True)
    w = st.randn(4, dtype=st.float64, requires_grad=True)
    b = st.randn(4, dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda a, c, d: SF.group_norm(a, 2, c, d), (x, w, b))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("num,shape", [(1, (3, 4, 5)), (4, (3, 4, 5)), (3, (2, 3)), (1, (7,))])
def test_prelu_parity(dt, num, shape):
    tm = torch.nn.PReLU(num, init=0.1, dtype=getattr(torch, dt))
    sm = st.nn.PReLU(num, init=0.1, dtype=getattr(st, dt))
    assert repr(sm) == repr(tm)
    assert sm.weight.tolist() == pytest.approx(tm.weight.tolist())
    with torch.no_grad():
        tm.weight.uniform_(-0.5, 0.5)
    _module_parity(tm, sm, shape, dt)


def test_prelu_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        SF.prelu(st.randn(2, 4), st.tensor([0.1, 0.2, 0.3]))
    x = st.tensor([[-1.0, 2.0, -0.5], [0.3, -2.0, 1.0]], dtype=st.float64, requires_grad=True)
    w = st.tensor([0.2, 0.4, 0.1], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(SF.prelu, (x, w))
