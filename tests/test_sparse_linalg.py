"""Products with sparse operands: every layout pair against the dense result, the gradient of
every operand against the dense gradient (masked to a sparse operand's pattern), reduce=,
bmm, SpGEMM, SDDMM (sampled_addmm), O(nnz) gradient memory, and parity with torch."""

import tracemalloc

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import gradcheck, gradgradcheck
from sparsetorch.sparse import _spmm as K

from .opdb._core import uncoalesced

LAYOUTS = ["dense", "coo", "coo-unc", "coo-hybrid", "csr"]


def rand(shape, density=0.4, seed=0, empty_row=None):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, size=shape)
    a[rng.random(shape) > density] = 0
    if empty_row is not None:
        a[..., empty_row, :] = 0
    return a


def as_layout(a, lay, dtype=st.float64, rg=False):
    t = st.tensor(a, dtype=dtype)
    if lay == "coo":
        t = t.to_sparse()
    elif lay == "coo-unc":
        t = uncoalesced(t.to_sparse())
    elif lay == "coo-hybrid":
        t = t.to_sparse(t.ndim - 1)
    elif lay == "csr":
        t = t.to_sparse_csr()
    return t.requires_grad_(True) if rg else t


def dense(t):
    return (t.to_dense() if t.layout is not st.strided else t).detach().numpy()


def stored_grad(x, g):
    """The values a gradient with ``x``'s pattern must hold: dense ``g`` at x's stored entries."""
    if x.layout is st.sparse_coo:
        return g[tuple(x._data.indices)]
    p = x._data
    if p.crow.ndim == 1:
        return g[np.repeat(np.arange(p.shape[0]), np.diff(p.crow)), p.col]
    return np.stack([g[b][np.repeat(np.arange(p.shape[1]), np.diff(p.crow[b])), p.col[b]]
                     for b in range(p.shape[0])])


def pattern_mask(x):
    """Dense boolean mask of the elements a sparse ``x`` specifies (dense dims included)."""
    q = x.detach().to_sparse_coo()._data
    m = np.zeros(x.shape[: q.sparse_dim], bool)
    m[tuple(q.indices)] = True
    return np.broadcast_to(m.reshape(m.shape + (1,) * q.dense_dim), x.shape)


def check_grad(x, g, rtol=1e-10, atol=1e-10):
    """``x.grad`` is the dense gradient ``g``, masked to ``x``'s pattern when ``x`` is sparse."""
    assert x.grad is not None
    if x.layout is st.strided:
        np.testing.assert_allclose(x.grad.numpy(), g, rtol=rtol, atol=atol)
        return
    assert x.grad.layout is x.layout, "the gradient of a sparse operand has its layout"
    if x.layout is st.sparse_csr or x._data.coalesced:
        assert x.grad._nnz() == x._nnz(), "... and its pattern (O(nnz))"
        np.testing.assert_allclose(x.grad._data.values, stored_grad(x, g), rtol=rtol, atol=atol)
    else:  # an uncoalesced operand's gradient is the tensor's: the coalesced pattern
        assert x.grad._nnz() <= x._nnz()
    np.testing.assert_allclose(dense(x.grad), np.where(pattern_mask(x), g, 0), rtol=rtol, atol=atol)


def expected_layout(la, lb):
    if la == "dense" or lb == "dense":
        return st.strided
    return st.sparse_csr if la == lb == "csr" else st.sparse_coo


# ---- mm / matmul / @ in every layout pair ----

PAIRS = [(a, b) for a in LAYOUTS for b in LAYOUTS if (a, b) != ("dense", "dense")]


@pytest.mark.parametrize("la,lb", PAIRS)
def test_mm_every_layout_pair_matches_dense(la, lb):
    A, B = rand((5, 6), seed=1, empty_row=2), rand((6, 4), seed=2)
    a, b = as_layout(A, la), as_layout(B, lb)
    for r in (st.mm(a, b), st.matmul(a, b), a @ b, st.sparse.mm(a, b)):
        assert r.layout is expected_layout(la, lb)
        np.testing.assert_allclose(dense(r), A @ B, atol=1e-12)


@pytest.mark.parametrize("la,lb", PAIRS)
def test_mm_gradients_of_every_operand(la, lb):
    A, B = rand((5, 6), seed=3), rand((6, 4), seed=4)
    W = np.random.default_rng(5).standard_normal((5, 4))
    a, b = as_layout(A, la, rg=True), as_layout(B, lb, rg=True)
    out = st.mm(a, b)
    (st.to_dense(out) * st.tensor(W)).sum().backward()
    check_grad(a, W @ B.T)
    check_grad(b, A.T @ W)


@pytest.mark.parametrize("la,lb", [("coo", "dense"), ("csr", "dense"), ("dense", "coo"),
                                   ("dense", "csr"), ("coo", "coo"), ("csr", "csr"),
                                   ("coo-hybrid", "dense"), ("coo", "csr")])
def test_mm_gradcheck_through_values(la, lb):
    A, B = rand((4, 5), seed=6), rand((5, 3), seed=7)
    a, b = as_layout(A, la), as_layout(B, lb)

    def leaf(t):
        if t.layout is st.strided:
            return t.clone().requires_grad_(True), lambda v: v
        p = t.detach()
        return p._values().clone().requires_grad_(True), lambda v: st._ops.with_values(p, v)

    (va, fa), (vb, fb) = leaf(a), leaf(b)
    assert gradcheck(lambda x, y: st.to_dense(st.mm(fa(x), fb(y))), (va, vb))
    assert gradgradcheck(lambda x, y: st.to_dense(st.mm(fa(x), fb(y))), (va, vb))


def test_float32_stays_float32():
    a = as_layout(rand((4, 5)), "csr", st.float32, rg=True)
    x = st.randn(5, 3, requires_grad=True)
    out = st.mm(a, x)
    assert out.dtype is st.float32
    out.sum().backward()
    assert a.grad.dtype is st.float32 and x.grad.dtype is st.float32


def test_mv_and_vector_matmul():
    A, v, w = rand((5, 6), seed=8), np.arange(6.0), np.arange(5.0)
    for lay in ("coo", "coo-unc", "csr", "coo-hybrid"):
        a = as_layout(A, lay, rg=True)
        vt = st.tensor(v, requires_grad=True)
        r = st.mv(a, vt)
        np.testing.assert_allclose(r.detach().numpy(), A @ v)
        np.testing.assert_allclose((a @ st.tensor(v)).detach().numpy(), A @ v)
        np.testing.assert_allclose((st.tensor(w) @ a).detach().numpy(), w @ A)
        r.sum().backward()
        check_grad(a, np.outer(np.ones(5), v))
        np.testing.assert_allclose(vt.grad.numpy(), A.sum(0))
    with pytest.raises(NotImplementedError, match="sparse vector"):
        st.mv(as_layout(A, "coo"), st.tensor(v).to_sparse())


# ---- torch.sparse.mm(reduce=...) ----

def reduce_ref(a, x, reduce):
    """torch's CSR semantics: reduce over each row's *stored* entries; 0 for an empty row."""
    q = a.detach().to_sparse_coo().coalesce()
    if q.dense_dim():  # hybrid: every element of a stored row is stored
        q = st.sparse_coo_tensor(
            np.stack([np.repeat(q._data.indices[0], q.shape[1]), np.tile(np.arange(q.shape[1]), q._nnz())]),
            q._data.values.reshape(-1), q.shape).coalesce()
    rows, cols = q._data.indices
    vals = q._data.values
    out = np.zeros((a.shape[0], x.shape[1]))
    for i in range(a.shape[0]):
        sel = rows == i
        if sel.any():
            prods = vals[sel, None] * x[cols[sel]]
            out[i] = {"sum": prods.sum(0), "mean": prods.mean(0), "amax": prods.max(0),
                      "amin": prods.min(0)}[reduce]
    return out


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("lay", ["coo", "coo-unc", "coo-hybrid", "csr"])
def test_sparse_mm_reduce_forward_and_gradcheck(reduce, lay):
    A, X = rand((6, 5), seed=9, empty_row=3), rand((5, 3), density=1.0, seed=10)
    a = as_layout(A, lay)
    r = st.sparse.mm(a, st.tensor(X), reduce)
    assert r.layout is st.strided
    np.testing.assert_allclose(r.numpy(), reduce_ref(a, X, reduce), atol=1e-12)
    if lay == "coo-hybrid" and reduce in ("amax", "amin"):
        return  # the explicit zeros of a hybrid row tie, where amax has no derivative
    p = a.detach()
    v0 = p._values().clone().requires_grad_(True)
    x0 = st.tensor(X, requires_grad=True)
    assert gradcheck(lambda v, x: st.sparse.mm(st._ops.with_values(p, v), x, reduce), (v0, x0))


def test_sparse_mm_reduce_aliases_and_errors():
    a, x = as_layout(rand((4, 5)), "csr"), st.tensor(rand((5, 2), density=1.0))
    np.testing.assert_array_equal(st.sparse.mm(a, x, "max").numpy(), st.sparse.mm(a, x, "amax").numpy())
    np.testing.assert_array_equal(st.sparse.mm(a, x, "min").numpy(), st.sparse.mm(a, x, "amin").numpy())
    with pytest.raises(RuntimeError, match="got foo"):
        st.sparse.mm(a, x, "foo")
    with pytest.raises(NotImplementedError, match="mat1 must be a sparse"):
        st.sparse.mm(a.to_dense(), x, "mean")


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_sparse_mm_reduce_matches_torch_csr(reduce):
    torch = pytest.importorskip("torch")
    A, X = rand((6, 5), seed=11, empty_row=1), rand((5, 3), density=1.0, seed=12)
    W = np.random.default_rng(13).standard_normal((6, 3))
    ta = torch.tensor(A).to_sparse_csr().requires_grad_(True)
    tx = torch.tensor(X, requires_grad=True)
    tr = torch.sparse.mm(ta, tx, reduce)
    (tr * torch.tensor(W)).sum().backward()
    for lay in ("csr", "coo"):  # torch has CSR only; COO must agree with it
        a, x = as_layout(A, lay, rg=True), st.tensor(X, requires_grad=True)
        r = st.sparse.mm(a, x, reduce)
        np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), atol=1e-12)
        (r * st.tensor(W)).sum().backward()
        np.testing.assert_allclose(a.grad._data.values, ta.grad.values().numpy(), atol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)


# ---- torch parity: mm, addmm, SpGEMM ----

def test_mm_coo_and_csr_match_torch_with_gradients():
    torch = pytest.importorskip("torch")
    A, X = rand((5, 6), seed=14), rand((6, 3), density=1.0, seed=15)
    ta = torch.tensor(A).to_sparse().requires_grad_(True)
    tx = torch.tensor(X, requires_grad=True)
    tr = torch.sparse.mm(ta, tx)
    tr.sum().backward()
    for lay in ("coo", "csr"):
        a, x = as_layout(A, lay, rg=True), st.tensor(X, requires_grad=True)
        r = st.sparse.mm(a, x)
        r.sum().backward()
        np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy())
        np.testing.assert_allclose(a.grad._data.values, ta.grad.coalesce().values().numpy())
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    # SpGEMM values and pattern
    B = rand((6, 4), seed=16)
    c = st.mm(as_layout(A, "coo"), as_layout(B, "coo"))
    tc = torch.mm(torch.tensor(A).to_sparse(), torch.tensor(B).to_sparse()).coalesce()
    np.testing.assert_allclose(dense(c), tc.to_dense().numpy())
    c = st.mm(as_layout(A, "csr"), as_layout(B, "csr"))
    tc = torch.mm(torch.tensor(A).to_sparse_csr(), torch.tensor(B).to_sparse_csr())
    assert c.layout is st.sparse_csr
    np.testing.assert_allclose(dense(c), tc.to_dense().numpy())


def test_addmm_and_sparse_addmm_match_torch():
    torch = pytest.importorskip("torch")
    C, A, X = rand((5, 3), density=1.0, seed=17), rand((5, 6), seed=18), rand((6, 3), density=1.0, seed=19)
    tc, ta, tx = (torch.tensor(C, requires_grad=True), torch.tensor(A).to_sparse().requires_grad_(True),
                  torch.tensor(X, requires_grad=True))
    tr = torch.addmm(tc, ta, tx, beta=0.5, alpha=2.0)
    tr.sum().backward()
    for fn in (st.addmm, st.sparse.addmm):
        c, a, x = st.tensor(C, requires_grad=True), as_layout(A, "coo", rg=True), st.tensor(X, requires_grad=True)
        r = fn(c, a, x, beta=0.5, alpha=2.0)
        r.sum().backward()
        np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy())
        np.testing.assert_allclose(c.grad.numpy(), tc.grad.numpy())
        # torch.addmm gives mat1 a dense gradient; sparsetorch's is masked to its pattern
        check_grad(a, ta.grad.to_dense().numpy())
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("lay", ["coo", "csr"])
def test_addmm_sparse_input_and_sparse_product_stays_sparse(lay):
    C, A, B = rand((4, 4), seed=20), rand((4, 5), seed=21), rand((5, 4), seed=22)
    c, a, b = as_layout(C, lay, rg=True), as_layout(A, lay, rg=True), as_layout(B, lay, rg=True)
    r = st.addmm(c, a, b, beta=0.5, alpha=3.0)
    assert r.layout is c.layout
    np.testing.assert_allclose(dense(r), 0.5 * C + 3.0 * A @ B)
    W = np.random.default_rng(23).standard_normal((4, 4))
    (st.to_dense(r) * st.tensor(W)).sum().backward()
    check_grad(c, 0.5 * W)
    check_grad(a, 3.0 * W @ B.T)
    check_grad(b, 3.0 * A.T @ W)


def test_addmm_beta_zero_ignores_nan_input():
    c = st.full((3, 2), float("nan")).to_sparse()
    r = st.addmm(c, as_layout(rand((3, 4)), "csr", st.float32), st.ones(4, 2), beta=0)
    assert not np.isnan(r.numpy()).any()


def test_spgemm_keeps_structural_entries():
    """An entry of A @ B that is 0 because a stored value is 0 stays stored, so the gradient of
    that value (which is not 0) flows; SciPy's product would drop it."""
    a = st.sparse_coo_tensor([[0, 1], [0, 1]], [0.0, 2.0], (2, 2), dtype=st.float64).requires_grad_(True)
    b = st.sparse_coo_tensor([[0, 1], [1, 0]], [3.0, 4.0], (2, 2), dtype=st.float64)
    c = st.mm(a, b)
    assert c._nnz() == 2
    st.to_dense(c).sum().backward()
    np.testing.assert_allclose(a.grad._data.values, [3.0, 4.0])


# ---- bmm ----

def batched(shape, per_batch, seed):
    """A [B, M, N] array with exactly ``per_batch`` nonzeros in each batch (CSR needs it)."""
    rng = np.random.default_rng(seed)
    out = np.zeros(shape)
    for b in range(shape[0]):
        flat = rng.choice(shape[1] * shape[2], per_batch, replace=False)
        out[b].flat[flat] = rng.uniform(-2, 2, per_batch)
    return out


@pytest.mark.parametrize("lay", ["coo", "coo-unc", "coo-hybrid", "csr"])
def test_bmm_batched_sparse(lay):
    A, X, D = batched((3, 4, 5), 6, 24), rand((3, 5, 2), density=1.0, seed=25), rand((3, 2, 4), density=1.0, seed=26)
    a, x = as_layout(A, lay, rg=True), st.tensor(X, requires_grad=True)
    r = st.bmm(a, x)
    np.testing.assert_allclose(r.detach().numpy(), A @ X)
    W = np.random.default_rng(27).standard_normal(r.shape)
    (r * st.tensor(W)).sum().backward()
    check_grad(a, W @ X.transpose(0, 2, 1))
    check_grad(x, A.transpose(0, 2, 1) @ W)
    # dense @ batched sparse
    a2, d = as_layout(A, lay, rg=True), st.tensor(D, requires_grad=True)
    r = st.bmm(d, a2)
    np.testing.assert_allclose(r.detach().numpy(), D @ A)
    W = np.random.default_rng(28).standard_normal(r.shape)
    (r * st.tensor(W)).sum().backward()
    check_grad(a2, D.transpose(0, 2, 1) @ W)
    check_grad(d, W @ A.transpose(0, 2, 1))


@pytest.mark.parametrize("lay", ["coo", "csr"])
def test_bmm_sparse_at_sparse(lay):
    A, B = batched((2, 3, 4), 5, 29), batched((2, 4, 3), 5, 30)
    a, b = as_layout(A, lay, rg=True), as_layout(B, "coo", rg=True)
    r = st.bmm(a, b)
    assert r.layout is st.sparse_coo and r.ndim == 3
    np.testing.assert_allclose(dense(r), A @ B)
    st.to_dense(r).sum().backward()
    W = np.ones((2, 3, 3))
    check_grad(a, W @ B.transpose(0, 2, 1))
    check_grad(b, A.transpose(0, 2, 1) @ W)


def test_bmm_matches_torch_coo():
    torch = pytest.importorskip("torch")
    A, X = batched((2, 3, 4), 5, 31), rand((2, 4, 2), density=1.0, seed=32)
    ta, tx = torch.tensor(A).to_sparse().requires_grad_(True), torch.tensor(X, requires_grad=True)
    tr = torch.bmm(ta, tx)
    tr.sum().backward()
    a, x = as_layout(A, "coo", rg=True), st.tensor(X, requires_grad=True)
    r = st.bmm(a, x)
    r.sum().backward()
    np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy())
    check_grad(a, ta.grad.to_dense().numpy())  # torch's is not masked to a's pattern; ours is
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_matmul_3d_sparse_and_errors():
    A, X = batched((2, 3, 4), 5, 33), rand((2, 4, 2), density=1.0, seed=34)
    np.testing.assert_allclose(st.matmul(as_layout(A, "coo"), st.tensor(X)).numpy(), A @ X)
    with pytest.raises(NotImplementedError, match="matmul"):
        st.matmul(as_layout(A, "coo"), st.tensor(X[0]))
    with pytest.raises(RuntimeError, match="batch"):
        st.bmm(as_layout(A, "coo"), st.ones(3, 4, 2, dtype=st.float64))


# ---- sampled_addmm (SDDMM) ----

def sampled_ref(inp, m1, m2, beta, alpha):
    mask = np.zeros(inp.shape, bool)
    q = inp.detach().to_sparse_coo()._data
    mask[tuple(q.indices)] = True
    return np.where(mask, beta * dense(inp) + alpha * (m1 @ m2), 0)


@pytest.mark.parametrize("lay", ["csr", "coo", "coo-unc", "coo-hybrid"])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, -1.0)])
def test_sampled_addmm_layouts_and_gradients(lay, beta, alpha):
    I, M1, M2 = rand((5, 6), seed=35, empty_row=0), rand((5, 3), 1.0, 36), rand((3, 6), 1.0, 37)
    inp = as_layout(I, lay, rg=True)
    m1, m2 = st.tensor(M1, requires_grad=True), st.tensor(M2, requires_grad=True)
    r = st.sparse.sampled_addmm(inp, m1, m2, beta=beta, alpha=alpha)
    assert r.layout is inp.layout
    np.testing.assert_allclose(dense(r), sampled_ref(inp, M1, M2, beta, alpha), atol=1e-12)
    W = np.random.default_rng(38).standard_normal((5, 6))
    (st.to_dense(r) * st.tensor(W)).sum().backward()
    mask = sampled_ref(inp, np.ones((5, 1)), np.ones((1, 6)), 0.0, 1.0) != 0
    Wm = np.where(mask, W, 0)
    np.testing.assert_allclose(m1.grad.numpy(), alpha * Wm @ M2.T, atol=1e-12)
    np.testing.assert_allclose(m2.grad.numpy(), alpha * M1.T @ Wm, atol=1e-12)
    if beta != 0 or inp.grad is not None:
        check_grad(inp, beta * W)


def test_sampled_addmm_matches_torch_and_double_backward():
    torch = pytest.importorskip("torch")
    I, M1, M2 = rand((4, 5), seed=39), rand((4, 2), 1.0, 40), rand((2, 5), 1.0, 41)
    ti = torch.tensor(I).to_sparse_csr()
    tm1, tm2 = torch.tensor(M1, requires_grad=True), torch.tensor(M2, requires_grad=True)
    tr = torch.sparse.sampled_addmm(ti, tm1, tm2, beta=0.5, alpha=2.0)
    tr.values().sum().backward()
    inp = as_layout(I, "csr")
    m1, m2 = st.tensor(M1, requires_grad=True), st.tensor(M2, requires_grad=True)
    r = st.sparse.sampled_addmm(inp, m1, m2, beta=0.5, alpha=2.0)
    np.testing.assert_allclose(r._data.values, tr.values().detach().numpy())
    st._ops.values(r).sum().backward()
    np.testing.assert_allclose(m1.grad.numpy(), tm1.grad.numpy())
    np.testing.assert_allclose(m2.grad.numpy(), tm2.grad.numpy())
    p = inp.detach()
    v0 = p._values().clone().requires_grad_(True)

    def f(v, a, b):
        return st._ops.values(st.sparse.sampled_addmm(st._ops.with_values(p, v), a, b, beta=0.5, alpha=2.0))
    args = (v0, st.tensor(M1, requires_grad=True), st.tensor(M2, requires_grad=True))
    assert gradcheck(f, args) and gradgradcheck(f, args)


@pytest.mark.parametrize("lay", ["csr", "coo"])
def test_sampled_addmm_batched(lay):
    I, M1, M2 = batched((2, 3, 4), 5, 42), rand((2, 3, 2), 1.0, 43), rand((2, 2, 4), 1.0, 44)
    inp = as_layout(I, lay, rg=True)
    m1, m2 = st.tensor(M1, requires_grad=True), st.tensor(M2, requires_grad=True)
    r = st.sparse.sampled_addmm(inp, m1, m2, beta=0.5)
    mask = I != 0
    np.testing.assert_allclose(dense(r), np.where(mask, 0.5 * I + M1 @ M2, 0))
    st.to_dense(r).sum().backward()
    np.testing.assert_allclose(m1.grad.numpy(), mask.astype(float) @ M2.transpose(0, 2, 1))
    check_grad(inp, 0.5 * np.ones(I.shape))
    torch = pytest.importorskip("torch")
    if lay == "csr":
        tr = torch.sparse.sampled_addmm(torch.tensor(I).to_sparse_csr(), torch.tensor(M1),
                                        torch.tensor(M2), beta=0.5)
        np.testing.assert_allclose(dense(r), tr.to_dense().numpy())


def test_sampled_addmm_beta_zero_nan_and_out():
    inp = st.sparse_csr_tensor([0, 1, 2], [0, 1], [float("nan"), 1.0], (2, 2))
    r = st.sparse.sampled_addmm(inp, st.ones(2, 3), st.ones(3, 2), beta=0.0)
    np.testing.assert_allclose(r._data.values, [3.0, 3.0])
    out = st.zeros(1)
    st.sparse.sampled_addmm(inp, st.ones(2, 3), st.ones(3, 2), beta=0.0, out=out)
    assert out.layout is st.sparse_csr
    with pytest.raises(NotImplementedError, match="must be a sparse"):
        st.sparse.sampled_addmm(st.ones(2, 2), st.ones(2, 3), st.ones(3, 2))


# ---- memory: the gradient of a sparse operand is O(nnz) (#41128) ----

@pytest.mark.parametrize("lay", ["coo", "csr"])
def test_gradient_memory_is_o_nnz(lay):
    n, nnz = 100_000, 1_000_000
    rng = np.random.default_rng(45)
    idx = rng.integers(0, n, size=(2, nnz))
    a = st.sparse_coo_tensor(idx, rng.standard_normal(nnz).astype(np.float32), (n, n)).coalesce()
    if lay == "csr":
        a = a.to_sparse_csr()
    a = a.detach().requires_grad_(True)
    x = st.randn(n, 4, requires_grad=True)
    tracemalloc.start()
    try:
        st.sparse.mm(a, x).sum().backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert a.grad.layout is a.layout and a.grad._nnz() == a._nnz()
    assert tuple(x.grad.shape) == (n, 4)
    assert peak < 400e6, f"backward allocated {peak / 1e6:.0f} MB; a dense gradient is 40 GB"


# ---- kernels: numba and NumPy/SciPy paths agree; tiny products build no SciPy object ----

@pytest.fixture(params=[True, False], ids=["numba", "numpy-scipy"])
def kernels(request):
    old = K.use_numba(request.param)
    yield request.param
    K.use_numba(old)


@pytest.mark.parametrize("shape,k", [((8, 8), 8), ((3000, 2000), 16)])
@pytest.mark.parametrize("lay", ["coo", "coo-unc", "csr"])
def test_kernel_paths(kernels, shape, k, lay):
    A = rand(shape, density=min(1.0, 20 / shape[1]), seed=46)
    X = np.random.default_rng(47).standard_normal((shape[1], k))
    G = np.random.default_rng(48).standard_normal((shape[0], k))
    a = as_layout(A, lay, rg=True)
    x = st.tensor(X, requires_grad=True)
    r = st.sparse.mm(a, x)
    np.testing.assert_allclose(r.detach().numpy(), A @ X, rtol=1e-10, atol=1e-10)
    r.backward(st.tensor(G))
    check_grad(x, A.T @ G, rtol=1e-9, atol=1e-9)
    check_grad(a, G @ X.T, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(st.mm(st.tensor(G.T), a).detach().numpy(), G.T @ A, rtol=1e-10, atol=1e-10)


def test_tiny_product_builds_no_scipy_object(kernels, monkeypatch):
    import scipy.sparse

    def refuse(*a, **k):
        raise AssertionError("a SciPy object was built for an 8x8 product")

    for name in ("csr_matrix", "csr_array", "coo_matrix", "coo_array", "csc_matrix"):
        monkeypatch.setattr(scipy.sparse, name, refuse)
    A, X = rand((8, 8), seed=49), np.ones((8, 8))
    for lay in ("coo", "csr"):
        r = st.sparse.mm(as_layout(A, lay, st.float32), st.tensor(X, dtype=st.float32))
        np.testing.assert_allclose(r.numpy(), A @ X, rtol=1e-5, atol=1e-5)
