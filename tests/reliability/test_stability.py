"""Numerical stability: softmax-family ops and the logit losses with inputs of magnitude 1e4
(where a naive ``exp`` overflows to inf and ``log(0)`` gives -inf), in float16/32/64, against
float64 NumPy references computed here; the results and their gradients must be finite."""

import numpy as np
import pytest

import sparsetorch as st

F = st.nn.functional
DTYPES = [st.float16, st.float32, st.float64]
TOL = {st.float16: (4e-3, 2e-2), st.float32: (2e-6, 1e-5), st.float64: (1e-12, 1e-12)}  # rtol, atol

# rows: huge positive next to huge negative, all equal and huge negative, near-ties at 1e4,
# ordinary values, and a row where only one entry matters
X = np.array([
    [1e4, -1e4, 0.0, 1.0],
    [-1e4, -1e4, -1e4, -1e4],
    [1e4, 1e4 - 1, 3.0, 1e4 - 0.5],
    [0.5, -1.25, 2.0, 0.0],
    [-1e4, 1e4, -1e4, -1e4],
])
TARGET = np.array([0, 1, 2, 3, 0])


def _input(dt, x=X):
    t = st.tensor(x, dtype=dt).requires_grad_(True)
    return t, t.detach().double().numpy()  # the reference sees the same (rounded) inputs


def _close(got, want, dt, what):
    got = got.detach().double().numpy()
    assert np.isfinite(got).all(), f"{what}: non-finite {got}"
    rtol, atol = TOL[dt]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max() * 1e-4),
                               err_msg=what)


def _lse(x, axis=-1, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    r = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return r if keepdims else r.squeeze(axis)


def _log_softmax(x, axis=-1):
    return x - _lse(x, axis, keepdims=True)


def _softplus(x):
    return np.logaddexp(0.0, x)


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _grad(y, x):
    (g,) = st.autograd.grad(y.sum() if y.ndim else y, x)
    assert g.dtype is x.dtype
    return g


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("fn", ["log_softmax", "softmax", "F.log_softmax", "F.softmax"])
def test_softmax_family(fn, dt):
    x, xr = _input(dt)
    op = {"log_softmax": st.log_softmax, "softmax": st.softmax,
          "F.log_softmax": F.log_softmax, "F.softmax": F.softmax}[fn]
    y = op(x, 1)
    assert y.dtype is dt
    want = _log_softmax(xr, 1)
    if "log" not in fn:
        want = np.exp(want)
    _close(y, want, dt, fn)
    # gradient of sum(y * w) for a fixed w: log_softmax -> w - softmax * sum(w); softmax -> s*(w - <s,w>)
    w = np.linspace(-1, 1, xr.shape[1])
    (g,) = st.autograd.grad((y * st.tensor(w, dtype=dt)).sum(), x)
    s = np.exp(_log_softmax(xr, 1))
    gw = w - s * w.sum() if "log" in fn else s * (w - (s * w).sum(1, keepdims=True))
    _close(g, gw, dt, fn + " grad")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_logsumexp(dt):
    x, xr = _input(dt)
    y = st.logsumexp(x, 1)
    _close(y, _lse(xr, 1), dt, "logsumexp")
    _close(_grad(y, x), np.exp(_log_softmax(xr, 1)), dt, "logsumexp grad")
    _close(st.logsumexp(x, (0, 1)), _lse(xr.reshape(-1), 0), dt, "logsumexp all dims")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy(dt, smoothing):
    x, xr = _input(dt)
    loss = F.cross_entropy(x, st.tensor(TARGET), label_smoothing=smoothing)
    ls = _log_softmax(xr, 1)
    n, c = xr.shape
    onehot = np.eye(c)[TARGET]
    q = onehot * (1 - smoothing) + smoothing / c
    want = -(q * ls).sum(1).mean()
    _close(loss, np.array(want), dt, "cross_entropy")
    _close(_grad(loss, x), (np.exp(ls) - q) / n, dt, "cross_entropy grad")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("use_module", [False, True])
def test_bce_with_logits_pos_weight(dt, use_module):
    x, xr = _input(dt)
    t = np.tile(np.array([1.0, 0.0, 0.5, 1.0]), (xr.shape[0], 1))
    pw = np.array([2.0, 3.0, 0.5, 1.0])
    args = (x, st.tensor(t, dtype=dt))
    if use_module:
        loss = st.nn.BCEWithLogitsLoss(pos_weight=st.tensor(pw, dtype=dt))(*args)
    else:
        loss = F.binary_cross_entropy_with_logits(*args, pos_weight=st.tensor(pw, dtype=dt))
    per = pw * t * _softplus(-xr) + (1 - t) * _softplus(xr)
    _close(loss, np.array(per.mean()), dt, "bce_with_logits")
    g = (-pw * t * _sigmoid(-xr) + (1 - t) * _sigmoid(xr)) / xr.size
    _close(_grad(loss, x), g, dt, "bce_with_logits grad")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
def test_bce_with_logits_no_weight_sum(dt):
    x, xr = _input(dt)
    t = (TARGET[:, None] == np.arange(4)).astype(np.float64)
    loss = F.binary_cross_entropy_with_logits(x, st.tensor(t, dtype=dt), reduction="sum")
    _close(loss, np.array((t * _softplus(-xr) + (1 - t) * _softplus(xr)).sum()), dt, "bce sum")
    assert np.isfinite(_grad(loss, x).double().numpy()).all()


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_softmax_over_stored_entries(dt, log, layout):
    # the pattern leaves some entries unspecified: torch.sparse.softmax treats them as -inf
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 0, 1]], bool)
    xv = np.where(mask, X + (X == 0) * 0.25, 0.0)  # stored values are nonzero
    x = st.tensor(xv, dtype=dt)
    s = x.to_sparse() if layout == "coo" else x.to_sparse_csr()
    s.requires_grad_(True)
    op = st.sparse.log_softmax if log else st.sparse.softmax
    y = op(s, 1)
    xr = x.double().numpy()
    masked = np.where(mask, xr, -np.inf)
    ref = masked - _lse(masked, 1, keepdims=True)
    got = y.to_dense().detach().double().numpy()
    assert np.isfinite(got[mask]).all()
    rtol, atol = TOL[dt]
    want = ref[mask] if log else np.exp(ref[mask])
    np.testing.assert_allclose(got[mask], want, rtol=rtol, atol=atol * max(1.0, np.abs(want).max() * 1e-4))
    (g,) = st.autograd.grad(y.to_dense().sum(), s)
    gv = g.to_dense().double().numpy()
    assert np.isfinite(gv).all()
    sm = np.exp(ref[mask])
    if log:  # d/dx sum(log_softmax) = 1 - n_row * softmax, on the stored entries
        n = np.broadcast_to(mask.sum(1, keepdims=True), mask.shape)[mask]
        np.testing.assert_allclose(gv[mask], 1 - n * sm, rtol=max(rtol, 1e-6), atol=10 * atol)
    else:
        np.testing.assert_allclose(gv[mask], 0.0, atol=10 * atol)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("fn,ref", [
    ("logsigmoid", lambda x: -_softplus(-x)),
    ("softplus", _softplus),
    ("sigmoid", _sigmoid),
])
def test_logistic_helpers(dt, fn, ref):
    x, xr = _input(dt)
    y = {"logsigmoid": F.logsigmoid, "softplus": F.softplus, "sigmoid": st.sigmoid}[fn](x)
    _close(y, ref(xr), dt, fn)
    assert np.isfinite(_grad(y, x).double().numpy()).all()


def test_float16_extremes_stay_finite():
    # half of float16's max (65504; exp overflows past 11.1): only max-subtracted forms survive,
    # and sums of the per-element losses need a float32 accumulator
    x = st.tensor([[3e4, -3e4, 0.0], [-3e4, -3e4, -3e4]], dtype=st.float16, requires_grad=True)
    for y in (st.log_softmax(x, 1), st.softmax(x, 1), st.logsumexp(x, 1),
              F.cross_entropy(x, st.tensor([0, 2])),
              F.binary_cross_entropy_with_logits(x, st.ones_like(x), pos_weight=st.tensor([2.0, 1.0, 1.0], dtype=st.float16))):
        assert y.dtype is st.float16
        assert bool(st.isfinite(y).all()), y
        assert bool(st.isfinite(_grad(y, x)).all())
    np.testing.assert_allclose(st.logsumexp(x, 1).detach().double().numpy(), [3e4, -3e4 + np.log(3)], rtol=1e-3)
    assert st.tensor([6e4, 6e4, -6e4], dtype=st.float16).mean().item() == 2e4  # no overflow midway
    assert st.tensor([6e4, 6e4, -6e4], dtype=st.float16).sum().item() == 6e4
