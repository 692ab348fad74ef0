"""sparsetorch.special against torch.special: values, dtypes, gradients, sparse inputs, errors."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")

X = np.linspace(-2.7, 2.9, 13)
POS = np.abs(X) + 0.3
UNIT = np.linspace(0.03, 0.97, 13)

# name -> input values (torch's domain for the function)
UNARY = {
    "airy_ai": X, "bessel_j0": X, "bessel_j1": X, "bessel_y0": POS, "bessel_y1": POS, "digamma": POS,
    "psi": POS, "entr": POS, "erf": X, "erfc": X, "erfcx": X, "erfinv": UNIT * 2 - 1, "exp2": X,
    "expit": X, "expm1": X, "gammaln": POS, "i0": X, "i0e": X, "i1": X, "i1e": X, "log1p": POS,
    "log_ndtr": X * 3, "logit": UNIT, "modified_bessel_i0": X, "modified_bessel_i1": X,
    "modified_bessel_k0": POS, "modified_bessel_k1": POS, "ndtr": X, "ndtri": UNIT,
    "scaled_modified_bessel_k0": POS, "scaled_modified_bessel_k1": POS, "sinc": X,
    "spherical_bessel_j0": X, "round": X,
}
BINARY = {"xlog1py": (X, POS), "xlogy": (X, POS), "zeta": (POS + 1.2, POS), "gammainc": (POS, POS + 0.5),
          "gammaincc": (POS, POS + 0.5)}
# torch differentiates these binary ops w.r.t. 'other' only
OTHER_ONLY = {"zeta", "gammainc", "gammaincc"}


def _pair(a, dtype):
    return st.tensor(a, dtype=getattr(st, dtype)), torch.tensor(a, dtype=getattr(torch, dtype))


def _same(got, want, dtype, tol=None):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    tol = tol or (2e-5 if dtype == "float32" else 1e-10)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


def test_all_names_of_torch_special():
    mine = set(st.special.__all__)
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n))
              and n not in {"Tensor", "torch"}}
    assert theirs <= mine, sorted(theirs - mine)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_dtypes(name, dtype):
    a, t = _pair(UNARY[name], dtype)
    # torch's airy_ai is off by ~2e-5 (relative) near its negative zeros; scipy's agrees with mpmath
    _same(getattr(st.special, name)(a), getattr(torch.special, name)(t), dtype, 1e-4 if name == "airy_ai" else None)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"round"}))
def test_integer_input_promotes_to_default_float(name):
    a, t = _pair(np.array([1, 2, 3]), "int64")
    want = getattr(torch.special, name)(t)
    got = getattr(st.special, name)(a)
    assert got.dtype is st.float32 and want.dtype is torch.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_dtypes(name, dtype):
    x, y = BINARY[name]
    (a, ta), (b, tb) = _pair(x, dtype), _pair(y, dtype)
    _same(getattr(st.special, name)(a, b), getattr(torch.special, name)(ta, tb), dtype)
    if name in ("gammainc", "gammaincc"):  # torch takes no Python number here
        with pytest.raises(TypeError, match="must be Tensor"):
            getattr(st.special, name)(a, 2.0)
    else:
        _same(getattr(st.special, name)(a, 2.0), getattr(torch.special, name)(ta, 2.0), dtype)


def _grads(fn_st, fn_t, arrays, which):
    ours = [st.tensor(a, dtype=st.float64, requires_grad=i in which) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=i in which) for i, a in enumerate(arrays)]
    g = st.autograd.grad(fn_st(*ours).sum(), [ours[i] for i in which])
    tg = torch.autograd.grad(fn_t(*theirs).sum(), [theirs[i] for i in which])
    for u, v in zip(g, tg):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-8, atol=1e-10, equal_nan=True)


DIFFERENTIABLE = ["digamma", "psi", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
                  "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "ndtr", "ndtri", "sinc"]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_unary_gradients_match_torch(name):
    _grads(getattr(st.special, name), getattr(torch.special, name), [UNARY[name]], (0,))


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_i1_gradient_at_zero_is_one_half(name):
    _grads(getattr(st.special, name), getattr(torch.special, name), [np.array([0.0, 1.0])], (0,))


def test_log_ndtr_gradient_is_finite_far_in_the_left_tail():
    x = st.tensor([-40.0, -20.0], dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(st.special.log_ndtr(x).sum(), [x])
    tx = torch.tensor([-40.0, -20.0], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.special.log_ndtr(tx).sum(), [tx])
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-8)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradients_match_torch(name):
    which = (1,) if name in OTHER_ONLY else (0, 1)
    _grads(getattr(st.special, name), getattr(torch.special, name), list(BINARY[name]), which)


def test_xlog1py_gradient_is_zero_where_input_is_zero():
    _grads(st.special.xlog1py, torch.special.xlog1py, [np.array([0.0, 2.0]), np.array([-1.0, 0.5])], (0,))


@pytest.mark.parametrize("name", sorted(OTHER_ONLY))
def test_first_argument_is_not_differentiable(name):
    a = st.tensor(BINARY[name][0], dtype=st.float64, requires_grad=True)
    r = getattr(st.special, name)(a, st.tensor(BINARY[name][1], dtype=st.float64))
    with pytest.raises(NotImplementedError, match="derivative for"):
        r.sum().backward()


@pytest.mark.parametrize("name", ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                                  "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                                  "modified_bessel_k1", "scaled_modified_bessel_k0",
                                  "scaled_modified_bessel_k1", "spherical_bessel_j0"])
def test_bessel_results_do_not_require_grad_as_torch(name):
    a = st.tensor(POS, requires_grad=True)
    t = torch.tensor(POS, requires_grad=True)
    assert getattr(st.special, name)(a).requires_grad is getattr(torch.special, name)(t).requires_grad is False


def test_multigammaln_values_gradients_and_errors():
    x = POS + 2.0
    for p in (1, 2, 4):
        _grads(lambda a, p=p: st.special.multigammaln(a, p), lambda a, p=p: torch.special.multigammaln(a, p),
               [x], (0,))
        a, t = _pair(x, "float32")
        _same(st.special.multigammaln(a, p), torch.special.multigammaln(t, p), "float32")
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        st.special.multigammaln(st.ones(3), 0)
    assert st.mvlgamma(st.tensor([3, 4]), 2).dtype is st.float32


def test_aliases_and_softmax_family():
    assert st.special.expit is st.sigmoid and st.special.gammaln is st.lgamma
    assert st.special.psi is st.special.digamma is st.digamma
    a, t = _pair(np.arange(12.0).reshape(3, 4) / 5, "float32")
    _same(st.special.softmax(a, 1), torch.special.softmax(t, 1), "float32")
    _same(st.special.log_softmax(a, 0, dtype=st.float64), torch.special.log_softmax(t, 0, dtype=torch.float64),
          "float64")
    _same(st.special.logsumexp(a, 1, keepdim=True), torch.special.logsumexp(t, 1, keepdim=True), "float32")
    _same(st.special.polygamma(2, a + 1), torch.special.polygamma(2, t + 1), "float32")
    _same(st.special.round(a * 3, decimals=1), torch.special.round(t * 3, decimals=1), "float32")


def test_top_level_names_as_torch():
    a, t = _pair(X, "float32")
    _same(st.i0(a), torch.i0(t), "float32")
    x = a.clone()
    assert st.i0_(x) is x
    _same(x, torch.i0(t), "float32")
    (b, tb), (c, tc) = _pair(POS, "float32"), _pair(POS + 1, "float32")
    _same(st.igamma(b, c), torch.igamma(tb, tc), "float32")
    _same(st.igammac(b, c), torch.igammac(tb, tc), "float32")


def test_out_argument():
    a, t = _pair(X, "float32")
    out = st.empty(len(X))
    r = st.special.ndtr(a, out=out)
    assert r is out
    _same(out, torch.special.ndtr(t), "float32")


@pytest.mark.parametrize("name", ["entr", "i1", "i1e", "bessel_j1", "modified_bessel_i1"])
def test_zero_preserving_functions_work_on_sparse_inputs(name):
    d = st.tensor([[0.0, 1.5, 0.0], [0.7, 0.0, 2.0]])
    f = getattr(st.special, name)
    for s in (d.to_sparse(), d.to_sparse_csr()):
        r = f(s)
        assert r.layout is s.layout
        np.testing.assert_allclose(r.to_dense().numpy(), f(d).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["ndtr", "i0", "erfcx", "bessel_j0", "airy_ai"])
def test_functions_with_f0_nonzero_refuse_sparse_inputs(name):
    s = st.tensor([[0.0, 1.5], [0.7, 0.0]]).to_sparse()
    with pytest.raises(NotImplementedError, match="to_dense"):
        getattr(st.special, name)(s)


def test_errors_are_torch_types():
    with pytest.raises(TypeError):
        st.special.entr([1.0])
    with pytest.raises(TypeError):
        st.special.zeta(2.0, 3.0)
    with pytest.raises(RuntimeError):
        st.special.xlog1py(st.ones(2, 3), st.ones(4))
    with pytest.raises(TypeError):
        st.special.multigammaln(st.ones(3) * 3, 1.5)


POLYNOMIALS = [n for n in st.special.__all__ if "polynomial" in n]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name, dtype):
    f, tf = getattr(st.special, name), getattr(torch.special, name)
    a, t = _pair(np.linspace(-1.3, 1.3, 11), dtype)
    tol = 1e-4 if dtype == "float32" else 1e-9
    for n in (0, 1, 2, 3, 6, 9, -1, 2.7):  # torch truncates a fractional degree; n < 0 gives 0
        _same(f(a, n), tf(t, n), dtype, tol)
    degrees = np.array([0, 1, 2, 5, -2, 3.5, 8, 1, 0, 4, 2])
    (n, tn) = _pair(degrees, dtype)
    _same(f(a, n), tf(t, tn), dtype, tol)
    _same(f(0.25, n), tf(0.25, tn), dtype, tol)
    (i, ti), (k, tk) = _pair(np.array([1, 2]), "int64"), _pair(np.array([2, 3]), "int64")
    _same(f(i, k), tf(ti, tk), "float32")


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_are_not_differentiable_and_need_a_tensor(name):
    x = st.tensor([0.5, 0.25], requires_grad=True)
    assert getattr(st.special, name)(x, 3).requires_grad is False
    with pytest.raises(TypeError):
        getattr(st.special, name)(0.5, 3)


# xlogy is the top-level op of _ops/pointwise.py, whose payload leak is reported to its owner
@pytest.mark.parametrize("name", sorted(set(st.special.__all__) - {"xlogy"}))
def test_float32_payload_stays_float32_with_python_number_arguments(name):
    """scipy computes in float64 for a Python-number operand; the stored array must not."""
    f = getattr(st.special, name)
    a = st.tensor([0.3, 0.6])
    if name in UNARY or name == "multigammaln":
        r = f(a + 2, 2) if name == "multigammaln" else f(a)
    elif name in ("softmax", "log_softmax", "logsumexp"):
        r = f(a, 0)
    elif name == "polygamma":
        r = f(1, a)
    elif name in ("gammainc", "gammaincc"):
        r = f(a, a + 1)
    else:
        r = f(a + 2, 3)
    assert r.dtype is st.float32 and r.numpy().dtype == np.float32


def test_tensor_methods_of_the_top_level_special_functions():
    torch = pytest.importorskip("torch")
    x, t = st.tensor([0.5, 1.5, 2.5]), torch.tensor([0.5, 1.5, 2.5])
    for name, args in (("i0", ()), ("igamma", ("self",)), ("igammac", ("self",)),
                       ("mvlgamma", (1,))):
        a = [x if v == "self" else v for v in args]
        b = [t if v == "self" else v for v in args]
        np.testing.assert_allclose(getattr(x, name)(*a).numpy(), getattr(t, name)(*b).numpy(),
                                   rtol=1e-5)
    y = st.tensor([0.5, 1.5])
    assert y.i0_() is y and abs(y[0].item() - 1.0634835) < 1e-5
