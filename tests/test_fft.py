"""sparsetorch.fft against torch.fft: values, dtypes, gradients (torch's complex convention)."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 6))
C = _RNG.standard_normal((3, 5)) + 1j * _RNG.standard_normal((3, 5))

CASES = [
    ("fft", A, {}), ("fft", C, {"n": 7}), ("ifft", C, {"norm": "ortho"}),
    ("rfft", A, {"n": 5, "norm": "forward"}), ("rfft", A, {}), ("irfft", C, {}),
    ("irfft", C, {"n": 7, "dim": 0}), ("irfft", C, {"n": 4}), ("hfft", C, {}),
    ("hfft", C, {"n": 5, "norm": "ortho"}), ("ihfft", A, {}), ("fft2", A, {}),
    ("ifft2", C, {"s": (4, 4)}), ("rfft2", A, {}), ("irfft2", C, {}), ("fftn", C, {"dim": (1, 0)}),
    ("rfftn", A, {"s": (2, 8)}), ("irfftn", C, {"s": (3, 9)}), ("hfft2", C, {}), ("ihfft2", A, {}),
    ("hfftn", C, {"norm": "forward"}), ("ihfftn", A, {"dim": (0,)}),
    # real input to complex-input transforms (promoted; the gradient stays real)
    ("irfft", A, {}), ("hfft", A, {"n": 6}), ("ifft2", A, {"norm": "ortho"}), ("irfftn", A, {"s": (3, 5)}),
]
IDS = [f"{n}-{i}" for i, (n, _, _) in enumerate(CASES)]


def _np(t):
    t = t.detach()
    return (t.resolve_conj() if isinstance(t, torch.Tensor) else t).numpy()


@pytest.mark.parametrize("name,x,kw", CASES, ids=IDS)
@pytest.mark.parametrize("single", [True, False])
def test_values_and_dtypes(name, x, kw, single):
    if single:
        x = x.astype(np.complex64 if x.dtype.kind == "c" else np.float32)
    want = getattr(torch.fft, name)(torch.from_numpy(x), **kw)
    got = getattr(st.fft, name)(st.from_numpy(x), **kw)
    assert got.dtype.name == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), _np(want), rtol=1e-4 if single else 1e-10, atol=1e-4 if single else 1e-10)


def _grad(T, name, x, kw, create_graph=False):
    xt = T.tensor(x, requires_grad=True)
    y = getattr(T.fft, name)(xt, **kw)
    if y.dtype.is_complex:
        y = T.view_as_real(y.resolve_conj() if T is torch else y)
    w = T.tensor(np.random.default_rng(5).standard_normal(tuple(y.shape)))
    (g,) = T.autograd.grad((y * w).sum(), xt, create_graph=create_graph)
    return xt, g


@pytest.mark.parametrize("name,x,kw", CASES, ids=IDS)
def test_gradients_match_torch(name, x, kw):
    _, want = _grad(torch, name, x, kw)
    _, got = _grad(st, name, x, kw)
    assert got.dtype.name == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(got.numpy(), _np(want), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["rfft", "irfft", "fft2", "hfft"])
def test_double_backward(name):
    from sparsetorch.autograd import gradgradcheck
    x = st.tensor(A if name in ("rfft", "fft2") else C, requires_grad=True)

    def f(t):
        y = getattr(st.fft, name)(t)
        return st.view_as_real(y) if y.dtype.is_complex else y
    assert gradgradcheck(f, (x,))


def test_freq_and_shift():
    for n, d in ((5, 1.0), (6, 0.1), (1, 3.0), (0, 1.0)):
        for f in ("fftfreq", "rfftfreq"):
            got, want = getattr(st.fft, f)(n, d), getattr(torch.fft, f)(n, d)
            assert got.dtype is st.float32
            np.testing.assert_allclose(got.numpy(), want.numpy(), equal_nan=True)
    assert st.fft.fftfreq(4, dtype=st.float64).dtype is st.float64
    assert st.fft.fftfreq(4, requires_grad=True).requires_grad
    a = np.arange(30).reshape(2, 3, 5)
    for dim in (None, 0, -1, (0, 2)):
        for f in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(getattr(st.fft, f)(st.from_numpy(a), dim=dim).numpy(),
                                          getattr(torch.fft, f)(torch.from_numpy(a), dim=dim).numpy())


def test_integer_input_and_out():
    got = st.fft.fft(st.arange(4))
    assert got.dtype is st.complex64
    out = st.empty(4, dtype=st.complex64)
    assert st.fft.fft(st.ones(4), out=out) is out
    np.testing.assert_allclose(out.numpy(), [4, 0, 0, 0])


def test_errors_match_torch():
    x = np.ones((4, 4), np.float32)
    bad = [("fft", {"norm": "bad"}), ("fft", {"dim": 3}), ("fft", {"n": 0}), ("irfft", {"n": -2}),
           ("fftn", {"s": (2, 3, 4)}), ("fftn", {"dim": (0, 0)}), ("fft2", {"s": (1,)})]
    for name, kw in bad:
        with pytest.raises(Exception) as want:
            getattr(torch.fft, name)(torch.from_numpy(x), **kw)
        with pytest.raises(type(want.value)) as got:
            getattr(st.fft, name)(st.from_numpy(x), **kw)
        assert str(want.value).split("(")[0][:20] in str(got.value)
    for name in ("rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"):
        with pytest.raises(RuntimeError) as want:
            getattr(torch.fft, name)(torch.ones(4, 4, dtype=torch.complex64))
        with pytest.raises(RuntimeError) as got:
            getattr(st.fft, name)(st.ones(4, 4, dtype=st.complex64))
        assert str(got.value) == str(want.value)
