"""F.softmax / F.log_softmax through the numba row kernels (nn/_kernels/softmax.py): values,
special values, gradients and node names against torch and a float64 reference."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF
from sparsetorch.nn._kernels import softmax as ksm

torch = pytest.importorskip("torch")
TF = torch.nn.functional

INF = np.inf
SPECIAL = np.array([
    [-INF, -INF, -INF, -INF, -INF],  # all -inf: nan (as torch)
    [INF, 1.0, 2.0, -INF, 0.0],  # +inf: nan row
    [np.nan, 1.0, 2.0, 3.0, 4.0],  # nan propagates
    [-INF, 0.0, 1.0, -INF, 2.0],  # -inf entries: 0 / -inf
    [1e4, -1e4, 0.0, 5e3, -5e3],  # wide range
    [-1e4, -1e4 + 1, -1e4 + 2, -1e4, -1e4],
    [88.0, 89.0, 100.0, -104.0, -200.0],
    [0.0, 0.0, 0.0, 0.0, 0.0],
])


def _fns(log):
    return (SF.log_softmax, TF.log_softmax) if log else (SF.softmax, TF.softmax)


def _kernels_on():
    from sparsetorch._backend import CPU
    return ksm.rows(CPU) is not None


@pytest.mark.parametrize("numpy_path", [False, True])  # the kernels; torch.softmax's NumPy op
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("dim", [-1, 0])  # rows; slabs (the reduced dim not last)
def test_special_values_match_torch(log, dt, dim, numpy_path):
    ours, theirs = _fns(log)
    if numpy_path:
        ours = st.log_softmax if log else st.softmax
    x = SPECIAL.astype(dt)
    if dim == 0:
        x = np.ascontiguousarray(np.stack([x.T, x.T[:, ::-1]], axis=-1))  # (5, 8, 2)
    r = ours(st.tensor(x), dim).numpy()
    e = theirs(torch.tensor(x), dim).numpy()
    assert r.dtype == e.dtype
    np.testing.assert_array_equal(np.isnan(r), np.isnan(e))
    np.testing.assert_array_equal(np.isinf(r), np.isinf(e))
    ok = np.isfinite(e)
    np.testing.assert_allclose(r[ok], e[ok], rtol=2e-6 if dt == "float32" else 1e-12, atol=0)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((3, 7), -1), ((2, 3, 65), -1), ((40, 1000), -1),
                                       ((5, 1), -1), ((4, 300, 20), 1), ((64, 3), 0)])
def test_float32_accuracy_vs_float64(log, shape, dim):
    ours, theirs = _fns(log)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 30).astype(np.float32)
    r = ours(st.tensor(x), dim).numpy()
    ref = theirs(torch.tensor(x, dtype=torch.float64), dim).numpy()
    t32 = theirs(torch.tensor(x), dim).numpy()
    assert r.dtype == np.float32
    err, terr = np.abs(r - ref).max(), np.abs(t32 - ref).max()
    assert err <= max(2 * terr, 1e-6)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("dim", [-1, 1, 0])
def test_backward_matches_torch(log, dt, dim):
    ours, theirs = _fns(log)
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((6, 4, 33)) * 3).astype(dt)
    g = rng.standard_normal(x.shape).astype(dt)
    a = st.tensor(x, requires_grad=True)
    y = ours(a, dim)
    assert type(y.grad_fn).__name__ == ("LogSoftmaxBackward0" if log else "SoftmaxBackward0")
    y.backward(st.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), theirs(torch.tensor(x), dim).numpy(),
                               rtol=1e-5 if dt == "float32" else 1e-12, atol=1e-6)
    b = torch.tensor(x, requires_grad=True)
    theirs(b, dim).backward(torch.tensor(g))
    tol = 1e-5 if dt == "float32" else 1e-12
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    assert a.grad.dtype == a.dtype


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_double_backward_and_gradcheck(log, dim):
    ours, theirs = _fns(log)
    x = np.random.default_rng(2).standard_normal((3, 5))
    a = st.tensor(x, requires_grad=True)
    (ga,) = st.autograd.grad((ours(a, dim) ** 2).sum(), a, create_graph=True)
    (ga * ga).sum().backward()
    b = torch.tensor(x, requires_grad=True)
    (gb,) = torch.autograd.grad((theirs(b, dim) ** 2).sum(), b, create_graph=True)
    (gb * gb).sum().backward()
    np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert st.autograd.gradcheck(lambda t: ours(t, dim), (st.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("log", [False, True])
def test_other_paths_unchanged(log):
    """other dims, strided views, dtype=, float16/bfloat16, the implicit dim warning."""
    ours, theirs = _fns(log)
    x = np.random.default_rng(3).standard_normal((4, 6, 5)).astype(np.float32)
    for dim in (0, 1, -2):
        np.testing.assert_allclose(ours(st.tensor(x), dim).numpy(),
                                   theirs(torch.tensor(x), dim).numpy(), rtol=1e-5, atol=1e-6)
    v = st.tensor(x).transpose(0, 2)
    np.testing.assert_allclose(ours(v, -1).numpy(),
                               theirs(torch.tensor(x).transpose(0, 2), -1).numpy(),
                               rtol=1e-5, atol=1e-6)
    r = ours(st.tensor(x), -1, dtype=st.float64)
    assert r.dtype == st.float64
    np.testing.assert_allclose(r.numpy(), theirs(torch.tensor(x), -1, dtype=torch.float64).numpy(),
                               rtol=1e-12)
    for sd, td in ((st.float16, torch.float16), (st.bfloat16, torch.bfloat16)):
        r = ours(st.tensor(x).to(sd), -1)
        e = theirs(torch.tensor(x).to(td), -1)
        assert r.dtype == sd
        np.testing.assert_allclose(r.float().numpy(), e.float().numpy(), rtol=1e-2, atol=1e-2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ours(st.tensor(x[0]))
    assert any("Implicit dimension choice" in str(m.message) for m in w)


def test_modules_and_cross_entropy_take_the_kernels():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 11)).astype(np.float32)
    y = rng.integers(0, 11, 8)
    a = st.tensor(x, requires_grad=True)
    loss = st.nn.CrossEntropyLoss()(a, st.tensor(y))
    assert type(loss.grad_fn.next_functions[0][0]).__name__ == "LogSoftmaxBackward0"
    loss.backward()
    b = torch.tensor(x, requires_grad=True)
    torch.nn.CrossEntropyLoss()(b, torch.tensor(y)).backward()
    np.testing.assert_allclose(loss.item(), 0.0 + torch.nn.CrossEntropyLoss()(
        torch.tensor(x), torch.tensor(y)).item(), rtol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert type(st.nn.Softmax(-1)(a).grad_fn).__name__ == "SoftmaxBackward0"
    assert type(st.nn.LogSoftmax(1)(a).grad_fn).__name__ == "LogSoftmaxBackward0"


@pytest.mark.skipif(not _kernels_on(), reason="numba kernels switched off")
def test_row_kernels_parallel_driver_matches_serial():
    from sparsetorch._backend import CPU
    k = ksm.rows(CPU)
    x = np.random.default_rng(5).standard_normal((300, 70)).astype(np.float32)
    g = np.random.default_rng(6).standard_normal(x.shape).astype(np.float32)
    bits = (np.int32(31), np.int32(0x7FFFFFFF))
    one, z = np.float32(1), np.float32(0)
    for log in (False, True):  # kernels: (softmax, log_softmax, backward) serial, then parallel
        a, b = np.empty_like(x), np.empty_like(x)
        k[int(log)](x, x.view(np.int32), a, a.view(np.int32), one, *bits)
        k[3 + int(log)](x, x.view(np.int32), b, b.view(np.int32), one, *bits, 7)
        np.testing.assert_array_equal(a, b)
        ga, gb = np.empty_like(x), np.empty_like(x)
        k[2](g, a, ga, log, z)
        k[5](g, a, gb, log, z, 7)
        np.testing.assert_array_equal(ga, gb)


def test_cross_entropy_class_dim_not_last():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 11, 6)).astype(np.float32)
    y = rng.integers(0, 11, (4, 6))
    a = st.tensor(x, requires_grad=True)
    loss = SF.cross_entropy(a, st.tensor(y))
    loss.backward()
    b = torch.tensor(x, requires_grad=True)
    tl = TF.cross_entropy(b, torch.tensor(y))
    tl.backward()
    np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not _kernels_on(), reason="numba kernels switched off")
def test_slab_kernels_parallel_driver_matches_serial():
    from sparsetorch._backend import CPU
    k = ksm.rows(CPU)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((9, 13, 40)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    for log in (False, True):
        a, b = np.empty_like(x), np.empty_like(x)
        k[6 + int(log)](x, a, np.float32(1))
        k[9 + int(log)](x, b, np.float32(1), 4)
        np.testing.assert_array_equal(a, b)
        ga, gb = np.empty_like(x), np.empty_like(x)
        k[8](g, a, ga, log, np.float32(0))
        k[11](g, a, gb, log, np.float32(0), 4)
        np.testing.assert_array_equal(ga, gb)
