"""The fused nn ops of issue 14 against torch: torch's grad_fn names, values and gradients (small
inputs on the NumPy path, large ones on the numba kernels, edge values included), double backward,
the numba and NumPy kernels agreeing, and torch's errors for non-differentiable weights."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF
from sparsetorch import _jit
from sparsetorch._backend import CPU
from sparsetorch.nn._kernels import pointwise as PK

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(14)
X = RNG.standard_normal((4, 3)).astype(np.float32)
W = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal(2).astype(np.float32)
Y = RNG.random((4, 3)).astype(np.float32)
T = np.array([0, 2, 1, 1])

# (name, fn(lib, F, x) -> tensor) with x a (4, 3) leaf requiring grad
NAMES = [
    ("linear", lambda m, F, x: F.linear(x, m.tensor(W), m.tensor(B))),
    ("linear_no_bias", lambda m, F, x: F.linear(x, m.tensor(W))),
    ("linear_3d", lambda m, F, x: F.linear(x.reshape(2, 2, 3), m.tensor(W), m.tensor(B))),
    ("nn_linear", lambda m, F, x: m.nn.Linear(3, 2)(x)),
    ("relu", lambda m, F, x: F.relu(x)),
    ("sigmoid", lambda m, F, x: F.sigmoid(x)),
    ("tanh", lambda m, F, x: F.tanh(x)),
    ("logsigmoid", lambda m, F, x: F.logsigmoid(x)),
    ("softplus", lambda m, F, x: F.softplus(x)),
    ("gelu", lambda m, F, x: F.gelu(x)),
    ("silu", lambda m, F, x: F.silu(x)),
    ("mish", lambda m, F, x: F.mish(x)),
    ("dropout", lambda m, F, x: F.dropout(x, 0.3)),
    ("mse_loss", lambda m, F, x: F.mse_loss(x, m.tensor(Y))),
    ("mse_loss_none", lambda m, F, x: F.mse_loss(x, m.tensor(Y), reduction="none")),
    ("log_softmax", lambda m, F, x: F.log_softmax(x, 1)),
    ("nll_loss", lambda m, F, x: F.nll_loss(x, m.tensor(T))),
    ("nll_loss_2d", lambda m, F, x: F.nll_loss(x.reshape(1, 4, 3, 1),
                                               m.tensor(T[:3]).reshape(1, 3, 1))),
    ("cross_entropy", lambda m, F, x: F.cross_entropy(x, m.tensor(T))),
    ("cross_entropy_none", lambda m, F, x: F.cross_entropy(x, m.tensor(T), reduction="none")),
    ("bce", lambda m, F, x: F.binary_cross_entropy(x.sigmoid(), m.tensor(Y))),
    ("bce_with_logits", lambda m, F, x: F.binary_cross_entropy_with_logits(x, m.tensor(Y))),
    ("bce_with_logits_pw", lambda m, F, x: F.binary_cross_entropy_with_logits(
        x, m.tensor(Y), pos_weight=m.tensor(Y[0]))),
    ("layer_norm", lambda m, F, x: F.layer_norm(x, (3,))),
    ("nn_layer_norm", lambda m, F, x: m.nn.LayerNorm(3)(x)),
    ("batch_norm", lambda m, F, x: F.batch_norm(x, None, None, training=True)),
    ("nn_batch_norm_eval", lambda m, F, x: m.nn.BatchNorm1d(3).eval()(x)),
]


@pytest.mark.parametrize("name,fn", NAMES, ids=[n for n, _ in NAMES])
def test_grad_fn_name_is_torchs(name, fn):
    got = fn(st, SF, st.tensor(X, requires_grad=True)).grad_fn
    want = fn(torch, TF, torch.tensor(X, requires_grad=True)).grad_fn
    assert type(got).__name__ == type(want).__name__


def _edge(n, c=4):
    x = (RNG.standard_normal((n // c, c)) * 5).astype(np.float32)
    x.ravel()[:9] = [np.inf, -np.inf, np.nan, 100, -100, 1e4, -1e4, 0, 88.5]
    return x


def _both(fn, arrays, grads, tol=1e-5):
    """fn on torch and on sparsetorch; values and gradients (of the sum) must agree."""
    out = []
    for m, F in ((torch, TF), (st, SF)):
        ts = [m.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
        r = fn(m, F, *ts)
        gs = m.autograd.grad(r.sum(), [t for t in ts if t.requires_grad])
        out.append((r, gs))
    (rt, gt), (rs, gs) = out
    assert str(rs.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    np.testing.assert_allclose(rs.detach().numpy(), rt.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(gs, gt):
        assert a.dtype.name == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


SIZES = [12, 1 << 14, 1 << 16]  # NumPy path, numba serial, numba parallel (when cores are free)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_torch(n, reduction):
    x, y = _edge(n), RNG.random((n // 4, 4)).astype(np.float32)
    w, pw = RNG.random(4).astype(np.float32), (RNG.random((1, 4)) * 3).astype(np.float32)
    col = (RNG.random((n // 4, 1)) * 2).astype(np.float32)  # varies along a leading dim

    def f(m, F, a, b, c, d):
        return F.binary_cross_entropy_with_logits(a, b, c, reduction=reduction, pos_weight=d)

    _both(f, [x, y, w, pw], [True, True, False, False])
    _both(f, [x, y, col, w], [True, True, False, False])
    _both(lambda m, F, a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction),
          [x, y], [True, True])


@pytest.mark.parametrize("n", SIZES)
def test_elementwise_kernels_match_torch(n):
    x = _edge(n)
    _both(lambda m, F, a: F.logsigmoid(a), [x], [True])
    _both(lambda m, F, a: F.softplus(a), [x], [True])
    _both(lambda m, F, a: F.softplus(a, 2.0, 5.0), [x], [True])
    _both(lambda m, F, a: F.mish(a), [x], [True])
    _both(lambda m, F, a: F.silu(a), [x], [True])
    _both(lambda m, F, a: F.gelu(a), [x], [True])
    _both(lambda m, F, a: F.gelu(a, approximate="tanh"), [x], [True])
    _both(lambda m, F, a: F.leaky_relu(a, 0.2), [x], [True])
    xn = np.where(np.isnan(x), 0, x)  # torch's elu gradient at nan is nan or 1 by input size
    _both(lambda m, F, a: F.elu(a, 1.5), [xn], [True])
    _both(lambda m, F, a: F.selu(a), [xn], [True])
    _both(lambda m, F, a: F.celu(a, 2.0), [xn], [True])
    _both(lambda m, F, a: F.logsigmoid(a), [x.astype(np.float64)], [True], tol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(reduction):
    x, y = _edge(40), RNG.random((10, 4)).astype(np.float32)
    x = x[1:]  # finite logits from here on
    x[0, :] = 1.0
    y = y[1:]
    p = RNG.uniform(0.02, 0.98, (9, 4)).astype(np.float32)
    p[0, :3] = [0.0, 1.0, 0.5]
    t = RNG.integers(0, 4, 9)
    t[:2] = -100
    w = RNG.random(4).astype(np.float32)
    _both(lambda m, F, a, b: F.mse_loss(a, b, reduction=reduction), [x, y], [True, True])
    _both(lambda m, F, a, b: F.mse_loss(a, b, reduction=reduction), [x, y[0]], [True, True])
    _both(lambda m, F, a, b, c: F.binary_cross_entropy(a, b, c, reduction=reduction),
          [p, y, w], [True, True, False], tol=1e-4)
    _both(lambda m, F, a, b, c: F.nll_loss(a, b, c, reduction=reduction), [x, t, w],
          [True, False, False])
    _both(lambda m, F, a, b: F.cross_entropy(a, b, reduction=reduction), [x, t], [True, False])
    x4, t3 = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32), RNG.integers(0, 3, (2, 4, 5))
    _both(lambda m, F, a, b: F.nll_loss(a, b, reduction=reduction), [x4, t3], [True, False])
    _both(lambda m, F, a, b: F.cross_entropy(a, b, reduction=reduction), [x4[:, :, 0], t3[:, 0]],
          [True, False])


def test_linear_and_norms_match_torch():
    x3 = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    _both(lambda m, F, a, b, c: F.linear(a, b, c), [X, W, B], [True] * 3)
    _both(lambda m, F, a, b: F.linear(a, b), [x3, W], [True] * 2)
    _both(lambda m, F, a, b, c: F.layer_norm(a, (4, 3), b, c), [x3, x3[0] + 1, x3[1]], [True] * 3)
    c = RNG.random(4).astype(np.float32)
    _both(lambda m, F, a, b, d: F.batch_norm(a, None, None, b, d, True), [x3, c, c], [True] * 3)
    _both(lambda m, F, a, b: F.batch_norm(a, m.tensor(c), m.tensor(c + 1), b, None, False),
          [x3, c], [True] * 2)


def _f64(*shape, positive=False):
    a = RNG.uniform(0.1, 0.9, shape) if positive else RNG.standard_normal(shape)
    return st.tensor(a, dtype=st.float64, requires_grad=True)


_CW = st.tensor(RNG.random(4))
_W4 = st.tensor(RNG.random(4))
_PW = st.tensor(RNG.random((3, 1)) + 0.5)
GRADGRAD = [
    ("logsigmoid", lambda a: SF.logsigmoid(a), [(3, 4)]),
    ("softplus", lambda a: SF.softplus(a, 2.0, 3.0), [(3, 4)]),
    ("mish", lambda a: SF.mish(a), [(3, 4)]),
    ("linear", lambda a, b, c: SF.linear(a, b, c), [(4, 3), (2, 3), (2,)]),
    ("mse_loss", lambda a, b: SF.mse_loss(a, b), [(3, 4), (3, 4)]),
    ("nll_loss", lambda a: SF.nll_loss(a, st.tensor([0, 3, -100]), _CW),
     [(3, 4)]),
    ("cross_entropy", lambda a: SF.cross_entropy(a, st.tensor([0, 3, 1])), [(3, 4)]),
    ("bce", lambda a, b: SF.binary_cross_entropy(a, b, reduction="sum"), [(3, 4), (3, 4)]),
    ("bce_with_logits", lambda a, b: SF.binary_cross_entropy_with_logits(
        a, b, _W4, pos_weight=_PW),
     [(3, 4), (3, 4)]),
    ("layer_norm", lambda a, b, c: SF.layer_norm(a, (4,), b, c), [(3, 4), (4,), (4,)]),
    ("batch_norm_train", lambda a, b: SF.batch_norm(a, None, None, b, None, True),
     [(5, 3), (3,)]),
    ("batch_norm_eval", lambda a, b: SF.batch_norm(
        a, st.zeros(3, dtype=st.float64), st.ones(3, dtype=st.float64), b, None, False),
     [(5, 3), (3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRADGRAD, ids=[g[0] for g in GRADGRAD])
def test_double_backward(name, fn, shapes):
    positive = name == "bce"
    ins = tuple(_f64(*s, positive=positive) for s in shapes)
    assert st.autograd.gradcheck(fn, ins)
    assert st.autograd.gradgradcheck(fn, ins)


def test_numba_and_numpy_kernels_agree():
    x = _edge(1 << 15).astype(np.float32)
    t = RNG.random(x.shape).astype(np.float32)
    pw = (RNG.random(4) * 2).astype(np.float32)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    runs = []
    for on in (True, False):
        old = _jit.use_numba(on)
        try:
            runs.append([PK.sigmoid(CPU, x), PK.logsigmoid(CPU, x), PK.softplus(CPU, x, 1.0, 20.0),
                         PK.logsigmoid_backward(CPU, g, x),
                         PK.softplus_backward(CPU, g, x, 1.0, 20.0),
                         PK.bce_logits(CPU, x, t, None, pw, "none"),
                         PK.bce_logits(CPU, x, t, pw, None, "sum"),
                         PK.bce_logits_backward(CPU, g, x, t, None, pw, "none")])
        finally:
            _jit.use_numba(old)
    for a, b in zip(*runs):
        assert a.dtype == np.float32 and b.dtype == np.float32
        scale = max(1.0, float(np.abs(b).max()) * 1e-2)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-5 * scale)


def test_weights_are_not_differentiable_as_in_torch():
    x, y = st.tensor(X, requires_grad=True), st.tensor(Y)
    w = st.rand(3, requires_grad=True)
    cases = [
        ("binary_cross_entropy_with_logits", "weight",
         lambda: SF.binary_cross_entropy_with_logits(x, y, weight=w)),
        ("binary_cross_entropy_with_logits", "pos_weight",
         lambda: SF.binary_cross_entropy_with_logits(x, y, pos_weight=w)),
        ("binary_cross_entropy", "weight", lambda: SF.binary_cross_entropy(x.sigmoid(), y, w)),
        ("nll_loss_forward", "weight", lambda: SF.nll_loss(x, st.tensor(T), w)),
    ]
    for fname, arg, f in cases:
        with pytest.raises(RuntimeError, match=f"'{fname}' is not differentiable with respect to "
                                               f"argument '{arg}'"):
            f()
    with st.no_grad():
        assert SF.binary_cross_entropy_with_logits(x, y, weight=w).grad_fn is None


def test_weighted_mse_is_torchs():
    w = RNG.random((4, 3)).astype(np.float32)
    for red in ("mean", "sum", "none"):
        _both(lambda m, F, a, b, c, red=red: F.mse_loss(a, b, reduction=red, weight=c), [X, Y, w],
              [True, False, False])
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        SF.mse_loss(st.tensor(X), st.tensor(Y), weight=st.ones(3))


def test_half_inputs_round_once_as_torch():
    x = np.cos(np.arange(32.0)).reshape(4, 8)
    for fn in (lambda m, F, a: F.mse_loss(a, a * 0.5), lambda m, F, a: F.layer_norm(a, (8,)),
               lambda m, F, a: F.binary_cross_entropy_with_logits(a, (a > 0).to(a.dtype))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rt = fn(torch, TF, torch.tensor(x, dtype=torch.float16))
            rs = fn(st, SF, st.tensor(x, dtype=st.float16))
        assert rs.dtype is st.float16
        np.testing.assert_allclose(rs.float().numpy(), rt.float().numpy(), rtol=1e-3, atol=1e-3)
