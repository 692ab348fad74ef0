"""Convolution, pooling and recurrent layers: torch parity, float64 gradchecks, errors."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as F
from sparsetorch import nn
from sparsetorch.autograd import gradcheck

# torch warns about its own zero-padded copy for even kernels with padding="same"
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same.:UserWarning")


def _t(a, rg=False):
    return st.tensor(np.asarray(a), requires_grad=rg)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _copy_params(src_torch, dst):
    """Copy a torch module's parameters into the same-named sparsetorch parameters."""
    ours = dict(dst.named_parameters())
    theirs = dict(src_torch.named_parameters())
    assert list(ours) == list(theirs)
    with st.no_grad():
        for name, p in theirs.items():
            assert tuple(ours[name].shape) == tuple(p.shape), name
            ours[name].copy_(st.tensor(p.detach().numpy()))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy() if hasattr(a, "detach") else a,
                               b.detach().numpy(), rtol=tol, atol=tol)


# ---- functional parity with torch (outputs and input/weight/bias gradients) ----

CONV2D_CASES = [
    {},
    {"stride": 2},
    {"padding": 1, "dilation": 2},
    {"stride": (2, 1), "padding": (1, 2), "groups": 2},
    {"padding": "same"},
    {"padding": "valid", "groups": 4},
]


@pytest.mark.parametrize("kw", CONV2D_CASES)
def test_conv2d_torch_parity(kw):
    torch = pytest.importorskip("torch")
    g = kw.get("groups", 1)
    x, w, b = _rand(2, 4, 9, 8), _rand(8, 4 // g, 3, 2, seed=1), _rand(8, seed=2)
    sx, sw, sb = _t(x, True), _t(w, True), _t(b, True)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ys, yt = F.conv2d(sx, sw, sb, **kw), torch.nn.functional.conv2d(tx, tw, tb, **kw)
    _close(ys, yt)
    gy = _rand(*yt.shape, seed=3)
    (ys * _t(gy)).sum().backward()
    (yt * torch.tensor(gy)).sum().backward()
    for a, b_ in ((sx, tx), (sw, tw), (sb, tb)):
        _close(a.grad, b_.grad)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2},
                                {"padding": "same", "dilation": 3}])
def test_conv1d_torch_parity(kw):
    torch = pytest.importorskip("torch")
    x, w = _rand(3, 4, 11), _rand(6, 4 // kw.get("groups", 1), 3, seed=1)
    sx, sw = _t(x, True), _t(w, True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ys, yt = F.conv1d(sx, sw, **kw), torch.nn.functional.conv1d(tx, tw, **kw)
    _close(ys, yt)
    ys.sum().backward()
    yt.sum().backward()
    _close(sx.grad, tx.grad)
    _close(sw.grad, tw.grad)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_padding_modes(mode):
    torch = pytest.importorskip("torch")
    tm = torch.nn.Conv2d(3, 4, (3, 2), padding=(2, 1), padding_mode=mode).double()
    sm = nn.Conv2d(3, 4, (3, 2), padding=(2, 1), padding_mode=mode, dtype=st.float64)
    _copy_params(tm, sm)
    x = _rand(2, 3, 6, 5)
    sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
    ys, yt = sm(sx), tm(tx)
    _close(ys, yt)
    ys.square().sum().backward()
    yt.square().sum().backward()
    _close(sx.grad, tx.grad)
    _close(sm.weight.grad, tm.weight.grad)
    _close(sm.bias.grad, tm.bias.grad)


def test_conv_module_init_and_repr():
    m = nn.Conv2d(1, 6, 5)
    assert tuple(m.weight.shape) == (6, 1, 5, 5) and m.weight.dtype is st.float32
    assert float(m.weight.abs().max()) <= 1 / 5
    assert repr(m) == "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"
    assert repr(nn.Conv1d(2, 4, 3, stride=2, padding=1, groups=2, bias=False)) == (
        "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), groups=2, bias=False)")
    assert list(dict(m.state_dict())) == ["weight", "bias"]
    assert tuple(m(st.randn(6, 1, 32, 32)).shape) == (6, 6, 28, 28)
    assert tuple(m(st.randn(1, 32, 32)).shape) == (6, 28, 28)  # unbatched


POOL_CASES = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 1), "ceil_mode": True},
]


@pytest.mark.parametrize("kw", POOL_CASES)
def test_max_pool2d_torch_parity(kw):
    torch = pytest.importorskip("torch")
    x = np.round(_rand(2, 3, 9, 8))  # many ties: torch gives the gradient to the first maximum
    for extra in ({}, {"dilation": 2, "return_indices": True}):
        if extra and kw.get("padding", 0) == 0 and kw["kernel_size"] == 2:
            continue
        sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
        ys = F.max_pool2d(sx, **kw, **extra)
        yt = torch.nn.functional.max_pool2d(tx, **kw, **extra)
        if extra:
            np.testing.assert_array_equal(ys[1].numpy(), yt[1].numpy())
            ys, yt = ys[0], yt[0]
        _close(ys, yt, 0)
        gy = _rand(*yt.shape, seed=4)
        (ys * _t(gy)).sum().backward()
        (yt * torch.tensor(gy)).sum().backward()
        _close(sx.grad, tx.grad)


@pytest.mark.parametrize("kw", POOL_CASES)
@pytest.mark.parametrize("cip", [True, False])
def test_avg_pool2d_torch_parity(kw, cip):
    torch = pytest.importorskip("torch")
    x = _rand(2, 3, 9, 8)
    for div in (None, 3):
        sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
        ys = F.avg_pool2d(sx, **kw, count_include_pad=cip, divisor_override=div)
        yt = torch.nn.functional.avg_pool2d(tx, **kw, count_include_pad=cip, divisor_override=div)
        _close(ys, yt)
        ys.square().sum().backward()
        yt.square().sum().backward()
        _close(sx.grad, tx.grad)


def test_pool_1d_and_adaptive_torch_parity():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = np.round(_rand(2, 3, 11) * 2)
    x2 = _rand(2, 3, 9, 7)
    cases = [
        (lambda f, a: f.max_pool1d(a, 3, 2, 1, ceil_mode=True), x),
        (lambda f, a: f.avg_pool1d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False), x),
        (lambda f, a: f.adaptive_avg_pool1d(a, 4), x),
        (lambda f, a: f.adaptive_max_pool1d(a, 4), x),
        (lambda f, a: f.adaptive_avg_pool2d(a, (4, None)), x2),
        (lambda f, a: f.adaptive_avg_pool2d(a, 3), x2),
        (lambda f, a: f.adaptive_max_pool2d(a, (4, 3)), x2),
    ]
    for fn, a in cases:
        sx, tx = _t(a, True), torch.tensor(a, requires_grad=True)
        ys, yt = fn(F, sx), fn(tf, tx)
        _close(ys, yt)
        ys.square().sum().backward()
        yt.square().sum().backward()
        _close(sx.grad, tx.grad)
    _, si = F.adaptive_max_pool2d(_t(x2), (4, 3), return_indices=True)
    _, ti = tf.adaptive_max_pool2d(torch.tensor(x2), (4, 3), return_indices=True)
    np.testing.assert_array_equal(si.numpy(), ti.numpy())


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_torch_parity(mode):
    torch = pytest.importorskip("torch")
    x = _rand(2, 3, 5, 4)
    widths = (1, 2, 3, 0) if mode != "constant" else (1, -1, 2, 3)
    sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
    ys = F.pad(sx, widths, mode=mode)
    yt = torch.nn.functional.pad(tx, widths, mode=mode)
    _close(ys, yt)
    ys.square().sum().backward()
    yt.square().sum().backward()
    _close(sx.grad, tx.grad)


@pytest.mark.parametrize("kw", [{"kernel_size": 2},
                                {"kernel_size": (3, 2), "dilation": (1, 2), "padding": 1,
                                 "stride": (2, 1)}])
def test_unfold_fold_torch_parity(kw):
    torch = pytest.importorskip("torch")
    x = _rand(2, 3, 7, 6)
    sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
    ys, yt = F.unfold(sx, **kw), torch.nn.functional.unfold(tx, **kw)
    _close(ys, yt)
    g = _rand(*yt.shape, seed=9)
    (ys * _t(g)).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    _close(sx.grad, tx.grad)
    sg, tg = _t(g, True), torch.tensor(g, requires_grad=True)
    fs, ft = F.fold(sg, (7, 6), **kw), torch.nn.functional.fold(tg, (7, 6), **kw)
    _close(fs, ft)
    fs.square().sum().backward()
    ft.square().sum().backward()
    _close(sg.grad, tg.grad)


def test_pool_modules_repr_and_shapes():
    assert repr(nn.MaxPool2d(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)")
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AdaptiveAvgPool2d((5, None))) == "AdaptiveAvgPool2d(output_size=(5, None))"
    x = st.randn(2, 3, 8, 8)
    assert tuple(nn.MaxPool2d(2)(x).shape) == (2, 3, 4, 4)
    assert tuple(nn.AvgPool2d(3, 2, 1)(x).shape) == (2, 3, 4, 4)
    assert tuple(nn.AdaptiveAvgPool2d(1)(x).shape) == (2, 3, 1, 1)
    y, i = nn.MaxPool1d(2, return_indices=True)(st.randn(3, 8))
    assert tuple(y.shape) == (3, 4) and i.dtype is st.int64
    assert nn.MaxPool2d(2)(x).dtype is st.float32


# ---- float64 gradchecks ----

def test_conv_gradcheck():
    x, w, b = _t(_rand(2, 4, 5, 4), True), _t(_rand(4, 2, 2, 3, seed=1), True), _t(_rand(4), True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2),
                                              groups=2), (x, w, b))
    x1, w1 = _t(_rand(2, 3, 7), True), _t(_rand(2, 3, 3, seed=1), True)
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=2), (x1, w1))


def test_conv_double_backward():
    x, w = _t(_rand(1, 2, 5, 5), True), _t(_rand(3, 2, 2, 2, seed=1), True)

    def first(x, w):
        y = F.conv2d(x, w, stride=2, padding=1)
        gx, gw = st.autograd.grad(y.square().sum(), (x, w), create_graph=True)
        return gx.square().sum() + gw.square().sum()

    assert gradcheck(first, (x, w))


def test_pool_gradcheck():
    x = _t(_rand(2, 2, 6, 5), True)
    assert gradcheck(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))
    assert gradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                     (x,))
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (x,))
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, (4, 3)), (x,))
    assert gradcheck(lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), (x,))
    assert gradcheck(lambda x: F.unfold(x, 2, padding=1, stride=2), (x,))
    assert gradcheck(lambda b: F.fold(b, (4, 5), 2, stride=(1, 2)), (_t(_rand(2, 8, 6), True),))


# ---- recurrent layers ----

def _run_rnn_parity(torch, tcls, scls, kw, seq=(5, 3), hidden=False):
    tm = tcls(4, 6, **kw).double()
    sm = scls(4, 6, **kw, dtype=st.float64)
    _copy_params(tm, sm)
    tm.eval()
    sm.eval()
    steps, batch = seq
    shape = (batch, steps, 4) if kw.get("batch_first") else (steps, batch, 4)
    x = _rand(*shape, seed=5)
    sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
    s_in, t_in = [sx], [tx]
    if hidden:
        dirs = 2 if kw.get("bidirectional") else 1
        hs = _rand(kw.get("num_layers", 1) * dirs, batch, kw.get("proj_size") or 6, seed=6)
        cs = _rand(kw.get("num_layers", 1) * dirs, batch, 6, seed=7)
        if tcls is torch.nn.LSTM:
            s_in.append((_t(hs, True), _t(cs, True)))
            t_in.append((torch.tensor(hs, requires_grad=True),
                         torch.tensor(cs, requires_grad=True)))
        else:
            s_in.append(_t(hs, True))
            t_in.append(torch.tensor(hs, requires_grad=True))
    so, sh = sm(*s_in)
    to, th = tm(*t_in)
    _close(so, to)
    if isinstance(th, tuple):
        _close(sh[0], th[0])
        _close(sh[1], th[1])
        sl = so.square().sum() + sh[0].sum() + sh[1].square().sum()
        tl = to.square().sum() + th[0].sum() + th[1].square().sum()
    else:
        _close(sh, th)
        sl, tl = so.square().sum() + sh.sum(), to.square().sum() + th.sum()
    sl.backward()
    tl.backward()
    _close(sx.grad, tx.grad)
    for (n, p), (_, q) in zip(sm.named_parameters(), tm.named_parameters()):
        _close(p.grad, q.grad)


RNN_CASES = [
    {},
    {"num_layers": 2, "bidirectional": True},
    {"batch_first": True, "bias": False},
    {"num_layers": 2, "batch_first": True, "bidirectional": True},
]


@pytest.mark.parametrize("kw", RNN_CASES)
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_rnn_torch_parity(kind, kw):
    torch = pytest.importorskip("torch")
    _run_rnn_parity(torch, getattr(torch.nn, kind), getattr(nn, kind), kw, hidden=bool(kw))


def test_rnn_relu_and_lstm_proj_parity():
    torch = pytest.importorskip("torch")
    _run_rnn_parity(torch, torch.nn.RNN, nn.RNN, {"nonlinearity": "relu", "num_layers": 2},
                    hidden=True)
    _run_rnn_parity(torch, torch.nn.LSTM, nn.LSTM,
                    {"proj_size": 3, "num_layers": 2, "bidirectional": True}, hidden=True)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_torch_parity(kind):
    torch = pytest.importorskip("torch")
    tm = getattr(torch.nn, kind)(4, 6).double()
    sm = getattr(nn, kind)(4, 6, dtype=st.float64)
    _copy_params(tm, sm)
    x = _rand(3, 4)
    for with_h in (False, True):
        sx, tx = _t(x, True), torch.tensor(x, requires_grad=True)
        if with_h:
            h = _rand(3, 6, seed=8)
            sh = (_t(h), _t(h * 0.5)) if kind == "LSTMCell" else _t(h)
            th = (torch.tensor(h), torch.tensor(h * 0.5)) if kind == "LSTMCell" else torch.tensor(h)
            so, to = sm(sx, sh), tm(tx, th)
        else:
            so, to = sm(sx), tm(tx)
        if kind == "LSTMCell":
            _close(so[1], to[1])
            so, to = so[0] * so[1], to[0] * to[1]
        _close(so, to)
        so.sum().backward()
        to.sum().backward()
        _close(sx.grad, tx.grad)
    one = sm(st.randn(4, dtype=st.float64))  # unbatched input
    one = one[0] if kind == "LSTMCell" else one
    assert tuple(one.shape) == (6,)


def test_rnn_shapes_unbatched_and_names():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    names = [n for n, _ in m.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_ih_l0_reverse"]
    out, (h, c) = m(st.randn(7, 3))  # unbatched (L, H_in)
    assert tuple(out.shape) == (7, 10) and tuple(h.shape) == (4, 5) and tuple(c.shape) == (4, 5)
    out, h = nn.GRU(3, 5, batch_first=True)(st.randn(2, 7, 3))
    assert tuple(out.shape) == (2, 7, 5) and tuple(h.shape) == (1, 2, 5)
    assert out.dtype is st.float32
    assert repr(m) == "LSTM(3, 5, num_layers=2, bidirectional=True)"


def test_rnn_dropout_between_layers():
    st.manual_seed(0)
    m = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = st.randn(5, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    c = m(x)[0]
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


def test_rnn_gradcheck():
    st.manual_seed(0)
    for cls in (nn.RNN, nn.LSTM, nn.GRU):
        m = cls(2, 3, num_layers=2, bidirectional=True, dtype=st.float64)
        params = list(m.parameters())
        x = _t(_rand(3, 2, 2), True)

        assert gradcheck(lambda x, *ps, m=m: m(x)[0], (x, *params[:4]))
    cell = nn.LSTMCell(2, 3, dtype=st.float64)
    assert gradcheck(lambda x, w: cell(x)[1] * w.sum(), (_t(_rand(2, 2), True), cell.weight_hh))


# ---- errors (torch's types and messages) ----

def test_conv_errors():
    with pytest.raises(RuntimeError, match="expected input\\[1, 3, 5, 5\\] to have 2 channels"):
        F.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input"):
        F.conv2d(st.randn(5, 5), st.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(st.randn(1, 3, 2, 2), st.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.conv2d(st.randn(1, 3, 5, 5, dtype=st.float64), st.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="not supported for strided convolutions"):
        F.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 4 elements"):
        F.conv2d(st.randn(1, 3, 5, 5), st.randn(4, 3, 3, 3), st.randn(3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="x")
    with pytest.raises(ValueError, match="Invalid padding string 'foo'"):
        nn.Conv2d(3, 4, 3, padding="foo")


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(st.randn(1, 3, 5, 5), 3, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.avg_pool2d(st.randn(1, 3, 2, 2), 3)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.max_pool2d(st.randn(1, 3, 5, 5), 3, stride=0)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        F.max_pool2d(st.randn(5, 5), 2)
    with pytest.raises(RuntimeError, match="reflect|Padding size should be less"):
        F.pad(st.randn(1, 2, 3), (3, 3), mode="reflect")


def test_rnn_errors():
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        nn.LSTM(3, 4)(st.randn(5, 2, 3, 1))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 4"):
        nn.GRU(3, 4)(st.randn(5, 2, 4))
    with pytest.raises(RuntimeError, match="Expected hidden\\[1\\] size \\(1, 2, 4\\), got "
                                           "\\[1, 2, 5\\]"):
        nn.LSTM(3, 4)(st.randn(5, 2, 3), (st.randn(1, 2, 4), st.randn(1, 2, 5)))
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\), got \\[1, 3, 4\\]"):
        nn.RNN(3, 4)(st.randn(5, 2, 3), st.randn(1, 3, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        nn.GRU(3, 4)(st.randn(5, 3), st.randn(1, 3, 4))
    with pytest.raises(ValueError, match="Unknown nonlinearity 'x'"):
        nn.RNN(3, 4, nonlinearity="x")
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 4 expected 3"):
        nn.RNNCell(3, 4)(st.randn(2, 4))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.RNNCell(3, 4)(st.randn(2, 3), st.randn(3, 4))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D"):
        nn.RNNCell(3, 4)(st.randn(2, 2, 3))
