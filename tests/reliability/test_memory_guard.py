"""The densify guard (sparsetorch/_memory.py): huge dense results from sparse tensors are refused
before anything is allocated, with an error that says how to raise the limit."""

import tracemalloc

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _memory as M


def _huge_coo(n=10**6):
    return st.sparse_coo_tensor([[0, n - 1], [3, n - 1]], [1.0, 2.0], (n, n))


def test_terabyte_to_dense_raises_without_allocating():
    s = _huge_coo()
    tracemalloc.start()
    try:
        with pytest.raises(st.DenseAllocationError, match=r"to_dense\(\).*3\.64 TiB.*set_densify_limit"):
            s.to_dense()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # nothing near the result's size was allocated


@pytest.mark.parametrize("make", [
    lambda s: s.to_dense(),
    lambda s: st.to_dense(s),
    lambda s: s.to_sparse_csr().to_dense(),
    lambda s: s.to_dense(st.float64),
])
def test_every_densifying_entry_point_is_guarded(make):
    with pytest.raises(st.DenseAllocationError):
        make(_huge_coo())


def test_sparse_dense_product_result_is_guarded():
    a = st.sparse_coo_tensor([[0], [1]], [1.0], (10**8, 4))
    with pytest.raises(st.DenseAllocationError, match="sparse @ dense"):
        st.sparse.mm(a, st.ones(4, 10**5))
    with pytest.raises(st.DenseAllocationError, match="sparse @ dense"):
        a.to_sparse_csr() @ st.ones(4, 10**5)


def test_catchable_as_memory_error_and_runtime_error():
    for cls in (MemoryError, RuntimeError):
        with pytest.raises(cls):
            _huge_coo().to_dense()


def test_context_manager_limit_triggers_on_small_tensor_and_restores():
    s = st.sparse_coo_tensor([[0], [1]], [1.0], (10, 10))  # 400 bytes dense
    with st.sparse.densify_limit(100):
        with pytest.raises(st.DenseAllocationError, match=r"400 bytes.*limit of 100 bytes"):
            s.to_dense()
        with st.sparse.densify_limit(None):  # nested: no limit inside
            assert s.to_dense().sum().item() == 1.0
        with pytest.raises(st.DenseAllocationError):
            s.to_dense()
    assert s.to_dense().sum().item() == 1.0  # the default is back


def test_decorator_and_set_get():
    s = st.sparse_coo_tensor([[0], [1]], [1.0], (10, 10))

    @st.sparse.densify_limit("100B")
    def dense():
        return s.to_dense()

    with pytest.raises(st.DenseAllocationError):
        dense()
    old = st.sparse.set_densify_limit(1000)
    try:
        assert st.sparse.get_densify_limit() == 1000
        assert s.to_dense().shape == (10, 10)
        st.sparse.set_densify_limit(399)
        with pytest.raises(st.DenseAllocationError):
            s.to_dense()
    finally:
        st.sparse.set_densify_limit(old)
    assert st.sparse.get_densify_limit() is None or st.sparse.get_densify_limit() >= 64 << 20


def test_unlimited_allows_what_auto_refuses():
    s = st.sparse_coo_tensor([[0], [1]], [1.0], (3, 3))
    with st.sparse.densify_limit(0):  # 0 = no limit
        assert s.to_dense().sum().item() == 1.0
        assert st.sparse.get_densify_limit() is None


@pytest.mark.parametrize("text,want", [
    ("8GB", 8 * 10**9), ("512MiB", 512 << 20), ("1e9", 10**9), ("2 kb", 2000), ("100", 100),
    ("auto", "auto"), ("none", None), ("0", None), ("unlimited", None), (None, None), (4096, 4096),
    (0, None), (float("inf"), None),
])
def test_parse_limit(text, want):
    assert M.parse_limit(text) == want


@pytest.mark.parametrize("bad,err", [("8 parsecs", ValueError), ("-1", ValueError), (-5, ValueError),
                                     (float("nan"), ValueError), ([1], TypeError), (True, TypeError)])
def test_bad_limits_are_rejected(bad, err):
    with pytest.raises(err, match="densify_limit|limit"):
        st.sparse.set_densify_limit(bad)


def test_environment_variable(monkeypatch):
    monkeypatch.setenv("SPARSETORCH_DENSIFY_LIMIT", "1KB")
    assert M._initial() == 1000
    monkeypatch.setenv("SPARSETORCH_DENSIFY_LIMIT", "none")
    assert M._initial() is None
    monkeypatch.setenv("SPARSETORCH_DENSIFY_LIMIT", "lots")
    with pytest.warns(RuntimeWarning, match="SPARSETORCH_DENSIFY_LIMIT"):
        assert M._initial() == "auto"


def test_default_limit_is_a_fraction_of_available_memory():
    avail = M._available_bytes()
    if avail is None:
        pytest.skip("available memory can't be read on this platform")
    lim = st.sparse.get_densify_limit() if M._STATE[0] == "auto" else None
    if lim is not None:
        assert 0.3 * avail <= lim <= 0.7 * avail or lim == M._SMALL


def test_default_does_not_affect_ordinary_tensors():
    a = np.random.default_rng(0).random((300, 400)).astype(np.float32)
    a[a < 0.7] = 0
    s = st.tensor(a).to_sparse()
    np.testing.assert_array_equal(s.to_dense().numpy(), a)
    np.testing.assert_array_equal(s.to_sparse_csr().to_dense().numpy(), a)


def test_zero_size_shape_that_no_array_can_have():
    s = st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0), (0, 2**62))
    with pytest.raises(st.DenseAllocationError, match="can't exist"):
        s.to_dense()
    assert st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0), (0, 5)).to_dense().shape == (0, 5)
