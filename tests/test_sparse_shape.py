"""Structure ops on sparse tensors: torch parity, result invariants (an honest coalesced flag),
CSR specifics (t() is the CSR of the transpose, batched CSR), errors, clone/resize, and the
counting-sort paths (SciPy's sparsetools on the CPU, the generic argsort path elsewhere).

The op table (tests/opdb/sparse_shape.py) checks every layout variant against the dense op with
gradcheck; these tests pin down what the table cannot: torch's layouts, flags and errors.
"""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.sparse import _structure as K
from sparsetorch.sparse._payload import validate_coo, validate_csr

F64 = st.float64
DATA = np.array([[0.0, 1.5, 0.0, -0.5, 0.0],
                 [2.0, 0.0, -3.0, 0.0, 0.0],
                 [0.0, 0.0, 0.0, 0.0, 0.0],
                 [0.0, 4.0, 0.0, 0.5, 1.0]])
W = np.arange(20.0).reshape(4, 5) / 7 - 0.6
UNCO_IDX = np.array([[1, 0, 1, 3, 0], [0, 1, 0, 4, 3]])
UNCO_VAL = np.array([0.5, 1.5, 1.5, 1.0, -0.5])  # (1, 0) stored twice


def _dense(x):
    return (x.to_dense() if x.layout is not st.strided else x).detach().numpy()


def _check(t):
    """Invariants of a result: valid payload; a COO that claims coalesced is sorted and unique."""
    p = t._data
    if t.layout is st.sparse_coo:
        validate_coo(np, p.indices, p.values, p.shape, "result")
        if p.coalesced and p.nnz > 1:
            lin = np.ravel_multi_index(tuple(p.indices), p.shape[: p.sparse_dim])
            assert (np.diff(lin) > 0).all(), "claims coalesced but is not"
    elif t.layout is st.sparse_csr:
        validate_csr(np, p.crow, p.col, p.values, p.shape, "result")
    return t


def coo(data=DATA, sparse_dim=None, rg=False):
    x = st.tensor(data, dtype=F64).to_sparse(sparse_dim)
    return x.requires_grad_() if rg else x


def unco(rg=False):
    x = st.sparse_coo_tensor(UNCO_IDX, UNCO_VAL, (4, 5), dtype=F64)
    assert not x.is_coalesced()
    return x.requires_grad_() if rg else x


def csr(data=DATA, rg=False):
    x = st.tensor(data, dtype=F64).to_sparse_csr()
    return x.requires_grad_() if rg else x


# ---- torch parity ----

PARITY = {
    "t": lambda L, x: x.t(),
    "transpose": lambda L, x: x.transpose(1, 0),
    "permute": lambda L, x: x.permute(1, 0),
    "T": lambda L, x: x.T,
    "cat0": lambda L, x: L.cat([x, x.detach()], 0),
    "cat1": lambda L, x: L.cat([x.detach(), x], 1),
    "stack0": lambda L, x: L.stack([x, x.detach()], 0),
    "stack2": lambda L, x: L.stack([x.detach(), x], 2),
    "narrow0": lambda L, x: x.narrow_copy(0, 1, 2),
    "narrow1": lambda L, x: x.narrow_copy(1, 2, 3),
    "select0": lambda L, x: x.select(0, 3),
    "select1": lambda L, x: x.select(1, -2),
    "index_select0": lambda L, x: x.index_select(0, L.tensor([3, 0, 3, 1])),
    "index_select1": lambda L, x: x.index_select(1, L.tensor([4, 1, 1, 0])),
    "getitem-int": lambda L, x: x[1],
    "getitem-neg": lambda L, x: x[-1],
    "getitem-col": lambda L, x: x[:, 3],
    "getitem-2ints": lambda L, x: x[3, 1],
    "getitem-ellipsis": lambda L, x: x[..., 1],
    "getitem-none": lambda L, x: x[None],
    "unsqueeze0": lambda L, x: x.unsqueeze(0),
    "unsqueeze1": lambda L, x: x.unsqueeze(1),
    "unsqueeze2": lambda L, x: x.unsqueeze(-1),
    "unbind": lambda L, x: L.stack([r.to_dense() for r in x.unbind(1)]),
}
# torch has no sparse kernel for these: its oracle is the same call on the dense tensor
DENSE_ORACLE = {
    "reshape": lambda L, x: x.reshape(2, 10),
    "reshape3": lambda L, x: x.reshape(2, 2, 5),
    "view": lambda L, x: x.view(-1),
    "flatten": lambda L, x: x.flatten(),
    "narrow": lambda L, x: x.narrow(0, 1, 2),
    "slice": lambda L, x: x[1:3],
    "slice-cols": lambda L, x: x[:, 1:4],
    "slice-step": lambda L, x: x[::2, 1::3],
    "index-tensor": lambda L, x: x[L.tensor([2, 0, 0])],
    "squeeze": lambda L, x: x.unsqueeze(0).squeeze(0),
}
CSR_CASES = {"t", "transpose", "permute", "T", "cat0", "cat1", "stack0", "narrow0", "narrow1", "select0",
             "select1", "index_select0", "index_select1", "getitem-int", "getitem-neg", "getitem-col",
             "getitem-2ints", "getitem-none", "unsqueeze0", "reshape", "narrow", "slice", "slice-cols",
             "slice-step", "index-tensor", "getitem-ellipsis", "unbind", "squeeze"}


def _run(L, kind, fn):
    x = L.tensor(DATA, dtype=L.float64)
    x = {"coo": x.to_sparse, "csr": x.to_sparse_csr, "dense": lambda: x}[kind]().requires_grad_()
    out = fn(L, x)
    d = out.to_dense() if out.layout is not L.strided else out
    w = L.tensor(np.cos(np.arange(d.numel())).reshape(tuple(d.shape)), dtype=L.float64)
    (d * w).sum().backward()
    g = x.grad
    return out, d.detach().numpy(), (g.to_dense() if g.layout is not L.strided else g).numpy(), g


def _oracle(torch, kind, fn, names):
    """torch on the same layout, else on COO, else on the dense tensor (forward and backward)."""
    for k in ((kind, "coo") if names is PARITY else ()) + ("dense",):
        try:
            return k, _run(torch, k, fn)
        except (RuntimeError, NotImplementedError):
            continue
    raise AssertionError("no torch oracle")


_ALL = sorted(PARITY) + sorted(DENSE_ORACLE)
_PAIRS = [(n, "coo") for n in _ALL] + [(n, "csr") for n in _ALL if n in CSR_CASES]


@pytest.mark.parametrize("name", [n for n in _ALL if n not in CSR_CASES])
def test_csr_cases_without_a_csr_result_raise(name):
    """1-D/4-D results or unequal nnz per batch have no CSR form: a clear error, not a wrong answer."""
    fn = (PARITY if name in PARITY else DENSE_ORACLE)[name]
    with pytest.raises((RuntimeError, NotImplementedError)):
        _run(st, "csr", fn)


@pytest.mark.filterwarnings("ignore:.*[Ss]parse")
@pytest.mark.parametrize("name,kind", _PAIRS)
def test_torch_parity(name, kind):
    torch = pytest.importorskip("torch")
    names = PARITY if name in PARITY else DENSE_ORACLE
    fn = names[name]
    s_out, s_d, s_g, s_grad = _run(st, kind, fn)
    _, (_, t_d, t_g, _) = _oracle(torch, kind, fn, names)
    np.testing.assert_allclose(s_d, t_d, rtol=1e-12, atol=1e-12)
    mask = DATA != 0  # masked semantics: the gradient of a sparse input has its pattern
    np.testing.assert_allclose(s_g, np.where(mask, t_g, 0), rtol=1e-12, atol=1e-12)
    assert s_grad.layout is (st.sparse_coo if kind == "coo" else st.sparse_csr)
    assert s_grad._nnz() == int(mask.sum())
    if isinstance(s_out, st.Tensor) and s_out.layout is not st.strided:
        _check(s_out)
    if names is PARITY and kind == "coo":  # torch's sparse structure of the result
        t = fn(torch, torch.tensor(DATA).to_sparse())
        if t.layout is torch.sparse_coo:
            assert s_out.layout is st.sparse_coo
            assert (s_out.sparse_dim(), s_out.dense_dim()) == (t.sparse_dim(), t.dense_dim())
            assert s_out._nnz() == t._nnz()
        else:
            assert s_out.layout is st.strided  # select of the last sparse dim is dense, as torch


def test_parity_hybrid_and_3d():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).normal(size=(3, 4, 2, 2))
    a[a < 0.3] = 0
    calls = [lambda x: x.transpose(0, 2), lambda x: x.permute(2, 0, 1, 3), lambda x: x.unsqueeze(3),
             lambda x: x.select(3, 1), lambda x: x.index_select(3, torch_or_st(x).tensor([1, 1, 0])),
             lambda x: x.narrow_copy(3, 1, 1), lambda x: torch_or_st(x).cat([x, x], 3),
             lambda x: torch_or_st(x).cat([x, x], 1), lambda x: torch_or_st(x).stack([x, x], 4),
             lambda x: x[1], lambda x: x[:, 2]]
    for c in calls:
        t = c(torch.tensor(a).to_sparse(3))
        s = _check(c(st.tensor(a).to_sparse(3)))
        np.testing.assert_array_equal(_dense(s), t.to_dense().numpy())
        assert (s.sparse_dim(), s.dense_dim()) == (t.sparse_dim(), t.dense_dim())


def torch_or_st(x):
    return st if isinstance(x, st.Tensor) else __import__("torch")


def test_uncoalesced_inputs():
    """Without autograd the duplicates are kept (they sum; no sort). With autograd the input is
    coalesced first, and every stored entry gets the gradient at its position."""
    for fn in (lambda x: x.t(), lambda x: x.reshape(20), lambda x: x.unsqueeze(1), lambda x: x.clone()):
        r = _check(fn(unco()))
        assert r._nnz() == 5 and not r.is_coalesced()
        np.testing.assert_array_equal(_dense(r), fn(st.tensor(_dense(unco()))).numpy())
    for fn in (lambda x: x.t(), lambda x: x.narrow(0, 1, 3), lambda x: x.index_select(1, st.tensor([0, 0, 3])),
               lambda x: x.select(0, 1), lambda x: x[1:], lambda x: x.reshape(20), lambda x: x.unsqueeze(1),
               lambda x: st.cat([x, coo() if x.layout is st.sparse_coo else st.tensor(DATA)], 0),
               lambda x: x.clone()):
        v = st.tensor(UNCO_VAL, dtype=F64, requires_grad=True)
        x = st.sparse_coo_tensor(UNCO_IDX, v, (4, 5))
        out = fn(x)
        ref = fn(st.tensor(_dense(x)))
        np.testing.assert_allclose(_dense(out), ref.numpy())
        if out.layout is not st.strided:
            _check(out)
            out = out.to_dense()
        g = np.cos(np.arange(out.numel())).reshape(tuple(out.shape))
        (out * st.tensor(g)).sum().backward()
        # d out / d v_k: each stored entry contributes once at its position
        dense_in = st.tensor(np.zeros((4, 5)), dtype=F64, requires_grad=True)
        (fn(dense_in) * st.tensor(g)).sum().backward()
        np.testing.assert_allclose(v.grad.numpy(), dense_in.grad.numpy()[tuple(UNCO_IDX)])


# ---- coalesced flags and invariants ----

def test_coalesced_flags_are_honest():
    x = coo()
    assert not x.t().is_coalesced()  # as torch (the indices are swapped, not re-sorted)
    assert x.narrow(1, 1, 3).is_coalesced() and x.select(0, 1).is_coalesced()
    assert x.index_select(0, st.tensor([0, 2, 3])).is_coalesced()  # increasing: order kept
    assert not x.index_select(0, st.tensor([3, 0])).is_coalesced()
    assert not x.index_select(0, st.tensor([1, 1])).is_coalesced()
    assert st.cat([x, x], 0).is_coalesced() and not st.cat([x, x], 1).is_coalesced()
    assert st.stack([x, x], 0).is_coalesced()
    assert x.unsqueeze(1).is_coalesced() and x.reshape(20).is_coalesced()
    assert not unco().narrow(0, 0, 4).is_coalesced()
    for r in (x.t(), x.index_select(0, st.tensor([3, 0])), st.cat([x, x], 1), x.permute(1, 0)):
        c = _check(r).coalesce()
        np.testing.assert_array_equal(_dense(c), _dense(r))


def test_t_coalesces_back_to_the_original():
    x = coo()
    tt = x.t().t().coalesce()
    np.testing.assert_array_equal(tt.indices().numpy(), x.indices().numpy())
    np.testing.assert_array_equal(tt.values().numpy(), x.values().numpy())


# ---- CSR ----

def test_csr_t_is_the_csr_of_the_transpose():
    sp = pytest.importorskip("scipy.sparse")
    x = csr()
    r = _check(x.t())
    assert r.layout is st.sparse_csr  # torch returns CSC; sparsetorch has no CSC layout
    ref = sp.csr_array(DATA).T.tocsr()
    np.testing.assert_array_equal(r.crow_indices().numpy(), ref.indptr)
    np.testing.assert_array_equal(r.col_indices().numpy(), ref.indices)
    np.testing.assert_array_equal(r.values().numpy(), ref.data)
    assert x.t().to_sparse_csr() is not None and x.mT.layout is st.sparse_csr


def test_csr_t_backward_keeps_the_pattern_and_double_backward():
    x = csr(rg=True)
    y = x.t()
    g = st._ops.with_values(y.detach(), st.tensor(np.arange(7.0)))  # a gradient with y's pattern
    (gx,) = st.autograd.grad(y, x, g, create_graph=True)
    assert gx.layout is st.sparse_csr and gx._data.crow is x._data.crow  # exactly x's pattern
    np.testing.assert_array_equal(_dense(gx), _dense(g.detach()).T)
    dense_g = st.tensor(W.T, dtype=F64)
    (gx2,) = st.autograd.grad(y, x, dense_g)
    np.testing.assert_allclose(_dense(gx2), np.where(DATA != 0, W, 0))


def test_coo_to_csr_counting_sort_paths():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(30, 40))
    a[rng.random(a.shape) < 0.8] = 0
    x = st.tensor(a).to_sparse()
    for y in (x.t(), st.cat([x, x], 1), st.sparse_coo_tensor(x.indices().flip(1), x.values().flip(0), x.shape)):
        r = _check(y.to_sparse_csr())
        np.testing.assert_array_equal(_dense(r), _dense(y))
    # duplicates: the counting sort leaves them adjacent; the fallback coalesces them
    d = st.sparse_coo_tensor([[1, 0, 1], [2, 1, 2]], [1.0, 2.0, 3.0], (2, 3))
    r = _check(d.to_sparse_csr())
    assert r._nnz() == 2 and np.array_equal(_dense(r), [[0, 2, 0], [0, 0, 4]])


@pytest.mark.parametrize("dtype", [st.float16, st.float32, st.complex128, st.int64])
def test_counting_sorts_without_scipy_and_for_any_dtype(monkeypatch, dtype):
    """The generic path (CuPy has no sparsetools) and dtypes sparsetools lacks (float16)."""
    a = (DATA * 2).astype(np.float64)
    x = st.tensor(a).to(dtype)
    for tools in (True, False):
        if not tools:
            monkeypatch.setattr(K, "_tools", lambda be: None)
        r = _check(x.to_sparse_csr().t())
        np.testing.assert_array_equal(_dense(r), a.T.astype(r.dtype.np))
        r = _check(x.to_sparse().t().to_sparse_csr())
        np.testing.assert_array_equal(_dense(r), a.T.astype(r.dtype.np))


def _batched():
    b = np.zeros((3, 4, 5))
    b[:, [0, 1, 3], [1, 2, 4]] = np.arange(1.0, 10.0).reshape(3, 3)  # 3 entries per batch
    b[1, 0, 1] = 0.0  # batch 1 has another pattern (and still 3 entries)
    b[1, 2, 3] = 7.0
    return b


def test_batched_csr():
    b = _batched()
    x = st.tensor(b).to_sparse_csr()
    assert x.crow_indices().shape == (3, 5)
    cases = {
        "transpose": (x.transpose(1, 2), b.transpose(0, 2, 1), st.sparse_csr),
        "mT": (x.mT, b.transpose(0, 2, 1), st.sparse_csr),
        "select": (x.select(0, 1), b[1], st.sparse_csr),
        "getitem": (x[2], b[2], st.sparse_csr),
        "narrow": (x.narrow(0, 1, 2), b[1:3], st.sparse_csr),
        "index_select": (x.index_select(0, st.tensor([2, 0, 2])), b[[2, 0, 2]], st.sparse_csr),
        "squeeze": (x.narrow(0, 1, 1).squeeze(0), b[1], st.sparse_csr),
        "select-row": (x.select(1, 0), b[:, 0], st.sparse_coo),
        "cat": (st.cat([x, x], 0), np.concatenate([b, b]), st.sparse_csr),
        "stack": (st.stack([x[0], x[2]]), b[[0, 2]], st.sparse_csr),
        "unsqueeze": (x[0].unsqueeze(0), b[:1], st.sparse_csr),
        "clone": (x.clone(), b, st.sparse_csr),
    }
    for name, (r, want, lay) in cases.items():
        assert r.layout is lay, name
        np.testing.assert_array_equal(_dense(_check(r)), want, err_msg=name)
    with pytest.raises(RuntimeError, match="same type"):
        x.transpose(0, 1)
    with pytest.raises(RuntimeError, match="same number of specified elements"):
        st.stack([x[0], csr()])  # 3 and 8 entries


def test_batched_csr_gradients():
    b = _batched()
    x = st.tensor(b, dtype=F64).to_sparse_csr().requires_grad_()
    y = x.transpose(1, 2).select(0, 1)
    (y.to_dense() * st.tensor(np.ones((5, 4)), dtype=F64)).sum().backward()
    g = x.grad
    assert g.layout is st.sparse_csr and g._nnz() == x._nnz()
    want = np.zeros_like(b)
    want[1] = (b[1] != 0)
    np.testing.assert_array_equal(_dense(g), want)


def test_csr_row_slice_is_cheap_and_shares_buffers():
    x = csr()
    r = _check(x[1:3])
    np.testing.assert_array_equal(_dense(r), DATA[1:3])
    assert np.shares_memory(r._data.col, x._data.col) and np.shares_memory(r._data.values, x._data.values)


def test_csr_index_select_columns_shuffled_and_repeated():
    x = csr()
    for idx in ([4, 1, 1, 0], [0, 3, 4], [], [2, 2]):
        r = _check(x.index_select(1, st.tensor(idx, dtype=st.int64)))
        assert r.layout is st.sparse_csr
        np.testing.assert_array_equal(_dense(r), DATA[:, idx])


# ---- index_select ----

def test_index_select_large_dim_uses_binary_search():
    n = 10 ** 8  # far more than nnz: no position table of that size is built
    x = st.sparse_coo_tensor([[5, 99, 10 ** 7, 99]], [1.0, 2.0, 3.0, 4.0], (n,))
    idx = st.tensor([99, 10 ** 7, 99, 7])
    r = _check(x.index_select(0, idx))
    np.testing.assert_array_equal(_dense(r), [6.0, 3.0, 6.0, 0.0])
    r = _check(x.index_select(0, st.tensor([10 ** 7, 5])))
    np.testing.assert_array_equal(_dense(r), [3.0, 1.0])


def test_index_select_int32_index_and_torch_repeats():
    torch = pytest.importorskip("torch")
    idx = [3, 3, 0, 1, 3]
    s = _check(coo().index_select(0, st.tensor(idx, dtype=st.int32)))
    t = torch.tensor(DATA).to_sparse().index_select(0, torch.tensor(idx))  # torch: int64 only
    np.testing.assert_array_equal(_dense(s), t.to_dense().numpy())
    assert s._nnz() == t._nnz()


def test_index_select_is_vectorised_on_a_large_tensor():
    """1M stored entries, 10k rows (torch #54561 was 100x slower than a Python loop). Only the
    result is checked here; the timing is in the report."""
    rng = np.random.default_rng(0)
    n, nnz = 100_000, 1_000_000
    idx = np.stack([rng.integers(0, n, nnz), rng.integers(0, n, nnz)])
    x = st.sparse_coo_tensor(idx, rng.normal(size=nnz).astype(np.float32), (n, n)).coalesce()
    rows = rng.choice(n, 10_000, replace=False)
    r = x.index_select(0, st.tensor(rows))
    q = x._data
    keep = np.isin(q.indices[0], rows)
    assert r._nnz() == int(keep.sum())
    pos = {v: i for i, v in enumerate(rows)}
    got = sorted(zip(r._data.indices[0].tolist(), r._data.indices[1].tolist(), r._data.values.tolist()))
    want = sorted(zip([pos[v] for v in q.indices[0][keep].tolist()], q.indices[1][keep].tolist(),
                      q.values[keep].tolist()))
    assert got == want


# ---- errors ----

def test_errors():
    h = st.tensor(np.ones((2, 3, 4))).to_sparse(2)
    with pytest.raises(RuntimeError, match="sparse and dense"):
        h.permute(0, 2, 1)
    with pytest.raises(RuntimeError, match="transposed dimensions must be sparse"):
        h.transpose(1, 2)
    np.testing.assert_array_equal(_dense(_check(h.transpose(0, 1))), np.ones((3, 2, 4)))
    with pytest.raises(RuntimeError, match="same layout.*to_dense"):
        st.cat([coo(), st.tensor(DATA)])
    with pytest.raises(RuntimeError, match="same layout"):
        st.cat([st.tensor(DATA), coo()])
    with pytest.raises(RuntimeError, match="same layout"):
        st.stack([coo(), csr()])
    with pytest.raises(RuntimeError, match="dense dimensions"):
        h.reshape(6, 2, 2)
    np.testing.assert_array_equal(_dense(_check(h.reshape(6, 4))), np.ones((6, 4)))
    with pytest.raises(NotImplementedError, match="to_sparse_coo"):
        csr().unsqueeze(1)
    with pytest.raises(NotImplementedError, match="to_sparse_coo"):
        csr().reshape(20)
    with pytest.raises(NotImplementedError, match="to_dense"):
        coo()[st.tensor(DATA) > 0]
    with pytest.raises(IndexError, match="out of bounds"):
        coo()[:, 9]
    with pytest.raises(ValueError, match="step"):
        coo()[::-1]
    with pytest.raises(IndexError, match="out of range"):
        coo().index_select(0, st.tensor([4]))
    with pytest.raises(RuntimeError, match="exceeds"):
        coo().narrow(0, 3, 2)
    with pytest.raises(RuntimeError, match="t\\(\\) expects"):
        st.tensor(np.ones((2, 2, 2))).to_sparse().t()


# ---- clone, detach, requires_grad_, split/unbind, narrow_copy ----

def test_clone_is_deep_and_differentiable():
    for x in (coo(rg=True), csr(rg=True), unco(rg=True)):
        c = _check(x.clone())
        assert c.layout is x.layout and c.grad_fn is not None
        p, q = c._data, x._data
        for a, b in ((p.values, q.values),) + (((p.indices, q.indices),) if x.layout is st.sparse_coo
                                               else ((p.crow, q.crow), (p.col, q.col))):
            assert not np.shares_memory(a, b)
        if x.layout is st.sparse_coo:  # under autograd an uncoalesced input is coalesced first
            assert c.is_coalesced() and x.detach().clone().is_coalesced() == x.is_coalesced()
        c.to_dense().sum().backward()
        assert x.grad.layout is x.layout and x.grad._nnz() == x.detach().coalesce()._nnz()


def test_detach_and_requires_grad():
    x = coo(rg=True)
    d = x.detach()
    assert not d.requires_grad and d._data is x._data
    y = x.t()
    assert y.requires_grad and not y.detach().requires_grad
    z = coo().requires_grad_()
    assert z.requires_grad and z.is_leaf


def test_split_chunk_unbind_narrow_copy():
    x = coo()
    parts = x.split(2, 1)
    np.testing.assert_array_equal(np.concatenate([_dense(p) for p in parts], 1), DATA)
    np.testing.assert_array_equal(np.stack([_dense(r) for r in csr().unbind(0)]), DATA)
    np.testing.assert_array_equal(np.concatenate([_dense(c) for c in x.chunk(3, 0)]), DATA)
    r = csr().narrow_copy(0, 1, 2)
    assert not np.shares_memory(r._data.values, csr()._data.values)
    np.testing.assert_array_equal(_dense(r), DATA[1:3])
    np.testing.assert_array_equal(st.narrow_copy(st.tensor(DATA), 1, 1, 2).numpy(), DATA[:, 1:3])


def test_inplace_metadata_ops():
    x = coo()
    x.t_()
    np.testing.assert_array_equal(_dense(x), DATA.T)
    y = coo()
    y.unsqueeze_(0)
    assert tuple(y.shape) == (1, 4, 5)
    y.squeeze_(0)
    np.testing.assert_array_equal(_dense(y), DATA)


# ---- sparse_resize_ ----

def test_sparse_resize_grows_only():
    torch = pytest.importorskip("torch")
    x = coo()
    r = x.sparse_resize_((6, 7), 2, 0)
    assert r is x and tuple(x.shape) == (6, 7) and x._version > 0
    np.testing.assert_array_equal(_dense(x)[:4, :5], DATA)
    for size, sd, dd, rx in (((3, 7), 2, 0, "shrinking the size of sparse"),
                            ((6, 7, 1), 3, 0, "changing the number of sparse"),
                            ((6, 7), 1, 0, "len\\(size\\) == sparse_dim \\+ dense_dim")):
        with pytest.raises(RuntimeError, match=rx):
            x.sparse_resize_(size, sd, dd)
        with pytest.raises(RuntimeError, match=rx):
            torch.tensor(DATA).to_sparse().sparse_resize_((6, 7), 2, 0).sparse_resize_(size, sd, dd)
    h = st.tensor(np.ones((2, 3, 2))).to_sparse(2)
    h.sparse_resize_((2, 4, 3), 2, 1)  # a dense dim grows: new positions are zero
    np.testing.assert_array_equal(_dense(h)[:, :3], np.pad(np.ones((2, 3, 2)), ((0, 0), (0, 0), (0, 1))))
    with pytest.raises(RuntimeError, match="shrinking the size of dense"):
        h.sparse_resize_((2, 4, 1), 2, 1)
    e = st.sparse_coo_tensor(st.zeros((2, 0), dtype=st.int64), st.zeros(0), (2, 3))
    e.sparse_resize_((1, 5, 6), 1, 2)  # an empty tensor takes any shape
    assert (e.sparse_dim(), e.dense_dim(), tuple(e.shape)) == (1, 2, (1, 5, 6))


def test_sparse_resize_autograd_and_clear():
    leaf = coo(rg=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.sparse_resize_((5, 5), 2, 0)
    y = leaf.clone()
    y.sparse_resize_((5, 6), 2, 0)
    (y.to_dense() * st.tensor(np.ones((5, 6)), dtype=F64)).sum().backward()
    np.testing.assert_array_equal(_dense(leaf.grad), (DATA != 0).astype(float))
    z = coo()
    z.sparse_resize_and_clear_((2, 2, 3), 1, 2)
    assert z._nnz() == 0 and (z.sparse_dim(), z.dense_dim(), tuple(z.shape)) == (1, 2, (2, 2, 3))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        coo(rg=True).sparse_resize_and_clear_((2, 2), 2, 0)
    with pytest.raises(NotImplementedError, match="COO"):
        csr().sparse_resize_((5, 5), 2, 0)


def test_hybrid_dense_dims_and_dtypes():
    a = np.random.default_rng(3).normal(size=(3, 4, 2, 5)).astype(np.float32)
    a[:, 1] = 0
    h = st.tensor(a).to_sparse(2)
    cases = [(h.transpose(2, 3), a.transpose(0, 1, 3, 2)),  # two dense dims: torch raises, dense answer
             (h.permute(1, 0, 3, 2), a.transpose(1, 0, 3, 2)),
             (h.select(3, 4), a[..., 4]), (h.narrow(2, 1, 1), a[:, :, 1:2]),
             (h.index_select(3, st.tensor([4, 4, 0])), a[..., [4, 4, 0]]), (h[:, 2], a[:, 2])]
    for r, want in cases:
        assert _check(r).dtype is st.float32 and r.dense_dim() == want.ndim - r.sparse_dim()
        np.testing.assert_array_equal(_dense(r), want)
    i = st.tensor([0, 3, 0, 5], dtype=st.int32).to_sparse()
    assert i.select(0, 1).dtype is st.int32 and i[1].item() == 3  # last sparse dim: dense, as torch
    assert st.cat([i, i.to(st.float64)]).dtype is st.float64  # promoted as the dense cat
