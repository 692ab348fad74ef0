"""optim.LBFGS: torch's iterates (fixed step and strong-Wolfe line search) on Rosenbrock and a
logistic regression, state_dict round trip, argument checks."""

import copy

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _rosen(lib, xy):
    return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2


def _run(lib, opt_kw, steps, problem, dtype_name):
    dtype = getattr(lib, dtype_name)
    if problem == "rosenbrock":
        params = [lib.tensor([-1.5, 2.0], dtype=dtype, requires_grad=True)]

        def loss_fn():
            return _rosen(lib, params[0])
    else:
        rng = np.random.default_rng(0)
        X = lib.tensor(rng.standard_normal((40, 3)), dtype=dtype)
        y = lib.tensor((rng.random(40) > 0.5).astype(np.float64), dtype=dtype)
        params = [lib.zeros(3, dtype=dtype, requires_grad=True),
                  lib.zeros(1, dtype=dtype, requires_grad=True)]

        def loss_fn():
            z = X @ params[0] + params[1]
            return lib.nn.functional.binary_cross_entropy_with_logits(z, y) + \
                0.01 * (params[0] ** 2).sum()
    opt = lib.optim.LBFGS(params, **opt_kw)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        trace.append((float(loss.detach()), np.concatenate([p.detach().numpy().ravel() for p in params])))
    st_ = opt.state[params[0]]
    return trace, st_["func_evals"], st_["n_iter"], opt


@pytest.mark.parametrize("problem", ["rosenbrock", "logistic"])
@pytest.mark.parametrize("kw", [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "max_iter": 7, "history_size": 3},
    {"line_search_fn": "strong_wolfe", "max_iter": 10, "history_size": 4, "max_eval": 30},
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lbfgs_matches_torch(problem, kw, dtype):
    if problem == "rosenbrock" and "line_search_fn" not in kw and "lr" not in kw:
        kw = dict(kw, lr=0.01)  # a unit fixed step diverges on Rosenbrock, in torch too
    # float32 Rosenbrock: bit-equal for ~9 iterations, then rounding drifts (ulps, amplified near
    # the ill-conditioned minimum), so only the first step is compared there
    steps = 1 if problem == "rosenbrock" and dtype == "float32" else 4
    ours, fe, ni, _ = _run(st, kw, steps, problem, dtype)
    theirs, fe_t, ni_t, _ = _run(torch, kw, steps, problem, dtype)
    tol = 1e-9 if dtype == "float64" else 2e-4
    for (l1, x1), (l2, x2) in zip(ours, theirs):
        np.testing.assert_allclose(l1, l2, rtol=tol, atol=tol)
        np.testing.assert_allclose(x1, x2, rtol=tol, atol=tol)
        assert x1.dtype == np.dtype(dtype)
    if dtype == "float64":  # float32 stopping tests (|f change| < 1e-9) compare rounding noise
        assert (fe, ni) == (fe_t, ni_t)


def test_lbfgs_converges_rosenbrock():
    trace, *_ = _run(st, {"line_search_fn": "strong_wolfe", "max_iter": 50}, 3, "rosenbrock",
                     "float64")
    np.testing.assert_allclose(trace[-1][1], [1.0, 1.0], atol=1e-5)


def test_lbfgs_state_dict_roundtrip():
    kw = {"line_search_fn": "strong_wolfe", "max_iter": 3}
    _, _, _, opt = _run(st, kw, 2, "logistic", "float64")
    sd = opt.state_dict()
    assert set(sd["state"][0]) >= {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro",
                                   "H_diag", "prev_flat_grad", "prev_loss", "al"}
    assert sd["param_groups"][0]["history_size"] == 100
    assert sd["param_groups"][0]["max_eval"] == 3 * 5 // 4
    params = [p.detach().clone().requires_grad_() for p in opt._params]
    opt2 = st.optim.LBFGS(params, **kw)
    opt2.load_state_dict(copy.deepcopy(sd))
    s2 = opt2.state[params[0]]
    assert s2["n_iter"] == sd["state"][0]["n_iter"]
    assert len(s2["old_dirs"]) == len(sd["state"][0]["old_dirs"])
    np.testing.assert_allclose(s2["d"].numpy(), sd["state"][0]["d"].numpy())


def test_lbfgs_arguments():
    p = [st.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        st.optim.LBFGS(p, lr=-1)
    with pytest.raises(ValueError, match="per-parameter options"):
        st.optim.LBFGS([{"params": p}, {"params": [st.zeros(1, requires_grad=True)]}])
    opt = st.optim.LBFGS(p, line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((p[0] - 1) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    d = st.optim.LBFGS(p).defaults
    assert d == torch.optim.LBFGS([torch.zeros(2, requires_grad=True)]).defaults
