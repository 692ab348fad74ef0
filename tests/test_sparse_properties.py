"""Hypothesis properties of sparse tensors over random shapes (zero-size dims included), densities
(empty, sparse, fully dense), float32/float64 and duplicate patterns: every sparse result equals
the dense computation. Deterministic (``derandomize=True``) and small enough to run in seconds."""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sparsetorch as st

SETTINGS = settings(derandomize=True, max_examples=50, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

DTYPES = hs.sampled_from([st.float32, st.float64])
DENSITY = hs.sampled_from([0.0, 0.2, 0.5, 1.0])
SEED = hs.integers(0, 2**31 - 1)
DIM = hs.integers(0, 5)


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype is st.float32 else {"rtol": 1e-10, "atol": 1e-10}


def _dense_np(shape, density, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype.np)
    x[rng.random(shape) >= density] = 0
    return x


def _as_sparse(x, layout, dup, seed, sparse_dim=None):
    """``x`` as COO (uncoalesced with split duplicates, shuffled, when ``dup``) or CSR."""
    t = st.tensor(x)
    if layout == "csr":
        return t.to_sparse_csr()
    s = t.to_sparse(sparse_dim)
    if not dup or s._nnz() == 0:
        return s
    rng = np.random.default_rng(seed + 1)
    idx, vals = s._indices().numpy(), s._values().numpy()
    half = (vals * 0.25).astype(vals.dtype)
    idx2 = np.concatenate([idx, idx], axis=1)
    vals2 = np.concatenate([vals - half, half])  # the duplicates sum back to x
    perm = rng.permutation(idx2.shape[1])
    return st.sparse_coo_tensor(idx2[:, perm], st.tensor(vals2[perm]), x.shape)


def _np(t):
    if isinstance(t, st.Tensor):
        return (t.to_dense() if t.layout is not st.strided else t).detach().numpy()
    return np.asarray(t)


@hs.composite
def sparse_case(draw, layouts=("coo", "csr"), ndims=(1, 2, 3)):
    layout = draw(hs.sampled_from(layouts))
    nd = 2 if layout == "csr" else draw(hs.sampled_from(ndims))
    shape = tuple(draw(hs.lists(DIM, min_size=nd, max_size=nd)))
    dtype, density, seed = draw(DTYPES), draw(DENSITY), draw(SEED)
    dup = layout == "coo" and draw(hs.booleans())
    x = _dense_np(shape, density, dtype, seed)
    return layout, x, dtype, _as_sparse(x, layout, dup, seed)


# ---- representation ----

@SETTINGS
@given(sparse_case())
def test_to_dense_of_from_dense_is_identity(case):
    _layout, x, dtype, s = case
    assert s.dtype is dtype and tuple(s.shape) == x.shape
    if s.is_coalesced():
        np.testing.assert_array_equal(_np(s), x)
    else:  # split duplicates sum back to x up to rounding
        np.testing.assert_allclose(_np(s), x, **_tol(dtype))


@SETTINGS
@given(shape=hs.lists(DIM, min_size=1, max_size=3), data=hs.data())
def test_hybrid_round_trip(shape, data):
    sd = data.draw(hs.integers(1, len(shape)))  # torch: sparse_dim > 0 for a tensor with dims
    x = _dense_np(tuple(shape), data.draw(DENSITY), data.draw(DTYPES), data.draw(SEED))
    s = st.tensor(x).to_sparse(sd)
    assert s.sparse_dim() == sd and s.dense_dim() == len(shape) - sd
    np.testing.assert_array_equal(_np(s), x)


@SETTINGS
@given(sparse_case(layouts=("coo",)))
def test_coalesce_idempotent_and_dense_equal(case):
    _, _x, dtype, s = case
    c = s.coalesce()
    assert c.is_coalesced()
    cc = c.coalesce()
    np.testing.assert_array_equal(cc._indices().numpy(), c._indices().numpy())
    np.testing.assert_array_equal(cc._values().numpy(), c._values().numpy())
    np.testing.assert_allclose(_np(c), _np(s), **_tol(dtype))
    if c._nnz() > 1 and c.sparse_dim():
        lin = np.ravel_multi_index(tuple(c._indices().numpy()), tuple(c.shape[: c.sparse_dim()]))
        assert (np.diff(lin) > 0).all()


@SETTINGS
@given(sparse_case(layouts=("coo",), ndims=(2,)))
def test_coo_csr_round_trip(case):
    _, x, dtype, s = case
    r = s.to_sparse_csr()
    assert r.layout is st.sparse_csr and r._nnz() == s.coalesce()._nnz()
    back = r.to_sparse_coo()
    c = s.coalesce()
    np.testing.assert_array_equal(back._indices().numpy(), c._indices().numpy())
    np.testing.assert_allclose(back._values().numpy(), c._values().numpy(), **_tol(dtype))
    np.testing.assert_allclose(_np(r), x, **_tol(dtype))


@SETTINGS
@given(case=sparse_case(), seed=SEED)
def test_sparse_mask_keeps_mask_positions(case, seed):
    layout, x, dtype, m = case
    d = _dense_np(x.shape, 1.0, dtype, seed)
    if layout == "coo":
        m = m.coalesce()
    r = st.tensor(d).sparse_mask(m)
    assert r.layout is m.layout and r._nnz() == m._nnz()
    pattern = np.zeros(x.shape, bool)
    q = m.to_sparse_coo()
    if q._nnz():
        pattern[tuple(q._indices().numpy())] = True
    np.testing.assert_array_equal(_np(r), np.where(pattern, d, 0))


# ---- arithmetic ----

@SETTINGS
@given(case=sparse_case(), density=DENSITY, seed=SEED, dup=hs.booleans())
def test_sparse_add_sparse_equals_dense(case, density, seed, dup):
    layout, x, dtype, a = case
    y = _dense_np(x.shape, density, dtype, seed)
    b = _as_sparse(y, layout, dup and layout == "coo", seed)
    r = a + b
    assert r.layout is a.layout
    np.testing.assert_allclose(_np(r), x + y, **_tol(dtype))
    np.testing.assert_allclose(_np(a - b), x - y, **_tol(dtype))


# dense operand shapes that broadcast against a (m, n) sparse operand, some growing the result
_BCAST = [lambda m, n: (m, n), lambda m, n: (n,), lambda m, n: (1, n), lambda m, n: (m, 1),
          lambda m, n: (1, 1), lambda m, n: (), lambda m, n: (2, m, n), lambda m, n: (3, 1, n)]


@SETTINGS
@given(case=sparse_case(ndims=(2,)), which=hs.integers(0, len(_BCAST) - 1), seed=SEED)
def test_sparse_mul_dense_broadcasts_like_dense(case, which, seed):
    _layout, x, dtype, s = case
    y = _dense_np(_BCAST[which](*x.shape), 1.0, dtype, seed)
    want = x * y
    got = s * st.tensor(y)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(_np(got), want, **_tol(dtype))
    np.testing.assert_allclose(_np(st.tensor(y) * s), want, **_tol(dtype))


@SETTINGS
@given(case=sparse_case(), data=hs.data())
def test_sum_equals_dense(case, data):
    _layout, x, dtype, s = case
    np.testing.assert_allclose(_np(s.sum()), x.sum(), **_tol(dtype))
    np.testing.assert_allclose(_np(st.sparse.sum(s)), x.sum(), **_tol(dtype))
    dim = data.draw(hs.integers(-x.ndim, x.ndim - 1))
    keepdim = data.draw(hs.booleans())
    np.testing.assert_allclose(_np(s.sum(dim, keepdim=keepdim)), x.sum(dim, keepdims=keepdim), **_tol(dtype))
    np.testing.assert_allclose(_np(st.sparse.sum(s, dim)), x.sum(dim), **_tol(dtype))


@SETTINGS
@given(case=sparse_case(ndims=(2,)), k=hs.integers(0, 4), density=DENSITY, seed=SEED)
def test_sparse_mm_equals_dense_mm(case, k, density, seed):
    layout, x, dtype, s = case
    w = _dense_np((x.shape[1], k), 1.0, dtype, seed)
    np.testing.assert_allclose(_np(st.sparse.mm(s, st.tensor(w))), x @ w, **_tol(dtype))
    np.testing.assert_allclose(_np(st.mm(s, st.tensor(w))), x @ w, **_tol(dtype))
    y = _dense_np((x.shape[1], k), density, dtype, seed + 7)
    ss = st.sparse.mm(s, _as_sparse(y, layout, False, seed))  # sparse @ sparse stays sparse
    assert ss.layout is not st.strided
    np.testing.assert_allclose(_np(ss), x @ y, **_tol(dtype))
