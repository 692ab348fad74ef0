"""Malformed sparse inputs raise clear errors that name the problem (invariants are checked at
construction by default, in O(nnz)); ``check_invariants=False`` skips the checks; and an op
whose result would be dense never densifies silently."""

import pytest

import sparsetorch as st

T = st.tensor
I32 = st.int32
VALUE_ERR = (ValueError, RuntimeError)  # torch raises RuntimeError; sparsetorch may say ValueError
TYPE_ERR = (TypeError, RuntimeError)


def coo(idx, vals, size=None, **kw):
    return lambda: st.sparse_coo_tensor(idx, vals, size, **kw)


def csr(crow, col, vals, size=None, **kw):
    return lambda: st.sparse_csr_tensor(crow, col, vals, size, **kw)


# (name, constructor, error types, regex the message must match)
COO_CASES = [
    ("out-of-range", coo(T([[0, 3]]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"size is 3 but found index 3"),
    ("out-of-range-dim1", coo(T([[0, 1], [0, 9]]), T([1.0, 2.0]), (2, 4)), VALUE_ERR, r"dim 1.*index 9"),
    ("negative", coo(T([[0, -1]]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"negative index -1"),
    ("negative-no-size", coo(T([[0, -1]]), T([1.0, 2.0])), VALUE_ERR, r"negative index -1"),
    ("float-indices", coo(T([[0.0, 1.0]]), T([1.0, 2.0]), (3,)), TYPE_ERR, r"indices.*integer"),
    ("bool-indices", coo(T([[True, False]]), T([1.0, 2.0]), (3,)), TYPE_ERR, r"indices.*integer"),
    ("1-D-indices", coo(T([0, 1]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"2-D.*\[sparse_dim, nnz\]"),
    ("3-D-indices", coo(T([[[0, 1]]]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"2-D.*\[sparse_dim, nnz\]"),
    ("values-length", coo(T([[0, 1]]), T([1.0, 2.0, 3.0]), (3,)), VALUE_ERR, r"nnz = 2.*\[3\]"),
    ("0-d-values", coo(T([[0]]), T(1.0), (3,)), VALUE_ERR, r"values"),
    ("size-smaller", coo(T([[0, 5]]), T([1.0, 2.0]), (4,)), VALUE_ERR, r"size is 4 but found index 5"),
    ("too-many-dims", coo(T([[0, 1]]), T([1.0, 2.0]), (3, 3)), VALUE_ERR, r"sparse_dim \(1\) \+ dense_dim \(0\)"),
    ("too-few-dims", coo(T([[0, 1], [0, 1]]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"sparse_dim \(2\)"),
    ("hybrid-dense-shape", coo(T([[0, 1]]), st.ones(2, 3), (3, 4)), VALUE_ERR, r"dense shape \[3\].*\[4\]"),
    ("negative-size", coo(T([[0, 1]]), T([1.0, 2.0]), (-3,)), VALUE_ERR, r"size|negative|index"),
    ("size-not-ints", coo(T([[0, 1]]), T([1.0, 2.0]), ("a",)), TYPE_ERR, r"size"),
    ("claims-coalesced", coo(T([[1, 0]]), T([1.0, 2.0]), (3,), is_coalesced=True), VALUE_ERR,
     r"is_coalesced=True.*not sorted"),
]

CSR_CASES = [
    ("crow-non-monotonic", csr(T([0, 2, 1, 3]), T([0, 1, 0]), T([1.0, 2.0, 3.0]), (3, 3)), VALUE_ERR,
     r"non-decreasing|crow_indices\[\.\.\., 1:\] - crow_indices"),
    ("crow-wrong-length", csr(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0]), (3, 3)), VALUE_ERR,
     r"crow_indices\.shape\[-1\].*4.*got 3"),
    ("crow0-nonzero", csr(T([1, 1, 2, 2]), T([0, 1]), T([1.0, 2.0]), (3, 3)), VALUE_ERR,
     r"crow_indices\[\.\.\., 0\] == 0"),
    ("crow-last-not-nnz", csr(T([0, 1, 2, 3]), T([0, 1]), T([1.0, 2.0]), (3, 3)), VALUE_ERR,
     r"crow_indices\[\.\.\., -1\] == nnz"),
    ("col-out-of-range", csr(T([0, 1, 2, 2]), T([0, 3]), T([1.0, 2.0]), (3, 3)), VALUE_ERR,
     r"col_indices < ncols.*3"),
    ("col-negative", csr(T([0, 1, 2, 2]), T([0, -1]), T([1.0, 2.0]), (3, 3)), VALUE_ERR,
     r"col_indices < ncols.*-1"),
    ("col-unsorted", csr(T([0, 2, 2, 2]), T([2, 0]), T([1.0, 2.0]), (3, 3)), VALUE_ERR, r"sorted and distinct"),
    ("col-duplicate", csr(T([0, 2, 2, 2]), T([1, 1]), T([1.0, 2.0]), (3, 3)), VALUE_ERR, r"sorted and distinct"),
    ("index-dtypes", csr(T([0, 1, 2, 2], dtype=I32), T([0, 1]), T([1.0, 2.0]), (3, 3)), TYPE_ERR,
     r"same dtype.*int32.*int64"),
    ("float-indices", csr(T([0.0, 1.0, 2.0, 2.0]), T([0.0, 1.0]), T([1.0, 2.0]), (3, 3)), TYPE_ERR,
     r"crow_indices.*integer"),
    ("values-shape", csr(T([0, 1, 2, 2]), T([0, 1]), T([1.0, 2.0, 3.0]), (3, 3)), VALUE_ERR,
     r"values.*same shape as col_indices"),
    ("size-ndim", csr(T([0, 1, 2, 2]), T([0, 1]), T([1.0, 2.0]), (3,)), VALUE_ERR, r"size must have 2 dimensions"),
    ("batched-sorted", csr(T([[0, 2, 2], [0, 1, 2]]), T([[1, 0], [0, 1]]), T([[1.0, 2.0], [3.0, 4.0]]), (2, 2, 2)),
     VALUE_ERR, r"sorted and distinct"),
]


@pytest.mark.parametrize("name,make,errors,pattern", COO_CASES + CSR_CASES,
                         ids=[f"{'coo' if c in COO_CASES else 'csr'}-{c[0]}" for c in COO_CASES + CSR_CASES])
def test_malformed_input_raises_clear_error(name, make, errors, pattern):
    with pytest.raises(errors, match=pattern):
        make()


def test_error_names_the_constructor():
    with pytest.raises(VALUE_ERR, match=r"sparse_coo_tensor"):
        st.sparse_coo_tensor(T([[0, 3]]), T([1.0, 2.0]), (3,))
    with pytest.raises(VALUE_ERR, match=r"sparse_csr_tensor"):
        st.sparse_csr_tensor(T([0, 1, 2, 2]), T([0, 3]), T([1.0, 2.0]), (3, 3))


# ---- check_invariants=False skips the O(nnz) checks ----

SKIPPABLE = [
    ("coo-out-of-range", coo(T([[0, 3]]), T([1.0, 2.0]), (3,), check_invariants=False)),
    ("coo-negative", coo(T([[0, -1]]), T([1.0, 2.0]), (3,), check_invariants=False)),
    ("coo-claims-coalesced", coo(T([[1, 0]]), T([1.0, 2.0]), (3,), is_coalesced=True, check_invariants=False)),
    ("csr-col-out-of-range", csr(T([0, 1, 2, 2]), T([0, 3]), T([1.0, 2.0]), (3, 3), check_invariants=False)),
    ("csr-col-unsorted", csr(T([0, 2, 2, 2]), T([2, 0]), T([1.0, 2.0]), (3, 3), check_invariants=False)),
    ("csr-crow-non-monotonic", csr(T([0, 2, 1, 3]), T([0, 1, 0]), T([1.0, 2.0, 3.0]), (3, 3),
                                   check_invariants=False)),
]


@pytest.mark.parametrize("name,make", SKIPPABLE, ids=[c[0] for c in SKIPPABLE])
def test_check_invariants_false_skips_checks(name, make):
    t = make()  # trusted input: no O(nnz) scan, no error (the tensor is invalid, as in torch)
    assert t.layout in (st.sparse_coo, st.sparse_csr)


# ---- never densify silently ----

def _sparse_inputs():
    d = T([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    return [("coo", d.to_sparse()), ("coo-uncoalesced", st.sparse_coo_tensor(
        T([[0, 1, 1], [1, 0, 0]]), T([1.5, 1.0, 1.0]), (2, 3))), ("csr", d.to_sparse_csr())]


DENSIFYING = [
    ("exp", lambda x: x.exp()),
    ("cos", lambda x: x.cos()),
    ("log", lambda x: x.log()),
    ("add-scalar", lambda x: x + 1),
    ("radd-scalar", lambda x: 1 + x),
    ("sub-scalar", lambda x: x - 1),
    ("sigmoid", lambda x: x.sigmoid()),
    ("st.exp", lambda x: st.exp(x)),
]


@pytest.mark.parametrize("layout_name,x", _sparse_inputs(), ids=[n for n, _ in _sparse_inputs()])
@pytest.mark.parametrize("op_name,fn", DENSIFYING, ids=[n for n, _ in DENSIFYING])
def test_non_zero_preserving_op_never_densifies(op_name, fn, layout_name, x):
    with pytest.raises(NotImplementedError, match=r"to_dense\(\)") as info:
        fn(x)
    msg = str(info.value)
    assert "sparse" in msg, msg  # names the layout that is missing


@pytest.mark.parametrize("layout_name,x", _sparse_inputs(), ids=[n for n, _ in _sparse_inputs()])
def test_dense_path_named_in_hint_works(layout_name, x):
    # the hint is actionable: the suggested .to_dense() route gives the dense answer
    import numpy as np

    got = x.to_dense().exp().numpy()
    np.testing.assert_allclose(got, np.exp(x.to_dense().numpy()))
