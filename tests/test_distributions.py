"""sparsetorch.distributions against torch.distributions: values, dtypes, shapes, gradients,
KL divergences and validation errors on fixed parameters; sample moments with a fixed seed."""

import math
import warnings

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _torch_validates_args():
    """torch.compile switches torch.distributions' argument validation off for the whole process
    (tests/test_jit_compile.py calls it): the oracle validates as a fresh torch does."""
    old = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(old)

_R = np.random.default_rng(0)


def _pos(*s):
    return _R.uniform(0.5, 3.0, size=s)


def _u01(*s):
    return _R.uniform(0.1, 0.9, size=s)


def _rl(*s):
    return _R.standard_normal(s)


def _simplex(*s):
    a = _R.uniform(0.1, 1, size=s)
    return a / a.sum(-1, keepdims=True)


def _spd(n):
    a = _R.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


_TRIL = np.tril(_R.standard_normal((3, 3)), -1) + np.diag(_R.uniform(0.5, 2, 3))

# (distribution, parameters (arrays become tensors), a value for log_prob / cdf)
CASES = [
    ("Normal", {"loc": _rl(3), "scale": _pos(3)}, _rl(2, 3)),
    ("Normal", {"loc": 0.5, "scale": 2.0}, _rl(4)),
    ("Uniform", {"low": _rl(3) - 2, "high": _pos(3)}, _R.uniform(-0.4, 0.4, (2, 3))),
    ("Exponential", {"rate": _pos(3)}, _pos(2, 3)),
    ("Laplace", {"loc": _rl(3), "scale": _pos(3)}, _rl(2, 3)),
    ("LogNormal", {"loc": _rl(3), "scale": _pos(3)}, _pos(2, 3)),
    ("Gamma", {"concentration": _pos(3), "rate": _pos(3)}, _pos(2, 3)),
    ("Beta", {"concentration1": _pos(3), "concentration0": _pos(3)}, _u01(2, 3)),
    ("Dirichlet", {"concentration": _pos(2, 4)}, _simplex(2, 4)),
    ("Bernoulli", {"probs": _u01(3)}, np.array([[0., 1., 1.], [1., 0., 0.]])),
    ("Bernoulli", {"logits": _rl(3)}, np.array([0., 1., 1.])),
    ("Categorical", {"probs": _simplex(2, 4)}, np.array([[0, 3], [2, 1]])),
    ("Categorical", {"logits": _rl(2, 4)}, np.array([1, 3])),
    ("OneHotCategorical", {"probs": _simplex(2, 4)}, np.eye(4)[[1, 3]]),
    ("Poisson", {"rate": _pos(3)}, np.array([[0., 2., 5.], [1., 1., 3.]])),
    ("Binomial", {"total_count": np.array([5., 5., 5.]), "probs": _u01(3)}, np.array([[0., 2., 5.], [1., 4., 3.]])),
    ("Binomial", {"total_count": 10, "logits": _rl(3)}, np.array([0., 7., 10.])),
    ("Cauchy", {"loc": _rl(3), "scale": _pos(3)}, _rl(2, 3)),
    ("Geometric", {"probs": _u01(3)}, np.array([[0., 2., 5.], [1., 1., 3.]])),
    ("Geometric", {"logits": _rl(3)}, np.array([0., 2., 5.])),
    ("StudentT", {"df": np.array([0.8, 1.5, 4.0]), "loc": _rl(3), "scale": _pos(3)}, _rl(2, 3)),
    ("Chi2", {"df": _pos(3) * 2}, _pos(2, 3)),
    ("HalfNormal", {"scale": _pos(3)}, _pos(2, 3)),
    ("Gumbel", {"loc": _rl(3), "scale": _pos(3)}, _rl(2, 3)),
    ("HalfCauchy", {"scale": _pos(3)}, _pos(2, 3)),
    ("Pareto", {"scale": _pos(3) * 0.2, "alpha": np.array([0.8, 1.5, 3.0])}, _pos(2, 3) + 0.7),
    ("Weibull", {"scale": _pos(3), "concentration": _pos(3)}, _pos(2, 3)),
    ("RelaxedBernoulli", {"temperature": np.array(0.7), "probs": _u01(3)}, _u01(2, 3)),
    ("RelaxedOneHotCategorical", {"temperature": np.array(0.7), "logits": _rl(2, 4)}, _simplex(2, 4)),
    ("NegativeBinomial", {"total_count": np.array([3., 5., 2.]), "probs": _u01(3)}, np.array([[0., 2., 5.], [1., 4., 3.]])),
    ("OneHotCategoricalStraightThrough", {"probs": _simplex(2, 4)}, np.eye(4)[[1, 3]]),
    ("Multinomial", {"total_count": 6, "probs": _simplex(2, 4)}, np.array([[1., 2., 3., 0.], [0., 0., 6., 0.]])),
    ("MultivariateNormal", {"loc": _rl(2, 3), "covariance_matrix": _spd(3)}, _rl(4, 2, 3)),
    ("MultivariateNormal", {"loc": _rl(3), "scale_tril": _TRIL}, _rl(2, 3)),
    ("MultivariateNormal", {"loc": _rl(3), "precision_matrix": _spd(3)}, _rl(2, 3)),
]
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]


def _build(T, name, kw, dt=None, grad=False):
    dt = dt or T.float64
    args = {}
    for k, v in kw.items():
        if isinstance(v, np.ndarray):
            v = T.tensor(v, dtype=dt)
            if grad and k != "total_count":
                v.requires_grad_(True)
        args[k] = v
    return getattr(T.distributions, name)(**args), args


def _value(T, name, val, dt):
    return T.tensor(val) if name == "Categorical" else T.tensor(val, dtype=dt)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _eval(d, attr, T, name, val, dt):
    try:
        if attr in ("log_prob", "cdf"):
            return getattr(d, attr)(_value(T, name, val, dt))
        if attr == "icdf":
            return d.icdf(T.full(tuple(d.batch_shape), 0.3, dtype=dt))
        if attr in ("entropy", "perplexity", "enumerate_support"):
            return getattr(d, attr)()
        return getattr(d, attr)
    except NotImplementedError as e:
        return e


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw,val", CASES, ids=IDS)
def test_matches_torch(name, kw, val, dtype):
    dt_t, dt_s = getattr(torch, dtype), getattr(st, dtype)
    want, _ = _build(torch, name, kw, dt_t)
    got, _ = _build(st, name, kw, dt_s)
    assert tuple(got.batch_shape) == tuple(want.batch_shape)
    assert tuple(got.event_shape) == tuple(want.event_shape)
    assert got.has_rsample == want.has_rsample
    assert got.has_enumerate_support == want.has_enumerate_support
    assert repr(got).replace("sparsetorch.", "") == repr(want).replace("torch.", "")
    for attr in ("mean", "mode", "variance", "stddev", "entropy", "log_prob", "cdf", "icdf",
                 "perplexity", "enumerate_support"):
        w = _eval(want, attr, torch, name, val, dt_t)
        g = _eval(got, attr, st, name, val, dt_s)
        if isinstance(w, Exception):
            assert isinstance(g, NotImplementedError), f"{attr}: torch raises, we return {g}"
            continue
        assert not isinstance(g, Exception), f"{attr}: {g}"
        ga, wa = _np(g), _np(w)
        assert ga.shape == wa.shape and ga.dtype == wa.dtype, f"{attr}: {ga.shape} {ga.dtype} vs {wa.shape} {wa.dtype}"
        tol = 1e-5 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(ga, wa, rtol=tol * 10, atol=tol, equal_nan=True, err_msg=attr)
    for shape in ((), (5,), (2, 3)):
        w, g = want.sample(shape), got.sample(shape)
        assert tuple(g.shape) == tuple(w.shape) and g.dtype.name == str(w.dtype).split(".")[1]
        assert not g.requires_grad
        if got.has_rsample:
            assert tuple(got.rsample(shape).shape) == tuple(w.shape)
    e = (3,) + tuple(want.batch_shape)
    assert tuple(got.expand(e).sample().shape) == tuple(want.expand(e).sample().shape)


GRAD_CASES = [c for c in CASES if any(isinstance(v, np.ndarray) and k != "total_count" for k, v in c[1].items())]


@pytest.mark.parametrize("name,kw,val", GRAD_CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in GRAD_CASES])
def test_log_prob_and_entropy_gradients_match_torch(name, kw, val):
    grads = []
    for T in (torch, st):
        d, args = _build(T, name, kw, grad=True)
        params = [v for v in args.values() if getattr(v, "requires_grad", False)]
        out = d.log_prob(_value(T, name, val, T.float64)).sum()
        try:
            out = out + d.entropy().sum()
        except NotImplementedError:
            pass
        grads.append([_np(g) for g in T.autograd.grad(out, params)])
    for w, g in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


# ---- KL divergences: every pair torch registers among our distributions ----

_KL_PARAMS = {
    "Normal": lambda: {"loc": _rl(3), "scale": _pos(3)},
    "Uniform": lambda: {"low": _R.uniform(0.05, 0.3, 3), "high": _R.uniform(0.6, 0.95, 3)},
    "Exponential": lambda: {"rate": _pos(3)},
    "Laplace": lambda: {"loc": _rl(3), "scale": _pos(3)},
    "LogNormal": lambda: {"loc": _rl(3), "scale": _pos(3)},
    "Gamma": lambda: {"concentration": _pos(3), "rate": _pos(3)},
    "Beta": lambda: {"concentration1": _pos(3), "concentration0": _pos(3)},
    "Dirichlet": lambda: {"concentration": _pos(3, 4)},
    "Bernoulli": lambda: {"probs": _u01(3)},
    "Categorical": lambda: {"probs": _simplex(3, 4)},
    "OneHotCategorical": lambda: {"logits": _rl(3, 4)},
    "Poisson": lambda: {"rate": _pos(3)},
    "Binomial": lambda: {"total_count": np.array([4., 6., 5.]), "probs": _u01(3)},
    "MultivariateNormal": lambda: {"loc": _rl(3, 3), "covariance_matrix": _spd(3)},
    "Cauchy": lambda: {"loc": _rl(3), "scale": _pos(3)},
    "Geometric": lambda: {"probs": _u01(3)},
    "HalfNormal": lambda: {"scale": _pos(3)},
    "StudentT": lambda: {"df": _pos(3) + 2, "loc": _rl(3), "scale": _pos(3)},
    "Chi2": lambda: {"df": _pos(3) * 2},
    "Gumbel": lambda: {"loc": _rl(3), "scale": _pos(3)},
    "Pareto": lambda: {"scale": _pos(3) * 0.2, "alpha": _pos(3) + 1.5},
    "Weibull": lambda: {"scale": _pos(3), "concentration": _pos(3)},
    "HalfCauchy": lambda: {"scale": _pos(3)},
}


def test_kl_divergence_matches_torch():
    from torch.distributions.kl import _dispatch_kl

    checked = 0
    for pn, pf in _KL_PARAMS.items():
        for qn, qf in _KL_PARAMS.items():
            kp, kq = pf(), qf()
            if pn == qn == "Binomial":
                kq["total_count"] = np.array([4., 5., 5.])
            if pn == qn == "Uniform":
                kq = {"low": kp["low"] - _u01(3) * 0.05, "high": kp["high"] + np.array([0.01, -0.1, 0.02])}
            tp, tq = getattr(torch.distributions, pn), getattr(torch.distributions, qn)
            try:
                w = torch.distributions.kl_divergence(_build(torch, pn, kp)[0], _build(torch, qn, kq)[0])
            except NotImplementedError as e:
                with pytest.raises(NotImplementedError) as got:
                    st.distributions.kl_divergence(_build(st, pn, kp)[0], _build(st, qn, kq)[0])
                if _dispatch_kl(tp, tq) is NotImplemented or " ".join(str(e).split()).startswith("The cross"):
                    assert " ".join(str(got.value).split()) == " ".join(str(e).split())
                continue
            g = st.distributions.kl_divergence(_build(st, pn, kp)[0], _build(st, qn, kq)[0])
            assert tuple(g.shape) == tuple(w.shape), (pn, qn)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-12, err_msg=f"{pn} {qn}")
            checked += 1
    assert checked >= 40


def test_kl_gradients_and_register_kl():
    out = []
    for T in (torch, st):
        mu = T.tensor([0.3, -1.0], dtype=T.float64, requires_grad=True)
        s = T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True)
        kl = T.distributions.kl_divergence(T.distributions.Normal(mu, s), T.distributions.Laplace(0.0, 1.5))
        out.append([_np(g) for g in T.autograd.grad(kl.sum(), [mu, s])])
    for w, g in zip(*out):
        np.testing.assert_allclose(g, w, rtol=1e-10)

    class MyNormal(st.distributions.Normal):
        pass

    @st.distributions.register_kl(MyNormal, st.distributions.Normal)
    def _kl(p, q):
        return st.zeros(1)

    assert st.distributions.kl_divergence(MyNormal(0.0, 1.0), st.distributions.Normal(1.0, 1.0)).item() == 0
    # the most specific registered pair wins; a plain Normal keeps the closed form
    assert st.distributions.kl_divergence(st.distributions.Normal(0.0, 1.0), MyNormal(1.0, 1.0)).item() == 0.5


# ---- validation: torch's error types and messages ----

BAD = [
    lambda T: T.distributions.Normal(T.tensor([0., 1.]), T.tensor([1., -1.])),
    lambda T: T.distributions.Normal(0., 0.),
    lambda T: T.distributions.Bernoulli(probs=T.tensor([0.5, 1.5])),
    lambda T: T.distributions.Bernoulli(),
    lambda T: T.distributions.Bernoulli(probs=0.3, logits=0.2),
    lambda T: T.distributions.Categorical(probs=T.tensor(0.5)),
    lambda T: T.distributions.Uniform(T.tensor([0.]), T.tensor([0.])),
    lambda T: T.distributions.Gamma(T.tensor([1.]), T.tensor([0.])),
    lambda T: T.distributions.Beta(T.tensor([-1.]), T.tensor([1.])),
    lambda T: T.distributions.Dirichlet(T.tensor([1., -1.])),
    lambda T: T.distributions.Dirichlet(T.tensor(1.)),
    lambda T: T.distributions.MultivariateNormal(T.zeros(2), T.tensor([[1., 2.], [2., 1.]])),
    lambda T: T.distributions.MultivariateNormal(T.zeros(2), scale_tril=T.tensor([[1., 0.], [2., -1.]])),
    lambda T: T.distributions.MultivariateNormal(T.zeros(2)),
    lambda T: T.distributions.MultivariateNormal(T.tensor(0.), T.eye(2)),
    lambda T: T.distributions.Exponential(T.tensor([-1.])),
    lambda T: T.distributions.Poisson(T.tensor([-1.])),
    lambda T: T.distributions.Binomial(T.tensor([2.5]), probs=T.tensor([0.5])),
    lambda T: T.distributions.Normal(0., 1.).log_prob(0.5),
    lambda T: T.distributions.Normal(T.zeros(3), 1.).log_prob(T.zeros(2)),
    lambda T: T.distributions.Exponential(T.ones(3)).log_prob(T.tensor([-1., 1., 1.])),
    lambda T: T.distributions.Dirichlet(T.ones(3)).log_prob(T.ones(2)),
    lambda T: T.distributions.Bernoulli(T.tensor([0.3])).log_prob(T.tensor([0.5])),
    lambda T: T.distributions.Categorical(T.ones(3)).log_prob(T.tensor([3])),
    lambda T: T.distributions.Normal(T.zeros(2), 1.).expand((3, 2)).log_prob(T.ones(4, 2)),
    lambda T: T.distributions.kl_divergence(T.distributions.Normal(0., 1.), T.distributions.Categorical(T.ones(2))),
    lambda T: T.distributions.Independent(T.distributions.Normal(T.zeros(2), 1.), 2),
    lambda T: T.distributions.Binomial(T.tensor([10., 5.]), T.tensor([0.1, 0.3])).entropy(),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_validation_errors_match_torch(i):
    with pytest.raises(Exception) as want:
        BAD[i](torch)
    with pytest.raises(type(want.value)) as got:
        BAD[i](st)
    assert str(got.value).replace("sparsetorch.", "torch.") == str(want.value)


def test_validate_args_switches():
    D = st.distributions
    D.Normal(0.0, -1.0, validate_args=False)  # no check
    assert D.Distribution._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)
        D.Exponential(st.ones(2)).log_prob(st.tensor([-1.0, 1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        D.Normal(0.0, -1.0)


def test_constraints_like_torch():
    C, TC = st.distributions.constraints, torch.distributions.constraints
    x = np.array([[-1.0, 0.0, 0.5], [0.2, 0.3, 0.5]])
    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
                 "nonnegative_integer", "real_vector", "lower_cholesky", "lower_triangular"):
        c, tc = getattr(C, name), getattr(TC, name)
        assert repr(c) == repr(tc) and c.event_dim == tc.event_dim and c.is_discrete == tc.is_discrete
        v = x if c.event_dim < 2 else x[:, :2]
        np.testing.assert_array_equal(c.check(st.tensor(v)).numpy(), tc.check(torch.tensor(v)).numpy())
    for c, tc in ((C.interval(0.0, 2.0), TC.interval(0.0, 2.0)), (C.greater_than(1.0), TC.greater_than(1.0)),
                  (C.integer_interval(0, 3), TC.integer_interval(0, 3)), (C.half_open_interval(0, 1), TC.half_open_interval(0, 1))):
        assert repr(c) == repr(tc)
        np.testing.assert_array_equal(c.check(st.tensor(x)).numpy(), tc.check(torch.tensor(x)).numpy())
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert C.is_dependent(st.distributions.Uniform.support)
    pd = np.array([[2.0, 0.5], [0.5, 1.0]])
    assert bool(C.positive_definite.check(st.tensor(pd))) and not bool(C.positive_definite.check(st.tensor(-pd)))


def test_lazy_probs_logits_and_misc():
    D = st.distributions
    b = D.Bernoulli(logits=st.tensor([0.0, 2.0]))
    assert "probs" not in b.__dict__
    np.testing.assert_allclose(b.probs.numpy(), 1 / (1 + np.exp(-np.array([0.0, 2.0]))), rtol=1e-6)
    assert "probs" in b.__dict__
    c = D.Categorical(probs=st.tensor([1.0, 3.0]))
    np.testing.assert_allclose(c.probs.numpy(), [0.25, 0.75])
    np.testing.assert_allclose(c.logits.exp().numpy(), [0.25, 0.75], rtol=1e-6)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert tuple(D.Normal(0.0, 1.0).sample_n(4).shape) == (4,)
    ind = D.Independent(D.Normal(st.zeros(2, 3), st.ones(2, 3)), 1)
    assert tuple(ind.batch_shape) == (2,) and tuple(ind.event_shape) == (3,)
    assert tuple(ind.log_prob(st.zeros(2, 3)).shape) == (2,)
    np.testing.assert_allclose(ind.entropy().numpy(), 3 * (0.5 + 0.5 * math.log(2 * math.pi)), rtol=1e-6)
    assert D.Normal(st.zeros(2), 1.0).sample().dtype is st.float32


# ---- sampling: moments with a fixed seed, reparameterised gradients ----

# heavy tails make sample variances useless for a test: LogNormal gets small scales here
MOMENT_CASES = [c if c[0] != "LogNormal" else (c[0], {"loc": c[1]["loc"], "scale": np.array([0.2, 0.5, 0.3])}, c[2])
                for c in CASES if c[0] not in ("Categorical", "Cauchy", "StudentT", "HalfCauchy", "Pareto",
                                               "RelaxedBernoulli", "RelaxedOneHotCategorical")]


@pytest.mark.parametrize("name,kw,val", MOMENT_CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in MOMENT_CASES])
def test_sample_moments(name, kw, val):
    st.manual_seed(0)
    d, _ = _build(st, name, kw)
    n = 4000
    x = d.sample((n,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    se = np.sqrt(var / n)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * se + 1e-9), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.15)
    assert bool(d.support.check(st.tensor(x)).all())


def test_heavy_tailed_samples_by_quantiles():
    """Cauchy / StudentT moments do not exist: compare sample quantiles with the cdf instead."""
    from scipy import stats

    st.manual_seed(0)
    D = st.distributions
    loc, scale, df = st.tensor([0.5, -1.0]), st.tensor([2.0, 0.5]), np.array([1.5, 4.0])
    for d, p_one in ((D.Cauchy(loc, scale), [0.75, 0.75]),
                     (D.StudentT(st.tensor(df, dtype=st.float32), loc, scale), stats.t.cdf(1.0, df))):
        x = d.sample((8000,))
        np.testing.assert_allclose((x < loc).float().mean(0).numpy(), [0.5, 0.5], atol=0.03)
        np.testing.assert_allclose((x < loc + scale).float().mean(0).numpy(), p_one, atol=0.03)


def test_relaxed_and_straight_through_samples():
    st.manual_seed(0)
    D = st.distributions
    logits = st.tensor([0.0, 1.0, -1.0], requires_grad=True)
    x = D.RelaxedOneHotCategorical(st.tensor(0.5), logits=logits).rsample((2000,))
    np.testing.assert_allclose(x.sum(-1).detach().numpy(), np.ones(2000), rtol=1e-5)
    # at low temperature the argmax frequencies approach softmax(logits)
    freq = np.bincount(x.detach().numpy().argmax(-1), minlength=3) / 2000
    np.testing.assert_allclose(freq, np.exp([0, 1, -1]) / np.exp([0, 1, -1]).sum(), atol=0.04)
    (g,) = st.autograd.grad((x[:, 1]).mean(), [logits])
    assert g[1].item() > 0 > g[0].item()
    b = D.RelaxedBernoulli(st.tensor(0.3), probs=st.tensor([0.2, 0.7])).sample((4000,)).numpy()
    assert ((b > 0) & (b < 1)).all()
    np.testing.assert_allclose((b > 0.5).mean(0), [0.2, 0.7], atol=0.03)
    p = st.tensor([0.2, 0.8], requires_grad=True)
    y = D.OneHotCategoricalStraightThrough(probs=p).rsample((3,))
    assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    (g,) = st.autograd.grad((y * st.tensor([1.0, 2.0])).sum(), [p])
    tp = torch.tensor([0.2, 0.8], requires_grad=True)  # the gradient does not depend on the draw
    ty = torch.distributions.OneHotCategoricalStraightThrough(probs=tp).rsample((3,))
    (tg,) = torch.autograd.grad((ty * torch.tensor([1.0, 2.0])).sum(), [tp])
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)


def test_categorical_frequencies():
    st.manual_seed(0)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    x = st.distributions.Categorical(probs=st.tensor(p)).sample((8000,)).numpy()
    assert x.dtype == np.int64
    np.testing.assert_allclose(np.bincount(x, minlength=4) / 8000, p, atol=0.02)


def test_rsample_gradients_location_scale():
    st.manual_seed(0)
    D = st.distributions
    loc = st.tensor([0.5, -1.0], dtype=st.float64, requires_grad=True)
    scale = st.tensor([2.0, 0.5], dtype=st.float64, requires_grad=True)
    for cls in (D.Normal, D.Laplace):
        x = cls(loc, scale).rsample((3,))
        gl, gs = st.autograd.grad(x.sum(), [loc, scale])
        np.testing.assert_allclose(gl.numpy(), [3.0, 3.0])
        np.testing.assert_allclose(gs.numpy(), ((x - loc) / scale).sum(0).detach().numpy(), rtol=1e-10)
    rate = st.tensor([2.0, 0.5], dtype=st.float64, requires_grad=True)
    x = D.Exponential(rate).rsample()
    (g,) = st.autograd.grad(x.sum(), [rate])
    np.testing.assert_allclose(g.numpy(), (-x / rate).detach().numpy(), rtol=1e-10)
    L = st.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=st.float64, requires_grad=True)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((4,))
    gl, gL = st.autograd.grad(x.sum(), [loc, L])
    eps = st.linalg.solve_triangular(L.detach(), (x - loc).detach().mT, upper=False).mT
    np.testing.assert_allclose(gl.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(gL.numpy(), np.ones((2, 1)) * eps.sum(0).numpy()[None, :], rtol=1e-8)  # as torch: L @ eps


def test_gamma_rsample_gradient_is_torchs_standard_gamma_grad():
    st.manual_seed(0)
    a = st.tensor([0.3, 1.0, 2.5, 10.0], dtype=st.float64, requires_grad=True)
    rate = st.tensor([1.0, 2.0, 0.5, 3.0], dtype=st.float64)
    x = st.distributions.Gamma(a, rate).rsample()
    (g,) = st.autograd.grad(x.sum(), [a])
    z = (x * rate).detach()  # the standard gamma draw
    want = torch._standard_gamma_grad(torch.tensor(a.detach().numpy()), torch.tensor(z.numpy())) / torch.tensor(rate.numpy())
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=2e-3)
    assert st.distributions.Gamma(st.tensor([2.0]), st.tensor([1.0])).rsample().dtype is st.float32


def test_beta_dirichlet_rsample_gradients_in_expectation():
    """d/da E[X] for X ~ Beta(a, b) is b / (a + b)^2: the mean of the per-draw gradients."""
    st.manual_seed(0)
    a = st.tensor(2.0, dtype=st.float64, requires_grad=True)
    b = st.tensor(3.0, dtype=st.float64, requires_grad=True)
    x = st.distributions.Beta(a, b).rsample((20000,))
    ga, gb = st.autograd.grad(x.mean(), [a, b])
    np.testing.assert_allclose(ga.item(), 3.0 / 25, rtol=0.05)
    np.testing.assert_allclose(gb.item(), -2.0 / 25, rtol=0.05)
    c = st.tensor([1.0, 2.0, 3.0], dtype=st.float64, requires_grad=True)
    x = st.distributions.Dirichlet(c).rsample((20000,))
    (g,) = st.autograd.grad(x[:, 0].mean(), [c])  # E[X0] = c0 / sum(c)
    np.testing.assert_allclose(g.numpy(), [5.0 / 36, -1.0 / 36, -1.0 / 36], rtol=0.1, atol=3e-3)


def test_no_float64_leak_from_float32():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, kw, val in CASES:
            d, _ = _build(st, name, kw, st.float32)
            assert d.sample().dtype in (st.float32, st.int64), name
            assert d.log_prob(_value(st, name, val, st.float32)).dtype is st.float32, name


def test_private_samplers_like_torch():
    st.manual_seed(0)
    a = st.tensor([0.5, 2.0, 7.0])
    x = st._standard_gamma(a.expand(5000, 3).contiguous())
    assert x.dtype is st.float32 and bool((x > 0).all())
    np.testing.assert_allclose(x.numpy().mean(0), a.numpy(), rtol=0.1)
    d = st._sample_dirichlet(st.ones(4, 3))
    np.testing.assert_allclose(d.sum(-1).numpy(), np.ones(4), rtol=1e-6)
    alpha, z = np.array([0.7, 2.0, 15.0]), np.array([0.3, 1.5, 14.0])
    np.testing.assert_allclose(st._standard_gamma_grad(st.tensor(alpha), st.tensor(z)).numpy(),
                               torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(z)).numpy(), rtol=2e-3)


# ---- transforms and TransformedDistribution ----

def _transforms(T, loc):
    tr = T.distributions.transforms
    return [
        [tr.TanhTransform()],
        [tr.AffineTransform(loc, 2.0), tr.SigmoidTransform()],
        [tr.ExpTransform(), tr.PowerTransform(T.tensor(0.5, dtype=T.float64))],
        [tr.SoftplusTransform(), tr.AffineTransform(1.0, -3.0)],
        [tr.ComposeTransform([tr.AffineTransform(0.5, 0.25), tr.ExpTransform()])],
        [tr.ExpTransform().inv.inv, tr.AffineTransform(loc, T.tensor([1.0, -2.0, 0.5], dtype=T.float64))],
    ]


@pytest.mark.parametrize("k", range(6))
def test_transformed_distribution_matches_torch(k):
    loc_np, scale_np = np.array([0.1, -0.5, 0.3]), np.array([0.5, 1.0, 0.8])
    res = []
    for T in (torch, st):
        loc = T.tensor(loc_np, requires_grad=True)
        scale = T.tensor(scale_np, requires_grad=True)
        base = T.distributions.Normal(loc, scale)
        d = T.distributions.TransformedDistribution(base, _transforms(T, loc.detach())[k])
        if T is torch:
            torch.manual_seed(0)
            y = d.sample((4,))
            y_np = y.numpy()
        y = T.tensor(y_np)
        lp = d.log_prob(y)
        grads = T.autograd.grad(lp.sum(), [loc, scale])
        u = T.full((3,), 0.3, dtype=T.float64)
        out = [lp, *grads, d.cdf(y), d.icdf(u)]
        res.append(([_np(o) for o in out], tuple(d.batch_shape), tuple(d.event_shape),
                    tuple(d.sample((2,)).shape), bool(d.support.check(y).all())))
    (w, *wshape), (g, *gshape) = res
    assert wshape == gshape
    for a, b in zip(g, w):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_transforms_api():
    tr, ttr = st.distributions.transforms, torch.distributions.transforms
    x = np.array([-1.0, 0.2, 2.0])
    for t, tt in ((tr.TanhTransform(), ttr.TanhTransform()), (tr.SigmoidTransform(), ttr.SigmoidTransform()),
                  (tr.AffineTransform(1.0, -2.0), ttr.AffineTransform(1.0, -2.0))):
        y, ty = t(st.tensor(x)), tt(torch.tensor(x))
        np.testing.assert_allclose(y.numpy(), ty.numpy())
        np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-10)
        np.testing.assert_allclose(t.log_abs_det_jacobian(st.tensor(x), y).numpy(),
                                   tt.log_abs_det_jacobian(torch.tensor(x), ty).numpy())
        assert t.sign == tt.sign and repr(t) == repr(tt) and t.inv.inv is t
        assert t == type(t)(*(() if not isinstance(t, tr.AffineTransform) else (1.0, -2.0)))
    c = tr.TanhTransform(cache_size=1)
    y = c(st.tensor(x))
    assert c.inv(y) is not None and c.inv(y).shape == y.shape
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        tr.ExpTransform(cache_size=2)
    a = tr.AffineTransform(st.zeros(3), st.tensor([1.0, 2.0, 4.0]), event_dim=1)
    assert a.domain.event_dim == 1
    np.testing.assert_allclose(a.log_abs_det_jacobian(st.zeros(2, 3), st.zeros(2, 3)).numpy(), [math.log(8)] * 2)
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        st.distributions.TransformedDistribution(st.distributions.Normal(0.0, 1.0), "exp")
    p = st.distributions.TransformedDistribution(st.distributions.Normal(0.0, 1.0), [tr.ExpTransform()])
    q = st.distributions.TransformedDistribution(st.distributions.Normal(1.0, 2.0), [tr.ExpTransform()])
    np.testing.assert_allclose(st.distributions.kl_divergence(p, q).item(),
                               st.distributions.kl_divergence(st.distributions.Normal(0.0, 1.0),
                                                              st.distributions.Normal(1.0, 2.0)).item())


def test_mixture_same_family_matches_torch():
    r = np.random.default_rng(0)
    lg, loc, sc = r.standard_normal((2, 3)), r.standard_normal((2, 3, 4)), r.uniform(0.5, 2, (2, 3, 4))
    v = r.standard_normal((5, 2, 4))
    out = []
    for T in (torch, st):
        D = T.distributions
        logits = T.tensor(lg, requires_grad=True)
        m = D.MixtureSameFamily(D.Categorical(logits=logits), D.Independent(D.Normal(T.tensor(loc), T.tensor(sc)), 1))
        lp = m.log_prob(T.tensor(v))
        (g,) = T.autograd.grad(lp.sum(), logits)
        m1 = D.MixtureSameFamily(D.Categorical(logits=T.tensor(lg[0])), D.Normal(T.tensor(loc[0, :, 0]), T.tensor(sc[0, :, 0])))
        out.append(([_np(x) for x in (lp, g, m.mean, m.variance, m1.cdf(T.tensor([[0.1], [0.5]])))],
                    tuple(m.sample((3,)).shape), tuple(m.batch_shape), tuple(m.event_shape),
                    tuple(m1.sample((4,)).shape), repr(m1).replace("sparsetorch.", "").replace("torch.", "")))
    (w, *wrest), (g, *grest) = out
    assert wrest == grest
    for a, b in zip(g, w):
        np.testing.assert_allclose(a, b, rtol=1e-9)
    st.manual_seed(0)
    D = st.distributions
    m = D.MixtureSameFamily(D.Categorical(probs=st.tensor([0.3, 0.7])), D.Normal(st.tensor([-2.0, 3.0]), st.tensor([0.5, 1.0])))
    x = m.sample((8000,))
    np.testing.assert_allclose(x.mean().item(), m.mean.item(), atol=0.1)
    np.testing.assert_allclose(x.var().item(), m.variance.item(), rtol=0.05)
