"""Sparse COO/CSR core: constructors, conversions, coalesce, accessors, sparse_mask, SciPy interop,
repr, gradients through constructors and conversions, sparse gradient accumulation, and the
invariant-check switch. Expected values are written out by hand (torch 2.13's answers)."""

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetorch as st
from sparsetorch.sparse import check_sparse_tensor_invariants, from_scipy

T = st.tensor
F64 = st.float64


def _dense(t):
    return t.detach().to_dense().numpy() if t.layout is not st.strided else t.detach().numpy()


def _coo(idx, vals, size=None, **kw):
    return st.sparse_coo_tensor(T(idx), T(vals), size, **kw)


# ---- sparse_coo_tensor ----

def test_coo_with_and_without_size():
    a = _coo([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 4))
    assert a.layout is st.sparse_coo and a.shape == (2, 4) and a.dtype is st.float32
    np.testing.assert_array_equal(_dense(a), [[0, 0, 3, 0], [4, 0, 5, 0]])
    b = _coo([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0])
    assert b.shape == (2, 3)  # inferred: max index + 1 per sparse dim
    empty = st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0))
    assert empty.shape == (0, 0) and empty._nnz() == 0


def test_coo_hybrid_values():
    h = _coo([[0, 2]], [[1.0, 2.0], [3.0, 4.0]])
    assert h.shape == (3, 2) and h.sparse_dim() == 1 and h.dense_dim() == 1
    np.testing.assert_array_equal(_dense(h), [[1, 2], [0, 0], [3, 4]])


def test_coo_uncoalesced_duplicates_sum():
    a = _coo([[1, 0, 1], [0, 2, 0]], [1.0, 2.0, 10.0], (2, 3))
    assert not a.is_coalesced() and a._nnz() == 3
    np.testing.assert_array_equal(_dense(a), [[0, 0, 2], [11, 0, 0]])
    c = a.coalesce()
    assert c.is_coalesced() and c._nnz() == 2
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1], [2, 0]])
    np.testing.assert_array_equal(c.values().numpy(), [2.0, 11.0])


def test_is_coalesced_flag_as_torch():
    assert _coo([[0]], [1.0]).is_coalesced()  # nnz <= 1 is coalesced by construction
    assert st.sparse_coo_tensor(st.zeros(1, 0, dtype=st.int64), st.zeros(0), (3,)).is_coalesced()
    assert not _coo([[0, 1]], [1.0, 2.0]).is_coalesced()  # sorted, but torch does not look
    assert _coo([[0, 1]], [1.0, 2.0], is_coalesced=True).is_coalesced()
    assert st.zeros(2, 2).to_sparse().is_coalesced()


def test_coo_kwargs_and_index_kinds():
    vals = [1.0, 2.0]
    for idx in ([[0, 1]], T([[0, 1]]), T([[0, 1]], dtype=st.int32), np.array([[0, 1]])):
        a = st.sparse_coo_tensor(idx, vals, (3,))
        assert a._indices().dtype is st.int64
        np.testing.assert_array_equal(_dense(a), [1, 2, 0])
    b = st.sparse_coo_tensor([[0, 1]], [1, 2], (2,))
    assert b.dtype is st.int64  # inferred from the values
    c = st.sparse_coo_tensor([[0, 1]], [1, 2], (2,), dtype=F64, device="cpu", requires_grad=True)
    assert c.dtype is F64 and c.device.type == "cpu" and c.requires_grad and c.is_leaf


# ---- sparse_csr_tensor ----

def test_csr_constructor_inferred_size():
    c = st.sparse_csr_tensor(T([0, 1, 3]), T([2, 0, 2]), T([3.0, 4.0, 5.0]))
    assert c.layout is st.sparse_csr and c.shape == (2, 3)
    np.testing.assert_array_equal(_dense(c), [[0, 0, 3], [4, 0, 5]])
    c2 = st.sparse_csr_tensor(T([0, 1, 3]), T([2, 0, 2]), T([3.0, 4.0, 5.0]), (2, 5))
    assert c2.shape == (2, 5)


def test_csr_batched_3d():
    c = st.sparse_csr_tensor(T([[0, 1, 2], [0, 0, 2]]), T([[1, 0], [0, 3]]), T([[1.0, 2.0], [3.0, 4.0]]))
    assert c.shape == (2, 2, 4)
    np.testing.assert_array_equal(_dense(c), [[[0, 1, 0, 0], [2, 0, 0, 0]], [[0, 0, 0, 0], [3, 0, 0, 4]]])
    back = st.tensor(_dense(c)).to_sparse_csr()
    np.testing.assert_array_equal(back.crow_indices().numpy(), [[0, 1, 2], [0, 0, 2]])


# ---- conversions ----

def test_to_sparse_sparse_dim_hybrid():
    x = T([[0.0, 0.0], [1.0, 2.0]])
    h = x.to_sparse(1)
    assert h.sparse_dim() == 1 and h.dense_dim() == 1
    np.testing.assert_array_equal(h._indices().numpy(), [[1]])
    np.testing.assert_array_equal(h._values().numpy(), [[1, 2]])
    x3 = st.arange(24.0).reshape(2, 3, 4)
    x3[0, 1] = 0
    h3 = x3.to_sparse(2)
    np.testing.assert_array_equal(h3._indices().numpy(), [[0, 0, 1, 1, 1], [0, 2, 0, 1, 2]])
    assert tuple(h3._values().shape) == (5, 4)
    np.testing.assert_array_equal(_dense(h3), x3.numpy())


@pytest.mark.parametrize("dtype", [st.float32, st.float64])
def test_round_trips(dtype):
    x = T([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], dtype=dtype)
    coo, csr = x.to_sparse(), x.to_sparse_csr()
    assert coo.dtype is dtype and csr.dtype is dtype
    for s in (coo, csr, coo.to_sparse_csr(), csr.to_sparse_coo(), csr.to_sparse(), coo.to_sparse_coo()):
        np.testing.assert_array_equal(_dense(s), x.numpy())
    np.testing.assert_array_equal(csr.crow_indices().numpy(), [0, 1, 3])
    np.testing.assert_array_equal(csr.col_indices().numpy(), [1, 0, 2])
    assert x.to_sparse(layout=st.sparse_csr).layout is st.sparse_csr
    # an uncoalesced COO sums its duplicates on the way to CSR
    u = _coo([[1, 0, 1], [0, 2, 0]], [1.0, 2.0, 10.0], (2, 3)).to_sparse_csr()
    np.testing.assert_array_equal(u.values().numpy(), [2.0, 11.0])


# ---- coalesce ----

def test_coalesce_sums_in_input_order():
    # float32: (1e8 + 1) - 1e8 == 0 but (1e8 - 1e8) + 1 == 1 -> the order is observable
    a = _coo([[3, 0, 3, 3]], [1e8, 5.0, 1.0, -1e8], (4,))
    c = a.coalesce()
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 3]])
    want = np.float32(np.float32(np.float32(1e8) + np.float32(1.0)) + np.float32(-1e8))
    assert c.values().numpy()[1] == want
    for _ in range(3):  # deterministic: same input, bitwise same output
        np.testing.assert_array_equal(a.coalesce().values().numpy(), c.values().numpy())


def _random_coo(rng, shape, nnz, dup_frac=0.3):
    base = np.stack([rng.integers(0, s, nnz) for s in shape])
    k = int(nnz * dup_frac)
    if k:
        base[:, -k:] = base[:, rng.integers(0, nnz - k, k)]
    return base, rng.standard_normal(nnz)


def _reference_coalesce(idx, vals, shape):
    keys = {}
    for j in range(idx.shape[1]):  # summed in input order, like the packed-key sort
        key = tuple(int(i) for i in idx[:, j])
        keys[key] = keys.get(key, 0.0) + vals[j]
    order = sorted(keys)
    return np.array(order, dtype=np.int64).T.reshape(len(shape), -1), np.array([keys[k] for k in order])


@pytest.mark.parametrize("shape", [(50, 40), (7, 5, 3), (2**31, 2**31)], ids=["packed", "packed-3d", "wide-key"])
def test_coalesce_matches_reference(shape):
    # (2**31, 2**31) with nnz >= 3 needs 62 + 2 > 63 key bits: the stable-argsort fallback
    rng = np.random.default_rng(1)
    idx, vals = _random_coo(rng, shape, 200)
    c = st.sparse_coo_tensor(idx, T(vals, dtype=F64), shape).coalesce()
    want_idx, want_vals = _reference_coalesce(idx, vals, shape)
    np.testing.assert_array_equal(c.indices().numpy(), want_idx)
    np.testing.assert_allclose(c.values().numpy(), want_vals, rtol=1e-12)


def test_coalesce_beyond_int64_numel_never_wrong():
    # numel 2**70 does not fit int64: torch refuses at construction; sparsetorch may refuse too,
    # but must never return a wrongly ordered or wrongly merged result
    idx = [[2**40 - 1, 0, 2**39, 2**40 - 1, 2**33], [5, 7, 2**30 - 1, 5, 3]]
    try:
        c = st.sparse_coo_tensor(idx, [1.0, 2.0, 3.0, 4.0, 5.0], (2**40, 2**30)).coalesce()
    except RuntimeError as e:
        assert "overflow" in str(e)
        return
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 2**33, 2**39, 2**40 - 1], [7, 3, 2**30 - 1, 5]])
    np.testing.assert_array_equal(c.values().numpy(), [2.0, 5.0, 3.0, 5.0])


def test_coalesce_hybrid_and_empty():
    h = _coo([[2, 0, 2]], [[1.0, 1.0], [2.0, 2.0], [3.0, 4.0]], (3, 2)).coalesce()
    np.testing.assert_array_equal(h.values().numpy(), [[2, 2], [4, 5]])
    e = st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0), (3, 3)).coalesce()
    assert e._nnz() == 0 and e.is_coalesced()


# ---- accessors ----

def test_accessors():
    u = _coo([[1, 0], [0, 2]], [1.0, 2.0], (2, 3))
    with pytest.raises(RuntimeError, match="uncoalesced"):
        u.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        u.values()
    np.testing.assert_array_equal(u._indices().numpy(), [[1, 0], [0, 2]])
    np.testing.assert_array_equal(u._values().numpy(), [1.0, 2.0])
    assert (u._nnz(), u.sparse_dim(), u.dense_dim(), u.is_sparse, u.is_sparse_csr) == (2, 2, 0, True, False)
    c = u.to_sparse_csr()
    assert (c._nnz(), c.sparse_dim(), c.dense_dim(), c.is_sparse, c.is_sparse_csr) == (2, 2, 0, False, True)
    np.testing.assert_array_equal(c.values().numpy(), [2.0, 1.0])
    assert c.crow_indices().dtype is st.int64 and c.col_indices().dtype is st.int64
    for bad in (lambda: c.indices(), lambda: u.crow_indices(), lambda: u.col_indices(),
                lambda: st.ones(2).values(), lambda: st.ones(2).is_coalesced()):
        with pytest.raises(RuntimeError, match="layout"):
            bad()
    assert not st.ones(2).is_sparse and st.ones(2).sparse_dim() == 0


# ---- sparse_mask ----

@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_mask(layout):
    d = st.arange(6.0).reshape(2, 3) + 1
    m = _coo([[0, 1], [2, 0]], [9.0, 9.0], (2, 3))
    m = m if layout == "coo" else m.to_sparse_csr()
    for inp in (d, d.to_sparse(), d.to_sparse_csr()):
        if inp.layout is not st.strided and inp.layout is not m.layout and layout == "csr":
            continue  # torch: COO input with CSR mask is unsupported
        r = inp.sparse_mask(m)
        assert r.layout is m.layout
        np.testing.assert_array_equal(_dense(r), [[0, 0, 3], [4, 0, 0]])


def test_sparse_mask_uncoalesced_mask_keeps_its_pattern():
    d = st.arange(6.0).reshape(2, 3) + 1
    m = _coo([[1, 0, 1], [0, 2, 0]], [9.0, 9.0, 9.0], (2, 3))
    r = d.sparse_mask(m)  # torch: the mask's stored entries, each with the input's value
    np.testing.assert_array_equal(r._indices().numpy(), [[1, 0, 1], [0, 2, 0]])
    np.testing.assert_array_equal(r._values().numpy(), [4.0, 3.0, 4.0])


# ---- SciPy interop ----

@pytest.mark.parametrize("kind", ["coo_array", "csr_array", "csr_matrix", "coo_matrix", "csc_array"])
def test_from_scipy(kind):
    d = np.array([[0, 1.5, 0], [2, 0, -3]], dtype=np.float32)
    m = getattr(sp, kind)(d)
    t = from_scipy(m)
    assert t.dtype is st.float32 and t.shape == (2, 3)
    np.testing.assert_array_equal(_dense(t), d)
    if kind.startswith("coo"):
        assert t.layout is st.sparse_coo and np.shares_memory(t._values().numpy(), m.data)
    elif kind.startswith("csr"):
        assert t.layout is st.sparse_csr
        assert np.shares_memory(t.values().numpy(), m.data)
        assert np.shares_memory(t.crow_indices().numpy(), m.indptr)
        assert np.shares_memory(t.col_indices().numpy(), m.indices)
    else:
        assert t.layout is st.sparse_csr  # other formats go through CSR


def test_from_scipy_non_canonical_csr_sums_duplicates():
    m = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    np.testing.assert_array_equal(_dense(from_scipy(m)), [[0, 3], [3, 0]])


def test_to_scipy_shares_buffers():
    c = T([[0.0, 1.0], [2.0, 3.0]]).to_sparse_csr()
    m = c.to_scipy()
    assert m.format == "csr"
    assert np.shares_memory(m.data, c.values().numpy())
    assert np.shares_memory(m.indices, c.col_indices().numpy())
    assert np.shares_memory(m.indptr, c.crow_indices().numpy())
    np.testing.assert_array_equal(m.toarray(), [[0, 1], [2, 3]])
    o = c.to_sparse_coo()
    mo = o.to_scipy()
    assert mo.format == "coo" and np.shares_memory(mo.data, o._values().numpy())
    np.testing.assert_array_equal(mo.toarray(), [[0, 1], [2, 3]])
    with pytest.raises((ValueError, TypeError)):
        T([[0.0, 1.0]]).to_sparse(1).to_scipy()  # hybrid: SciPy holds scalar values only


def test_numpy_refuses_sparse():
    for s in (T([[0.0, 1.0]]).to_sparse(), T([[0.0, 1.0]]).to_sparse_csr()):
        with pytest.raises(TypeError, match=r"to_dense\(\)"):
            np.asarray(s)
        with pytest.raises(TypeError, match=r"to_dense\(\)"):
            s.numpy()


# ---- repr (torch's format, torch. -> sparsetorch.) ----

_COO_2x2 = ("tensor(indices=tensor([[0, 1],\n"
            "                       [1, 0]]),\n")
_REPR_CASES = {
    "coo": (lambda: _coo([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
            (_COO_2x2 + "       values=tensor([1., 2.]),\n"
             "       size=(2, 2), nnz=2, layout=sparsetorch.sparse_coo)")),
    # int64: no dtype either
    "coo-int": (lambda: _coo([[0, 1], [1, 0]], [1, 2], (2, 2)),
                (_COO_2x2 + "       values=tensor([1, 2]),\n"
                 "       size=(2, 2), nnz=2, layout=sparsetorch.sparse_coo)")),
    # torch prints the dtype once, in the tail, not inside values=tensor(...)
    "coo-float64": (lambda: _coo([[0, 1], [1, 0]], [1.0, 2.0], (2, 2), dtype=F64),
                    (_COO_2x2 + "       values=tensor([1., 2.]),\n"
                     "       size=(2, 2), nnz=2, dtype=sparsetorch.float64, "
                     "layout=sparsetorch.sparse_coo)")),
    # empty: no dtype on the indices, and the values show their size
    "coo-empty": (lambda: st.sparse_coo_tensor(st.zeros(2, 0, dtype=st.int64), st.zeros(0), (2, 3)),
                  ("tensor(indices=tensor([], size=(2, 0)),\n"
                   "       values=tensor([], size=(0,)),\n"
                   "       size=(2, 3), nnz=0, layout=sparsetorch.sparse_coo)")),
    # torch keeps the CSR tail on the values line
    "csr": (lambda: _coo([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)).to_sparse_csr(),
            ("tensor(crow_indices=tensor([0, 1, 2]),\n"
             "       col_indices=tensor([1, 0]),\n"
             "       values=tensor([1., 2.]), size=(2, 2), nnz=2, layout=sparsetorch.sparse_csr)")),
}


@pytest.mark.parametrize("case", list(_REPR_CASES))
def test_repr_matches_torch_format(case):
    make, want = _REPR_CASES[case]
    assert repr(make()) == want


# ---- gradients through constructors and conversions ----

def test_constructor_values_get_gradients():
    v = T([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    w = T([[5.0, 6.0, 7.0], [8.0, 9.0, 10.0]], dtype=F64)
    coo = st.sparse_coo_tensor(T([[0, 1, 1], [2, 0, 2]]), v, (2, 3))
    assert coo.requires_grad and not coo.is_leaf
    (coo.to_dense() * w).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [7.0, 8.0, 10.0])
    v.grad = None
    csr = st.sparse_csr_tensor(T([0, 1, 3]), T([2, 0, 2]), v, (2, 3))  # torch drops this (#98929)
    assert csr.requires_grad
    (csr.to_dense() * w).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [7.0, 8.0, 10.0])


def test_constructor_uncoalesced_values_gradient_per_entry():
    # each stored duplicate contributes once to the dense entry: d(dense)/d(v_k) = 1 (torch: [2, 2, 2])
    v = T([3.0, 4.0, 5.0], dtype=F64, requires_grad=True)
    a = st.sparse_coo_tensor(T([[0, 1, 1], [2, 0, 0]]), v, (2, 3))
    (a.to_dense() * 2).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_to_dense_backward_is_masked_sparse(layout):
    x0 = T([[0.0, 1.0], [2.0, 0.0]], dtype=F64)
    x = (x0.to_sparse() if layout == "coo" else x0.to_sparse_csr()).requires_grad_()
    w = T([[5.0, 6.0], [7.0, 8.0]], dtype=F64)
    (x.to_dense() * w).sum().backward()
    g = x.grad
    assert g.layout is x.layout and g._nnz() == 2
    np.testing.assert_array_equal(_dense(g), [[0, 6], [7, 0]])  # W at x's pattern only


def test_uncoalesced_leaf_gradient_is_the_masked_dense_gradient():
    x = _coo([[0, 1, 1], [2, 0, 0]], [3.0, 4.0, 5.0], (2, 3), dtype=F64).requires_grad_()
    (x.to_dense() * 2).sum().backward()
    np.testing.assert_array_equal(_dense(x.grad), [[0, 0, 2], [2, 0, 0]])  # as torch


def test_sparse_grad_accumulates_sparse():
    x = T([[0.0, 1.0], [2.0, 0.0]], dtype=F64).to_sparse().requires_grad_()
    w = T([[5.0, 6.0], [7.0, 8.0]], dtype=F64)
    for _ in range(2):
        (x.to_dense() * w).sum().backward()
    g = x.grad
    assert g.layout is st.sparse_coo  # sparse + sparse stays sparse (coalescing may be lazy)
    c = g.coalesce()
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(c.values().numpy(), [12.0, 14.0])


def test_sparse_grad_into_dense_grad_becomes_dense():
    mask = T([[1.0, 0.0], [0.0, 1.0]]).to_sparse()

    class SparseGrad(st.autograd.Function):  # a backward that returns a sparse gradient
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g.sparse_mask(mask)

    y = st.ones(2, 2, requires_grad=True)
    (y * 3).sum().backward()
    SparseGrad.apply(y).sum().backward()
    assert y.grad.layout is st.strided
    np.testing.assert_array_equal(y.grad.numpy(), [[4, 3], [3, 4]])
    z = st.ones(2, 2, requires_grad=True)
    SparseGrad.apply(z).sum().backward()
    assert z.grad.layout is st.sparse_coo
    (z * 3).sum().backward()
    assert z.grad.layout is st.strided
    np.testing.assert_array_equal(z.grad.numpy(), [[4, 3], [3, 4]])


# ---- check_sparse_tensor_invariants ----

def test_check_invariants_context_and_decorator():
    bad = ([[0, 5]], [1.0, 2.0], (3,))
    assert check_sparse_tensor_invariants.is_enabled()  # sparsetorch checks by default
    with pytest.raises((ValueError, RuntimeError)):
        st.sparse_coo_tensor(*bad)
    with check_sparse_tensor_invariants(enable=False):
        assert not check_sparse_tensor_invariants.is_enabled()
        st.sparse_coo_tensor(*bad)
        st.sparse_csr_tensor(T([0, 1, 2]), T([0, 7]), T([1.0, 2.0]), (2, 3))
        with check_sparse_tensor_invariants(), pytest.raises((ValueError, RuntimeError)):
            st.sparse_coo_tensor(*bad)
    assert check_sparse_tensor_invariants.is_enabled()

    @check_sparse_tensor_invariants(enable=False)
    def build():
        assert not check_sparse_tensor_invariants.is_enabled()
        return st.sparse_coo_tensor(*bad)

    assert build()._nnz() == 2 and check_sparse_tensor_invariants.is_enabled()
    check_sparse_tensor_invariants.disable()
    try:
        assert not check_sparse_tensor_invariants.is_enabled()
    finally:
        check_sparse_tensor_invariants.enable()


# ---- gradcheck with sparse inputs / outputs (w.r.t. the stored values, as torch's masked=True) ----

def _gc_inputs():
    d = T([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], dtype=F64)
    unco = st.sparse_coo_tensor(T([[0, 1, 1], [1, 0, 0]]), T([1.5, 0.5, 1.5], dtype=F64), (2, 3))
    return {"coo": d.to_sparse(), "coo-uncoalesced": unco, "hybrid": d.to_sparse(1), "csr": d.to_sparse_csr()}


@pytest.mark.parametrize("kind", list(_gc_inputs()))
def test_gradcheck_sparse_input(kind):
    x = _gc_inputs()[kind].requires_grad_()
    w = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64)
    assert st.autograd.gradcheck(lambda s: (s.to_dense() * w) ** 2, (x,))
    assert st.autograd.gradcheck(lambda s: (s.to_dense() * w).sin(), (x,), fast_mode=True)
    if kind != "hybrid":  # (hybrid values store zeros: those are specified elements)
        # unspecified elements are never perturbed: sqrt(|0|) would have no derivative there
        assert st.autograd.gradcheck(lambda s: s.to_dense().abs().sqrt(), (x,))
    assert st.autograd.gradgradcheck(lambda s: s.to_dense() ** 3, (x,))


def test_gradcheck_sparse_output_and_mixed_inputs():
    d = T([[0.0, 1.5], [2.0, 0.0]], dtype=F64, requires_grad=True)
    assert st.autograd.gradcheck(lambda t: t.to_sparse(), (d,))
    assert st.autograd.gradcheck(lambda t: t.to_sparse_csr(), (d,))
    s = T([[0.0, 1.0], [3.0, 0.0]], dtype=F64).to_sparse().requires_grad_()
    assert st.autograd.gradcheck(lambda a, b: a.to_dense() * b, (s, d))
    assert st.autograd.gradcheck(lambda a: a.coalesce(), (s,))


def test_gradcheck_catches_a_wrong_sparse_gradient():
    class Wrong(st.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.to_dense() * 2

        @staticmethod
        def backward(ctx, g):
            return g.sparse_mask(mask) * 3  # should be 2

    mask = T([[0.0, 1.0], [3.0, 0.0]], dtype=F64).to_sparse()
    x = T([[0.0, 1.0], [3.0, 0.0]], dtype=F64).to_sparse().requires_grad_()
    assert not st.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(st.autograd.gradcheck.GradcheckError, match="Jacobian mismatch"):
        st.autograd.gradcheck(Wrong.apply, (x,))


# ---- assert_close on sparse tensors (torch's rules; messages checked against torch in parity) ----

def test_assert_close_sparse():
    from sparsetorch.testing import assert_close

    c = T([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    assert_close(c, T([[0.0, 1.0], [2.0, 1e-9]]).to_sparse().sparse_mask(c))
    assert_close(c.to_sparse_csr(), c.to_sparse_csr())
    assert_close(c, c.to_sparse_csr(), check_layout=False)
    u = _coo([[1, 0, 1], [0, 1, 0]], [1.0, 1.0, 1.0], (2, 2))
    with pytest.raises(AssertionError, match="number of specified values in sparse COO"):
        assert_close(u, c)  # compared as stored, like torch: coalesce both to compare patterns
    assert_close(u.coalesce(), c)
    with pytest.raises(AssertionError, match="Sparse COO values are not close"):
        assert_close(c, T([[0.0, 1.0], [2.5, 0.0]]).to_sparse())
    with pytest.raises(AssertionError, match="Sparse CSR col_indices are not equal"):
        assert_close(c.to_sparse_csr(), T([[1.0, 0.0], [2.0, 0.0]]).to_sparse_csr())
    with pytest.raises(AssertionError, match="layout"):
        assert_close(c, c.to_dense())
    lying = _coo([[1, 0], [0, 1]], [1.0, 2.0], (2, 2), is_coalesced=True, check_invariants=False)
    with pytest.raises(AssertionError, match="flagged coalesced but its indices are not sorted"):
        assert_close(lying, lying)


def test_coalesce_hybrid_numba_sums_in_input_order():
    # the numba gather-and-sum of duplicate rows sums each run sequentially in input order
    # (deterministic); NumPy's add.reduceat fallback may pair terms differently (allclose)
    from sparsetorch.sparse import _spmm

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 50, 400)
    vals = rng.standard_normal((400, 3, 2)).astype(np.float32)
    s = st.sparse_coo_tensor(st.tensor(rows[None]), st.tensor(vals), (50, 3, 2))
    a = s.coalesce()
    old = _spmm.use_numba(False)
    try:
        b = s.coalesce()
    finally:
        _spmm.use_numba(old)
    assert a.indices().tolist() == b.indices().tolist()
    np.testing.assert_allclose(a.values().numpy(), b.values().numpy(), rtol=1e-5, atol=1e-6)
    seq = np.zeros((50, 3, 2), np.float32)
    for r, v in zip(rows, vals):
        seq[r] += v
    assert np.array_equal(a.values().numpy(), seq[np.unique(rows)])
    dense = np.zeros((50, 3, 2), np.float64)
    np.add.at(dense, rows, vals.astype(np.float64))
    np.testing.assert_allclose(a.to_dense().numpy(), dense, rtol=1e-5, atol=1e-5)
