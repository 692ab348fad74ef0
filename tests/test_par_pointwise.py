"""Large element-wise add/sub/mul/div and full sums on the thread policy's count
(``dense/_par_pointwise.py``, issue 14): NumPy's results bit for bit above the size threshold,
NumPy itself below it and for every operand the kernels do not take."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _jit
from sparsetorch.dense import _par_pointwise as P

pytest.importorskip("numba")

N = P.MIN_SIZE + 13  # above the threshold, not a multiple of the chunk alignment
NS = P.SUM_MIN_SIZE + 13  # the same for sums
OPS = ("add", "subtract", "multiply", "true_divide")


@pytest.fixture
def two_free(monkeypatch):
    """The thread policy sees two free cores (a busy test machine would pick one thread)."""
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 2])
    n0 = st.get_num_threads()
    st.set_num_threads(2)
    yield
    st.set_num_threads(n0)


def _data(dt, n=N, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dt)
    x[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).tiny / 4, np.finfo(dt).max, 1]
    return x


def _same_bits(x, y):
    """Equal dtype, shape and bits (NaN vs NaN: any payload)."""
    assert x.dtype == y.dtype and x.shape == y.shape
    nan = np.isnan(x)
    assert np.array_equal(nan, np.isnan(y))
    ity = np.int32 if x.dtype == np.float32 else np.int64
    assert np.array_equal(x[~nan].view(ity), y[~nan].view(ity))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", OPS)
def test_binary_bitwise_numpy(two_free, op, dt):
    a, b = _data(dt, seed=1), _data(dt, seed=2)[::-1].copy()
    f = getattr(np, op)
    _same_bits(P.binary(op, a, b), f(a, b))
    a2, b2 = a.reshape(-1, 1), b.reshape(-1, 1)  # 2-D, C-contiguous: the same pass
    _same_bits(P.binary(op, a2, b2), f(a2, b2))
    for s in (0.1, 3, -2.5, 0.0, float("inf"), float("nan"), 2 ** 40 + 1):  # NumPy's weak numbers
        _same_bits(P.binary(op, a, s), f(a, s))
    zero_d = np.asarray(dt(0.3))
    _same_bits(P.binary(op, a, zero_d), f(a, zero_d))
    wide = np.broadcast_to(dt(1.5), a.shape)  # a sum's gradient: every stride 0
    _same_bits(P.binary(op, a, wide), f(a, wide))
    _same_bits(P.binary(op, wide, b), f(wide, b))  # the scalar on the left


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sum_bitwise_numpy_and_accurate(two_free, dt):
    for n in (NS, P.SUM_MIN_SIZE, 2 * P.SUM_MIN_SIZE + 7):
        rng = np.random.default_rng(n)
        a = (rng.standard_normal(n) + 0.25).astype(dt)
        s = P.total(a)
        assert s.shape == () and s.dtype == dt
        assert s.tobytes() == a.sum().tobytes()  # NumPy's pairwise tree, cut into 8 leaves
        assert P.total(a.reshape(n, 1)).tobytes() == s.tobytes()  # 2-D, C-contiguous
        exact = a.astype(np.float64).sum()
        assert abs(float(s) - exact) <= 1e-5 * np.abs(a).astype(np.float64).sum()
    a = _data(dt, NS)
    assert np.isnan(P.total(a))  # nan propagates
    a[0] = 1
    assert np.isnan(P.total(a)) and np.isnan(a.sum())  # inf + -inf
    a[2] = 1
    assert P.total(a) == a.sum() == np.inf
    neg0 = np.full(NS, -0.0, dt)
    assert P.total(neg0).tobytes() == neg0.sum().tobytes()


def test_pairwise_matches_numpy_at_every_small_size():
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    k = P.kernels()
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64):
        a = (rng.standard_normal(2000) * 1000).astype(dt)
        for n in list(range(300)) + [1000, 1024, 1025, 2000]:
            assert k["pairwise"](a[:n], dt(0)) == a[:n].sum(), (dt, n)


def test_operands_the_kernels_do_not_take(two_free):
    a = _data(np.float32)
    b = _data(np.float32, seed=4)
    m = a.reshape(-1, 1)
    assert P.binary("maximum", a, b) is None  # not one of the four ops
    assert P.binary("multiply", a[::2], b[::2]) is None  # strided
    assert P.binary("multiply", m, b.reshape(1, -1)[:, :1]) is None  # broadcasting
    assert P.binary("multiply", a, b.astype(np.float64)) is None  # mixed dtypes
    assert P.binary("multiply", a, b > 0) is None  # a bool mask
    assert P.binary("multiply", a.astype(np.float16), 2.0) is None
    assert P.binary("multiply", a.astype(np.int64), 2) is None
    assert P.binary("multiply", a, 1e39) is None  # past float32: NumPy's overflow path
    assert P.binary("multiply", a, 2 ** 70) is None  # past int64
    assert P.binary("multiply", a, 10 ** 400) is None  # past any float
    assert P.total(a[::2]) is None
    assert P.total(np.asfortranarray(a[:-13].reshape(1024, -1))) is None
    assert P.total(a.astype(np.float16)) is None
    assert P.total(a[:1000]) is None  # NumPy's tree has no 8 leaves of more than 128 there
    swapped = a.astype(a.dtype.newbyteorder())  # numba takes native byte order only
    assert P.binary("multiply", swapped, 2.0) is None and P.total(swapped) is None


def test_one_thread_leaves_numpy_to_it(monkeypatch):
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 1])  # every core busy beside us
    a = _data(np.float32, NS)
    assert a.size < _jit.WHOLE_POOL_WORK  # (from there on the whole pool, however busy)
    assert P.binary("multiply", a, a) is None
    assert P.total(a) is None


def test_tensor_ops_take_the_path_and_keep_dtypes(two_free, monkeypatch):
    calls = []
    binary, total = P.binary, P.total
    monkeypatch.setattr(P, "binary", lambda *a: calls.append("b") or binary(*a))
    monkeypatch.setattr(P, "total", lambda *a: calls.append("t") or total(*a))
    x0, g0 = _data(np.float32, NS, 5).reshape(-1, 1), _data(np.float32, NS, 6).reshape(-1, 1)
    x0[:8] = 1.0
    x = st.tensor(x0, requires_grad=True)
    g = st.tensor(g0)
    y = x * g
    assert y.dtype is st.float32 and y.detach().numpy().dtype == np.float32
    _same_bits(y.detach().numpy(), x0 * g0)
    for r, ref in ((x.detach() + 2.5, x0 + np.float32(2.5)), (x.detach() - g, x0 - g0),
                   (x.detach() / g, x0 / g0), (2.0 * x.detach(), 2.0 * x0)):
        assert r.dtype is st.float32
        _same_bits(r.numpy(), ref)
    s = y.sum()
    assert s.dtype is st.float32 and s.detach().numpy().dtype == np.float32
    assert s.detach().numpy().tobytes() == (x0 * g0).sum().tobytes()
    s.backward()  # sum's gradient (a stride-0 view) times g: the scalar-on-the-left pass
    _same_bits(x.grad.numpy(), np.ones_like(x0) * g0)
    assert calls.count("b") >= 3 and "t" in calls
    d = st.tensor(x0.astype(np.float64))  # float64 stays float64
    assert (d * 0.5).dtype is st.float64 and d.sum().dtype is st.float64
    assert (d * 0.5).numpy().dtype == np.float64


def test_small_and_strided_tensors_stay_with_numpy(two_free, monkeypatch):
    def refuse(*a):
        raise AssertionError("the parallel path was asked")

    monkeypatch.setattr(P, "binary", refuse)
    monkeypatch.setattr(P, "total", refuse)
    a = st.randn(8)
    b = st.randn(8)
    assert st.equal(a * b, st.from_numpy(a.numpy() * b.numpy()))
    assert a.sum().item() == pytest.approx(float(a.numpy().sum()))
    monkeypatch.setattr(P, "binary", lambda *a: None)  # large, but a transposed view
    monkeypatch.setattr(P, "total", lambda *a: None)
    big = st.randn(1024, 1025)
    t = big.t()
    assert np.array_equal((t * 2.0).numpy(), t.numpy() * np.float32(2.0))
    assert t.sum().numpy().tobytes() == t.numpy().sum().tobytes()
