"""Regression tests for defects the fuzzers found (docs/reliability.md lists them all; the others
are cases of test_malformed.py, test_memory_guard.py and test_stability.py)."""

import numpy as np
import pytest

import sparsetorch as st


@pytest.mark.parametrize("dense_shape", [(), (2,), (2, 3)])
def test_coo_without_sparse_dims_sums_its_entries(dense_shape):
    # indices of shape [0, nnz]: every entry is the whole (dense) tensor; they sum
    vals = np.arange(1.0, 1.0 + 3 * int(np.prod(dense_shape))).reshape((3,) + dense_shape)
    s = st.sparse_coo_tensor(st.zeros(0, 3, dtype=st.int64), st.tensor(vals))
    assert tuple(s.shape) == dense_shape
    np.testing.assert_array_equal(s.to_dense().numpy(), vals.sum(0))
    np.testing.assert_array_equal(s.coalesce().to_dense().numpy(), vals.sum(0))


def test_coo_without_sparse_dims_matches_torch():
    torch = pytest.importorskip("torch")
    t = torch.sparse_coo_tensor(torch.zeros(0, 3, dtype=torch.long), torch.ones(3, 2))
    s = st.sparse_coo_tensor(st.zeros(0, 3, dtype=st.int64), st.ones(3, 2))
    assert tuple(s.shape) == tuple(t.shape)
    np.testing.assert_array_equal(s.to_dense().numpy(), t.to_dense().numpy())


def test_int32_duplicates_sum_in_int32():
    # NumPy's add.reduceat sums int32 in int64: the coalesced values must stay int32 (and wrap,
    # as torch's do), including with no sparse dims (where the sum is the whole tensor)
    s = st.sparse_coo_tensor([[0, 0, 1]], st.tensor([2**30, 2**30, 3], dtype=st.int32), (2,))
    assert s.coalesce()._data.values.dtype == np.int32
    assert s.to_dense().tolist() == [-(2**31), 3]
    z = st.sparse_coo_tensor(st.zeros(0, 2, dtype=st.int64), st.tensor([-(2**31), -(2**31)], dtype=st.int32))
    assert z.to_dense().item() == 0


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "atan2", "hypot", "xlogy",
                                  "logaddexp", "copysign", "fmod", "remainder", "maximum",
                                  "fmin", "logaddexp2", "gcd"])
def test_binary_ops_with_a_python_number_keep_the_stored_dtype(name):
    # the payload's dtype must be the one the tensor is labelled with (a SciPy kernel without a
    # float32 loop once returned float64 under a float32 label)
    fn = getattr(st, name)
    x = st.rand(4) + 0.5
    for args in ((x, 2.0), (x, x)):
        try:
            r = fn(*args)
        except (TypeError, RuntimeError):
            continue
        assert r._data.dtype == r.dtype.np, (name, args[1].__class__.__name__)


@pytest.mark.parametrize("shape", [(8_338_342_294, 3), (2, 8_338_342_294, 3)])
def test_to_sparse_csr_refuses_row_pointers_past_the_limit(shape):
    # found by the sparse_coo_tensor fuzz target: an empty COO tensor of 8.3e9 rows made
    # to_sparse_csr allocate 62 GiB of row pointers (a raw NumPy MemoryError)
    s = st.sparse_coo_tensor(st.zeros(len(shape), 0, dtype=st.int64), st.zeros(0), shape)
    with st.sparse.densify_limit("1GB"), pytest.raises(st.DenseAllocationError,
                                                        match=r"row pointers \(crow_indices\)"):
        s.to_sparse_csr()
    small = st.sparse_coo_tensor(st.tensor([[0, 2], [1, 0]]), st.tensor([1.0, 2.0]), (3, 2))
    assert small.to_sparse_csr().crow_indices().tolist() == [0, 1, 1, 2]


def test_csr_transpose_and_dense_sum_refuse_huge_column_counts():
    # the same 8.3e9 columns on the other side: t() builds one row pointer per column, sum(0)
    # a dense vector of them (raw NumPy MemoryErrors before)
    c = st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0), (3, 8_338_342_294))
    c = c.to_sparse_csr()
    with st.sparse.densify_limit("1GB"):
        with pytest.raises(st.DenseAllocationError, match=r"transpose of a CSR tensor"):
            c.t()
        with pytest.raises(st.DenseAllocationError, match=r"sum\(\) of a sparse tensor"):
            c.sum(0)
    e = st.eye(3).to_sparse_csr()
    assert e.t().to_dense().tolist() == st.eye(3).tolist() and e.sum(0).tolist() == [1.0] * 3
