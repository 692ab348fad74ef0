"""The backend-generic replacements for the NumPy APIs CuPy lacks (sparsetorch/_xpcompat.py),
checked against NumPy itself on random inputs (NaN, empty and degenerate segments included)."""

import numpy as np
import pytest

from sparsetorch._xpcompat import compat_namespace, compat_sparse

XP = compat_namespace(np)


def _rng(seed):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("seed", range(20))
def test_repeat_with_array_counts(seed):
    r = _rng(seed)
    n = int(r.integers(1, 15))
    c = r.integers(0, 4, n)
    a = r.standard_normal((n, 3))
    np.testing.assert_array_equal(XP.repeat(a[:, 0], c), np.repeat(a[:, 0], c))
    np.testing.assert_array_equal(XP.repeat(a, c, axis=0), np.repeat(a, c, axis=0))
    c3 = r.integers(0, 3, 3)
    np.testing.assert_array_equal(XP.repeat(a, c3, axis=1), np.repeat(a, c3, axis=1))
    np.testing.assert_array_equal(XP.repeat(a, 2, axis=0), np.repeat(a, 2, axis=0))
    np.testing.assert_array_equal(XP.repeat(a, np.array([3]), axis=0), np.repeat(a, 3, axis=0))
    assert XP.repeat(a[:0, 0], c[:0]).shape == (0,)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "multiply", "add"])
def test_reduceat_matches_numpy(seed, name):
    r = _rng(seed)
    n = int(r.integers(1, 25))
    v = r.standard_normal((n, 2))
    v[r.random((n, 2)) < 0.15] = np.nan
    k = int(r.integers(1, 8))
    idx = np.sort(r.integers(0, n, k)) if seed % 2 else r.integers(0, n, k)  # unsorted: NumPy's rule
    got = getattr(XP, name).reduceat(v, idx, axis=0)
    np.testing.assert_allclose(got, getattr(np, name).reduceat(v, idx, axis=0), equal_nan=True)
    got1 = getattr(XP, name).reduceat(v.T, idx, axis=1)
    np.testing.assert_allclose(got1, getattr(np, name).reduceat(v.T, idx, axis=1), equal_nan=True)


def test_reduceat_bool_and_int():
    r = _rng(0)
    b = r.random((30, 2)) < 0.2
    idx = np.array([0, 4, 4, 10, 29])
    np.testing.assert_array_equal(XP.logical_or.reduceat(b, idx, axis=0),
                                  np.logical_or.reduceat(b, idx, axis=0))
    i = r.integers(-9, 9, 30)
    np.testing.assert_array_equal(XP.minimum.reduceat(i, idx), np.minimum.reduceat(i, idx))
    assert XP.maximum.reduceat(i, np.array([], np.int64)).shape == (0,)
    with pytest.raises(IndexError):
        XP.maximum.reduceat(i, np.array([0, 30]))


@pytest.mark.parametrize("name", ["maximum", "minimum", "logical_or", "add", "multiply"])
def test_accumulate_matches_numpy(name):
    r = _rng(1)
    for n in (0, 1, 2, 7, 33):
        v = r.standard_normal((n, 3)) if name != "logical_or" else r.random((n, 3)) < 0.1
        for axis in (0, 1):
            np.testing.assert_array_equal(getattr(XP, name).accumulate(v, axis=axis),
                                          getattr(np, name).accumulate(v, axis=axis))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("name,dtype", [
    ("add", np.float32), ("add", np.float64), ("add", np.int64), ("add", np.complex128),
    ("add", np.int32), ("subtract", np.int64), ("multiply", np.float64), ("maximum", np.float32),
    ("minimum", np.int64), ("maximum", np.float64),
])
def test_at_matches_numpy(seed, name, dtype):
    r = _rng(seed)
    base = r.integers(-3, 4, (5, 3)).astype(dtype)
    if dtype == np.float64 and name == "maximum":
        base[0, 0] = np.nan
    ii, jj = r.integers(0, 5, 12), r.integers(0, 3, 12)
    vals = r.integers(-3, 4, 12).astype(dtype)
    a, b = base.copy(), base.copy()
    getattr(XP, name).at(a, (ii, jj), vals)
    getattr(np, name).at(b, (ii, jj), vals)
    np.testing.assert_allclose(a, b, equal_nan=True)
    a, b = base.copy(), base.copy()  # whole rows, a broadcast operand, a scalar operand
    getattr(XP, name).at(a, ii[:4], vals[:4, None])
    getattr(np, name).at(b, ii[:4], vals[:4, None])
    np.testing.assert_allclose(a, b, equal_nan=True)
    a, b = base.copy(), base.copy()
    getattr(XP, name).at(a, ii, 2)
    getattr(np, name).at(b, ii, 2)
    np.testing.assert_allclose(a, b, equal_nan=True)


def test_namespace_forwards_everything_else():
    assert XP.float32 is np.float32 and XP.arange is np.arange
    assert XP.add(1, 2) == 3 and XP.maximum.identity is None and XP.add.nin == 2
    np.testing.assert_array_equal(XP.union1d([3, 1], [2, 3]), [1, 2, 3])
    np.testing.assert_array_equal(XP.concatenate(([True], np.array([False]))), [True, False])
    assert XP.stack([np.zeros(2), [1.0, 2.0]], axis=1).shape == (2, 2)
    with pytest.raises(AttributeError):
        XP.no_such_function  # noqa: B018
    sp = compat_sparse(__import__("scipy.sparse").sparse)
    assert sp.csr_matrix is not None
    assert getattr(sp, "_sparsetools", None) is None  # private helpers hidden, as on cupyx


def test_writeable_without_a_flag():
    """CuPy arrays carry no writeable flag: an expanded view is recognised by its strides."""
    from types import SimpleNamespace

    from sparsetorch._backend import writeable

    assert writeable(np.ones(3)) and not writeable(np.broadcast_to(np.ones(1), (3,)))
    like_cupy = lambda strides, shape: SimpleNamespace(
        flags=SimpleNamespace(c_contiguous=True), strides=strides, shape=shape)
    assert not writeable(like_cupy((0, 8), (3, 2)))
    assert writeable(like_cupy((16, 8), (3, 2)))
    assert writeable(like_cupy((0,), (1,)))  # a size-1 dimension may have any stride


def test_compat_special_fills_gaps_from_the_host():
    """cupyx.scipy.special lacks e.g. airy, spherical_jn and the eval_* polynomials: the compat
    namespace runs SciPy's on the host (a stand-in array type models CuPy's ``.get()``)."""
    import types

    import scipy.special

    from sparsetorch._xpcompat import compat_special

    class Dev(np.ndarray):
        def get(self):
            return np.asarray(self)

    xp = types.SimpleNamespace(ndarray=Dev, asarray=lambda a: np.asarray(a).view(Dev))
    ns = compat_special(types.SimpleNamespace(erf=scipy.special.erf), scipy.special, xp)
    x = np.linspace(-1, 1, 7).view(Dev)
    assert ns.erf is scipy.special.erf  # the device version where it exists
    r = ns.eval_chebyt(3, x)
    assert isinstance(r, Dev)
    np.testing.assert_array_equal(np.asarray(r), scipy.special.eval_chebyt(3, np.asarray(x)))
    ai = ns.airy(x)
    assert isinstance(ai, tuple) and len(ai) == 4 and isinstance(ai[0], Dev)
    np.testing.assert_array_equal(np.asarray(ai[0]), scipy.special.airy(np.asarray(x))[0])
    with pytest.raises(AttributeError):
        ns.no_such_function
