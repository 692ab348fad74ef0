"""_blas.dot: the GEMMs of the hot paths run with the BLAS threads the thread policy gives their
work, and NumPy's OpenBLAS thread count is restored after each call (issue 14)."""

import numpy as np
import pytest

from sparsetorch import _blas, _jit

threadpoolctl = pytest.importorskip("threadpoolctl")


def _fns():
    fns = _blas._FNS[0] if _blas._FNS else _blas._lookup()
    if fns is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    return fns


class _Probe(np.ndarray):
    """An array whose .dot records the OpenBLAS thread count it runs under."""

    seen = []

    def dot(self, b):
        _Probe.seen.append(_fns()[1]())
        return np.asarray(self).dot(b)


def test_dot_lowers_threads_for_the_call_and_restores_them(monkeypatch):
    set_n, get_n = _fns()
    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((32, 16)).astype(np.float32)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = get_n()
        monkeypatch.setattr(_jit, "thread_count", lambda work, most: 1)
        _Probe.seen.clear()
        r = _blas.dot(a.view(_Probe), b, 1 << 22)
        np.testing.assert_array_equal(np.asarray(r), a.dot(b))
        assert _Probe.seen == [1] and get_n() == before
        # below OpenBLAS's own threshold, or when the policy gives as many threads: untouched
        _Probe.seen.clear()
        _blas.dot(a.view(_Probe), b, 1000)
        monkeypatch.setattr(_jit, "thread_count", lambda work, most: most)
        _blas.dot(a.view(_Probe), b, 1 << 22)
        assert _Probe.seen == [before, before] and get_n() == before


def test_dot_restores_threads_when_the_product_raises(monkeypatch):
    _, get_n = _fns()
    monkeypatch.setattr(_jit, "thread_count", lambda work, most: 1)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = get_n()
        with pytest.raises(ValueError):
            _blas.dot(np.ones((3, 4)), np.ones((5, 2)), 1 << 22)
        assert get_n() == before and _blas._STATE[0] == 0
