"""Set ops (unique, bincount, searchsorted, ...) and the top-level utilities/statistics of
_ops/predicates.py, arranging.py, quantile_cov.py and distance.py: parity with torch (values, dtypes, shapes, error types),
gradients against torch's, the predicates and global switches, and sparse rejection."""

import math

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import gradcheck, gradgradcheck

NAN = float("nan")

# Each case is run as ``f(torch)`` and ``f(sparsetorch)``; results must agree exactly in dtype
# and shape, and in value (NaN == NaN).
CASES = {
    "unique": lambda t: t.unique(t.tensor([3, 1, 2, 3, 1, 5]), return_inverse=True, return_counts=True),
    "unique-unsorted": lambda t: t.unique(t.tensor([3, 1, 2, 3]), sorted=False),
    "unique-dim0": lambda t: t.unique(t.tensor([[1, 2], [1, 2], [0, 3]]), dim=0,
                                      return_inverse=True, return_counts=True),
    "unique-dim1": lambda t: t.unique(t.tensor([[1, 2, 1], [1, 2, 1]]), dim=1, return_counts=True),
    "unique-nan": lambda t: t.unique(t.tensor([1.0, NAN, NAN, 1.0])),
    "unique-bool": lambda t: t.unique(t.tensor([True, False, True])),
    "unique-0d": lambda t: t.unique(t.tensor(3), return_inverse=True),
    "unique-method": lambda t: t.tensor([2.0, 2.0, 1.0]).unique(return_counts=True),
    "unique_consecutive": lambda t: t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1, 2]),
                                                         return_inverse=True, return_counts=True),
    "bincount": lambda t: t.bincount(t.tensor([0, 1, 1, 3]), minlength=6),
    "bincount-empty": lambda t: t.bincount(t.tensor([], dtype=t.int64)),
    "bincount-w32": lambda t: t.bincount(t.tensor([0, 1, 1, 3]), t.tensor([1.0, 2, 3, 4])),
    "bincount-w64": lambda t: t.bincount(t.tensor([0, 1, 1]), t.tensor([1.0, 2, 3], dtype=t.float64)),
    "bincount-wint": lambda t: t.bincount(t.tensor([0, 1, 1]), t.tensor([1, 2, 3])),
    "searchsorted-scalar": lambda t: t.searchsorted(t.tensor([1, 3, 5, 7]), 3),
    "searchsorted-right": lambda t: t.searchsorted(t.tensor([1.0, 3, 5, 7]), t.tensor([3, 6]), right=True),
    "searchsorted-batched": lambda t: t.searchsorted(t.tensor([[1, 3, 5], [2, 4, 6]]), t.tensor([[3], [3]])),
    "searchsorted-int32": lambda t: t.searchsorted(t.tensor([1.0, 2]), t.tensor([[1.5]]), out_int32=True),
    "searchsorted-sorter": lambda t: t.searchsorted(t.tensor([3.0, 1, 2]), t.tensor([2.5]),
                                                    sorter=t.tensor([1, 2, 0])),
    "bucketize": lambda t: t.bucketize(t.tensor([[1, 5], [3, 9]]), t.tensor([1, 3, 5, 7])),
    "bucketize-scalar": lambda t: t.bucketize(3, t.tensor([1, 3, 5]), right=True),
    "isin": lambda t: t.isin(t.tensor([1, 2, 3]), t.tensor([2, 5])),
    "isin-invert": lambda t: t.isin(t.tensor([1, 2, 3]), t.tensor([2, 5]), invert=True),
    "isin-scalar": lambda t: (t.isin(t.tensor([1, 2, 3]), 2), t.isin(2, t.tensor([2, 5]))),
    "histc": lambda t: t.histc(t.tensor([1.0, 2, 1]), bins=4, min=0, max=3),
    "histc-auto": lambda t: t.histc(t.tensor([1.0, 2, 1, 7.5]), bins=5),
    "histc-flat": lambda t: t.histc(t.tensor([2.0, 2]), bins=2),
    "diff": lambda t: t.diff(t.tensor([1, 3, 6, 10]), n=2),
    "diff-bool": lambda t: t.diff(t.tensor([True, False, False])),
    "diff-append": lambda t: t.diff(t.tensor([[1.0, 2, 4]]), dim=1, append=t.tensor([[1.0]])),
    "tensor_split": lambda t: t.tensor_split(t.arange(7), 3),
    "tensor_split-idx": lambda t: t.tensor_split(t.arange(7), [1, 5]),
    "tensor_split-t": lambda t: t.tensor_split(t.arange(7), t.tensor(3)),
    "hsplit": lambda t: t.hsplit(t.arange(6), [2]),
    "vsplit": lambda t: t.vsplit(t.arange(8).reshape(4, 2), 2),
    "row_stack": lambda t: t.row_stack([t.tensor([1, 2]), t.tensor([[3, 4]])]),
    "rot90": lambda t: t.rot90(t.arange(6).reshape(2, 3), 1, [0, 1]),
    "rot90-k3": lambda t: t.arange(6).reshape(2, 3).rot90(3),
    "block_diag": lambda t: t.block_diag(t.tensor([[1, 2]]), t.tensor(3.0), t.tensor([4, 5])),
    "cartesian_prod": lambda t: t.cartesian_prod(t.tensor([1, 2]), t.tensor([3, 4, 5])),
    "combinations": lambda t: t.combinations(t.tensor([1, 2, 3]), 2, with_replacement=True),
    "combinations-empty": lambda t: t.combinations(t.tensor([1, 2, 3]), 4),
    "cdist": lambda t: t.cdist(t.tensor([[0.0, 0], [1, 1]]), t.tensor([[1.0, 0], [3, 4]])),
    "cdist-p1.5": lambda t: t.cdist(t.tensor([[[0.0, 0], [1, 1]]]), t.tensor([[[1.0, 0]]]), p=1.5),
    "cosine_similarity": lambda t: t.cosine_similarity(t.tensor([[1.0, 2], [0, 1]]), t.tensor([[1.0, 0], [3, 4]])),
    "pairwise_distance": lambda t: t.pairwise_distance(t.tensor([[1.0, 2]]), t.tensor([[1.0, 0]])),
    "logaddexp2": lambda t: t.logaddexp2(t.tensor([1.0, 2]), t.tensor([2.0, 4])),
    "logcumsumexp": lambda t: t.logcumsumexp(t.tensor([[-1000.0, 0, 1], [2, NAN, 3]]), 1),
    "gcd-lcm": lambda t: (t.gcd(t.tensor([4, 6]), t.tensor([6, 4])), t.tensor([4, 6]).lcm(t.tensor([6, 0]))),
    "trapezoid": lambda t: (t.trapezoid(t.tensor([1, 2, 3])), t.trapz(t.tensor([1.0, 2, 3]), dx=2)),
    "trapezoid-x": lambda t: t.trapezoid(t.tensor([[1.0, 2, 3]]), t.tensor([0.0, 1, 3])),
    "unravel_index": lambda t: t.unravel_index(t.tensor([4, 5, 7, -1]), (2, 3)),
    "quantile": lambda t: t.quantile(t.tensor([[1.0, 2, 3, 4], [1, 5, 2, 0]]), t.tensor([0.3, 0.5]), dim=1),
    "quantile-keep": lambda t: t.quantile(t.tensor([[1.0, 2, 3, 4], [1, 5, 2, 0]]), 0.7, keepdim=True),
    "quantile-nan": lambda t: t.quantile(t.tensor([[1.0, NAN, 3, 4], [1, 5, 2, 0]]), 0.3, dim=1),
    "quantile-nearest": lambda t: t.tensor([0.0, 1, 2, 3, 4]).quantile(0.625, interpolation="nearest"),
    "nanquantile": lambda t: t.nanquantile(t.tensor([[1.0, NAN, 3, 4], [NAN] * 4]), 0.3, dim=1),
    "nanmedian": lambda t: t.nanmedian(t.tensor([1.0, NAN, 3, 2])),
    "nanmedian-dim": lambda t: t.nanmedian(t.tensor([[1.0, NAN, 3, 2], [4, 3, 2, 1]]), 1),
    "mode": lambda t: t.mode(t.tensor([[1, 2, 2], [3, 3, 1]])),
    "mode-ties": lambda t: t.tensor([1.0, 1, 2, 2]).mode(),
    "msort": lambda t: t.msort(t.tensor([[3, 1], [1, 2]])),
    "cov": lambda t: t.cov(t.tensor([[1.0, 2, 4], [3, 1, 0]])),
    "cov-int1d": lambda t: t.cov(t.tensor([1, 2, 4])),
    "cov-weights": lambda t: t.cov(t.tensor([[1.0, 2, 4], [3, 1, 0]]), fweights=t.tensor([1, 2, 1]),
                                   aweights=t.tensor([0.5, 1.0, 2.0])),
    "corrcoef": lambda t: t.corrcoef(t.tensor([[1.0, 2, 4], [3, 1, 0], [1, 1, 2]])),
    "view_as_real": lambda t: t.view_as_real(t.tensor([1 + 2j, 3 - 1j])),
    "view_as_complex": lambda t: t.view_as_complex(t.tensor([[1.0, 2], [3, 4]], dtype=t.float64)),
}


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _flat(v)]
    return [r]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    want, got = _flat(CASES[name](torch)), _flat(CASES[name](st))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], (g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   equal_nan=True)


ERRORS = {
    "bincount-neg": lambda t: t.bincount(t.tensor([-1, 2])),
    "bincount-float": lambda t: t.bincount(t.tensor([1.0, 2])),
    "bincount-2d": lambda t: t.bincount(t.tensor([[1, 2]])),
    "bincount-minlength": lambda t: t.bincount(t.tensor([1, 2]), minlength=-1),
    "bincount-weights": lambda t: t.bincount(t.tensor([1, 2]), weights=t.tensor([1.0])),
    "histc-int": lambda t: t.histc(t.tensor([1, 2])),
    "histc-bins": lambda t: t.histc(t.tensor([1.0, 2]), bins=0),
    "histc-range": lambda t: t.histc(t.tensor([1.0, 2]), min=3, max=1),
    "histc-nan": lambda t: t.histc(t.tensor([1.0, NAN])),
    "searchsorted-shape": lambda t: t.searchsorted(t.tensor([[1, 3]]), t.tensor([1, 2, 3])),
    "searchsorted-side": lambda t: t.searchsorted(t.tensor([1, 3]), 2, side="left", right=True),
    "diff-0d": lambda t: t.diff(t.tensor(1.0)),
    "diff-n": lambda t: t.diff(t.tensor([1.0]), n=-1),
    "diff-prepend": lambda t: t.diff(t.tensor([[1.0, 2]]), append=t.tensor([1.0])),
    "unique-dim": lambda t: t.unique(t.tensor([1, 2]), dim=3),
    "hsplit": lambda t: t.hsplit(t.arange(7), 2),
    "vsplit-1d": lambda t: t.vsplit(t.arange(6), 2),
    "rot90-same": lambda t: t.rot90(t.ones(2, 2), 1, [0, 0]),
    "combinations-2d": lambda t: t.combinations(t.ones(2, 2)),
    "cdist-int": lambda t: t.cdist(t.tensor([[0, 0]]), t.tensor([[1, 0]])),
    "cdist-cols": lambda t: t.cdist(t.ones(2, 3), t.ones(2, 4)),
    "is_nonzero-many": lambda t: t.is_nonzero(t.tensor([1, 2])),
    "is_nonzero-empty": lambda t: t.is_nonzero(t.tensor([])),
    "gcd-float": lambda t: t.gcd(t.tensor([1.0]), t.tensor([2.0])),
    "logaddexp2-int": lambda t: t.logaddexp2(t.tensor([1]), t.tensor([2])),
    "logcumsumexp-int": lambda t: t.logcumsumexp(t.tensor([1, 2]), 0),
    "quantile-int": lambda t: t.quantile(t.tensor([1, 2]), 0.3),
    "quantile-q": lambda t: t.quantile(t.tensor([1.0, 2]), 1.3),
    "unravel-float": lambda t: t.unravel_index(t.tensor([1.0]), (2, 3)),
    "unravel-neg-shape": lambda t: t.unravel_index(t.tensor(1), (2, -3)),
    "trapezoid-0d": lambda t: t.trapezoid(t.tensor(1.0)),
    "view_as_real-real": lambda t: t.view_as_real(t.tensor([1.0])),
    "view_as_complex-size": lambda t: t.view_as_complex(t.tensor([1.0, 2, 3])),
    "view_as_complex-int": lambda t: t.view_as_complex(t.tensor([1, 2])),
    "view_as_complex-stride": lambda t: t.view_as_complex(t.ones(2, 2).t()),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_types_match_torch(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as want:
        ERRORS[name](torch)
    with pytest.raises(Exception) as got:
        ERRORS[name](st)
    assert type(got.value).__name__ == type(want.value).__name__, str(got.value)
    assert "numpy" not in type(got.value).__module__


GRADS = {
    "diff": lambda t, x: t.diff(x, n=2, dim=1, prepend=x[:, :1] * 2),
    "cdist": lambda t, x: t.cdist(x, x[:2] * 0.5 + 1.0, p=2.0),
    "cdist-p3": lambda t, x: t.cdist(x, x[:2] * 0.5 + 1.0, p=3.0),
    "logcumsumexp": lambda t, x: t.logcumsumexp(x, 1),
    "logaddexp2": lambda t, x: t.logaddexp2(x, x.flip(0)),
    "quantile": lambda t, x: t.quantile(x, t.tensor([0.2, 0.75], dtype=t.float64), dim=1),
    "trapezoid": lambda t, x: t.trapezoid(x, x[0].detach().cumsum(0)),
    "cov": lambda t, x: t.cov(x),
    "corrcoef": lambda t, x: t.corrcoef(x),
    "block_diag": lambda t, x: t.block_diag(x, x[0]),
    "rot90": lambda t, x: t.rot90(x, 3),
    "tensor_split": lambda t, x: t.tensor_split(x, [1, 3], dim=1)[1],
    "nanmedian": lambda t, x: t.nanmedian(x, 1).values,
    "mode": lambda t, x: t.mode(x.round(), 1).values,
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_matches_torch(name):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).uniform(-2, 2, size=(3, 4))
    xt = torch.tensor(a, requires_grad=True)
    xs = st.tensor(a, requires_grad=True)
    rt, rs = GRADS[name](torch, xt), GRADS[name](st, xs)
    w = np.random.default_rng(4).uniform(-1, 1, size=tuple(rt.shape))
    (rt * torch.tensor(w)).sum().backward()
    (rs * st.tensor(w)).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_double_backward_logcumsumexp_and_cdist():
    x = st.tensor(np.random.default_rng(5).uniform(-1, 1, size=(3, 4)), requires_grad=True)
    assert gradgradcheck(lambda t: st.logcumsumexp(t, 1), (x,))
    assert gradcheck(lambda t: st.cdist(t, t[:2] + 0.5), (x,))


def test_complex_views_share_memory_and_differentiate():
    z = st.tensor([1 + 2j, 3 - 1j])
    r = st.view_as_real(z)
    r[0, 1] = 5.0
    assert complex(z[0]) == 1 + 5j  # a view: writes reach the base
    c = st.view_as_complex(r)
    assert c.dtype is st.complex64 and complex(c[1]) == 3 - 1j
    y = st.tensor([[1.0, 2], [3, 4]], dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda t: st.view_as_real(st.view_as_complex(t).flip(0) * 2), (y,))


def test_integer_results_are_not_differentiable():
    x = st.tensor([1.0, 2.0, 2.0], requires_grad=True)
    v, inv = st.unique(x, return_inverse=True)
    assert not v.requires_grad and not inv.requires_grad
    assert not st.searchsorted(x, x).requires_grad
    assert not st.histc(x, bins=3).requires_grad


@pytest.mark.parametrize("fn", [
    lambda s: st.unique(s), lambda s: st.bincount(s.long()), lambda s: st.histc(s),
    lambda s: st.isin(s, st.tensor([1.0])), lambda s: st.searchsorted(s, st.tensor([1.0])),
    lambda s: st.logcumsumexp(s, 0), lambda s: st.quantile(s, 0.5), lambda s: st.mode(s),
    lambda s: st.nanmedian(s), lambda s: st.cdist(s.unsqueeze(0), s.unsqueeze(0)),
])
def test_sparse_input_is_rejected_clearly(fn):
    s = st.tensor([0.0, 1.0, 0.0, 2.0]).to_sparse()
    with pytest.raises(NotImplementedError, match="to_dense"):
        fn(s)


def test_predicates():
    x = st.ones(2, 3)
    assert st.numel(x) == 6 and st.is_tensor(x) and not st.is_tensor([1])
    assert st.is_floating_point(x) and not st.is_floating_point(st.ones(2, dtype=st.int64))
    assert not st.is_complex(x)
    assert st.is_nonzero(st.tensor([NAN])) and not st.is_nonzero(st.tensor(0)) and st.tensor([2]).is_nonzero()
    assert st.is_same_size(x, st.zeros(2, 3)) and not x.is_same_size(st.zeros(3, 2))
    y = st.ones(2, requires_grad=True) * 2
    d = st.detach(y)
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(TypeError, match="must be a Tensor"):
        st.numel([1, 2])


def test_threads_and_determinism_switches():
    n0 = st.get_num_threads()
    assert isinstance(n0, int) and n0 >= 1
    try:
        st.set_num_threads(1)
        assert st.get_num_threads() == 1
    finally:
        st.set_num_threads(n0)
    with pytest.raises(RuntimeError, match="positive"):
        st.set_num_threads(0)
    assert st.are_deterministic_algorithms_enabled() is False
    try:
        st.use_deterministic_algorithms(True, warn_only=True)
        assert st.are_deterministic_algorithms_enabled() is True
        assert st.is_deterministic_algorithms_warn_only_enabled() is True
    finally:
        st.use_deterministic_algorithms(False)
    assert not st.are_deterministic_algorithms_enabled()


def test_float32_stays_float32():
    x = st.tensor([[1.0, 2.5, 0.5], [3.0, -1.0, 2.0]])
    for r in (st.diff(x), st.quantile(x, 0.3), st.cov(x), st.corrcoef(x), st.cdist(x, x),
              st.logcumsumexp(x, 1), st.trapezoid(x), st.histc(x), st.bincount(
                  st.tensor([0, 1]), st.tensor([0.5, 1.0]))):
        assert r.dtype is st.float32
    assert math.isclose(float(st.trapezoid(st.tensor([1.0, 2.0, 3.0]))), 4.0)
