"""Right answers at the edges (issue 17): inf/nan rows in sparse softmax, NaN in
EmbeddingBag(mode='max'), each compared with the dense computation."""

import math

import numpy as np
import pytest

import sparsetorch as torch

INF, NAN = math.inf, math.nan
ROWS = [
    [0, INF, 0, 1.0],        # +inf: the whole slice is NaN (inf - inf)
    [0, -INF, 2, 0],         # -inf next to a finite value: exp(-inf) = 0
    [0, NAN, 0, 1],          # NaN: the whole slice is NaN
    [0, 0, 0, 0],            # empty slice: stays empty
    [-INF, 0, 0, -INF],      # only -inf: NaN, as the dense softmax of [-inf, -inf]
    [1e30, 0, 0, -1e30],     # huge magnitudes: stable
    [3, -INF, INF, 0],       # +inf and -inf
]


def _dense_over_stored(d, dim, log):
    """softmax of the stored entries of each slice (unstored: -inf), computed densely with NumPy
    in float64: exactly the dense softmax of the values kept, NaN where it is NaN."""
    a = np.array(d, dtype=np.float64)
    mask = a != 0
    if dim == 0:
        a, mask = a.T, mask.T
    out = np.zeros_like(a)
    with np.errstate(all="ignore"):
        for i in range(a.shape[0]):
            v = a[i][mask[i]]
            if v.size == 0:
                continue
            z = v - v.max() if not np.isnan(v).any() else v * NAN
            r = z - np.log(np.exp(z).sum()) if log else np.exp(z) / np.exp(z).sum()
            out[i][mask[i]] = r
    return out.T if dim == 0 else out


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("log", [False, True])
def test_sparse_softmax_inf_nan_rows_match_dense(layout, dim, log):
    s = torch.tensor(ROWS).to_sparse()
    if layout == "csr":
        s = s.to_sparse_csr()
    f = torch.sparse.log_softmax if log else torch.sparse.softmax
    got = f(s, dim).to_dense().numpy().astype(np.float64)
    want = _dense_over_stored(ROWS, dim, log)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("log", [False, True])
def test_sparse_softmax_inf_rows_match_torch(log):
    ref = pytest.importorskip("torch")
    f, g = (torch.sparse.log_softmax, ref.sparse.log_softmax) if log else \
        (torch.sparse.softmax, ref.sparse.softmax)
    for dim in (0, 1):
        got = f(torch.tensor(ROWS).to_sparse(), dim).to_dense().numpy()
        want = g(ref.tensor(ROWS).to_sparse(), dim).to_dense().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_sparse_softmax_property_random_specials():
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.integers(-3, 4, size=(6, 5)).astype(np.float32)
        a[rng.random(a.shape) < 0.4] = 0
        specials = rng.choice([INF, -INF, NAN], size=3)
        for v, (i, j) in zip(specials, rng.integers(0, [6, 5], size=(3, 2))):
            a[i, j] = v
        for log in (False, True):
            f = torch.sparse.log_softmax if log else torch.sparse.softmax
            for dim in (0, 1):
                got = f(torch.tensor(a).to_sparse(), dim).to_dense().numpy()
                np.testing.assert_allclose(got, _dense_over_stored(a, dim, log), rtol=1e-5,
                                           atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("sparse", [False, True])
def test_embedding_bag_max_nan_anywhere_in_bag(dtype, sparse):
    dt = getattr(torch, dtype)
    table = [[1.0, 2.0], [NAN, 0.0], [3.0, NAN], [5.0, 6.0], [-1.0, -2.0]]
    ids = [0, 1, 2, 3, 0, 3, 1, 4, 4]
    offsets = [0, 3, 5, 7]
    w = torch.tensor(table, dtype=dt, requires_grad=True)
    out = torch.nn.functional.embedding_bag(torch.tensor(ids), w, torch.tensor(offsets),
                                            mode="max", sparse=sparse)
    # the dense computation: max over each bag's gathered rows (NaN propagates)
    wn = np.array(table)
    bounds = offsets + [len(ids)]
    want = np.stack([wn[ids[a:b]].max(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])
    np.testing.assert_array_equal(out.detach().numpy().astype(np.float64), want)
    out.sum().backward()
    g = w.grad.to_dense() if sparse else w.grad
    # each (bag, column) sends its gradient to the first entry holding the max (the first NaN)
    assert g.tolist() == [[0.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 2.0], [1.0, 1.0]]


def test_embedding_bag_max_module_2d_input_nan_not_first():
    eb = torch.nn.EmbeddingBag(3, 1, mode="max")
    with torch.no_grad():
        eb.weight.copy_(torch.tensor([[1.0], [NAN], [2.0]]))
    out = eb(torch.tensor([[0, 1, 2], [2, 0, 0], [2, 2, 1]]))
    got = out.detach().numpy()[:, 0]
    assert np.isnan(got[0]) and got[1] == 2.0 and np.isnan(got[2])


# ---- scalars that make an implicit zero nonzero: refuse with the .to_dense() hint ----

_S = [[0.0, 2.0, 0.0], [-1.0, 0.0, 0.0]]
_BAD = [
    ("x / 0", lambda x: x / 0), ("x / 0.0", lambda x: x / 0.0), ("x * nan", lambda x: x * NAN),
    ("x * inf", lambda x: x * INF), ("x * -inf", lambda x: x * -INF), ("x / nan", lambda x: x / NAN),
    ("nan * x", lambda x: NAN * x), ("div(0)", lambda x: x.div(0)), ("mul(inf)", lambda x: x.mul(INF)),
    ("div_(0)", lambda x: x.clone().div_(0)), ("mul_(nan)", lambda x: x.clone().mul_(NAN)),
    ("x / tensor(0.)", lambda x: x / torch.tensor(0.0)),
    ("x * tensor([nan])", lambda x: x * torch.tensor([NAN])),
    ("true_divide(0)", lambda x: x.true_divide(0)),
]


@pytest.mark.parametrize("layout", ["coo", "csr", "int"])
@pytest.mark.parametrize("name,fn", _BAD, ids=[b[0] for b in _BAD])
def test_non_zero_preserving_scalar_refuses(layout, name, fn):
    x = torch.tensor(_S).to_sparse()
    if layout == "csr":
        x = x.to_sparse_csr()
    if layout == "int":
        if "nan" in name or "inf" in name:
            return  # an integer tensor times a float special is covered by the float rows
        x = torch.tensor(_S, dtype=torch.int64).to_sparse()
        if name.endswith("_(0)"):  # in place: a float result can't be cast back to int64
            with pytest.raises((RuntimeError, NotImplementedError)):
                fn(x.to_dense())
            with pytest.raises((RuntimeError, NotImplementedError)):
                fn(x)
            return
    with np.errstate(all="ignore"):
        dense = fn(x.to_dense())  # the dense computation: NaN at the implicit zeros
    assert bool(dense.isnan().any())
    with pytest.raises(NotImplementedError, match=r"to_dense\(\)"):
        fn(x)


@pytest.mark.parametrize("c", [2.0, -0.5, INF, -INF])
def test_zero_preserving_division_matches_dense(c):
    x = torch.tensor(_S).to_sparse()
    got = (x / c).to_dense()
    assert torch.equal(got, torch.tensor(_S) / c)


def test_fully_stored_sparse_times_inf_is_exact():
    x = torch.tensor([[1.0, 2.0], [3.0, -4.0]]).to_sparse()
    got = (x * INF).to_dense()
    assert torch.equal(got, torch.tensor([[1.0, 2.0], [3.0, -4.0]]) * INF)
    assert torch.equal((x / 0).to_dense(), torch.tensor([[INF, INF], [INF, -INF]]))
