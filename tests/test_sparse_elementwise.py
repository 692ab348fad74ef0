"""Elementwise ops and reductions on sparse COO/CSR tensors: semantics the op table does not
reach (broadcasting with dense, two sparse operands, uncoalesced input, teaching errors, softmax,
in-place variants, masked gradients), and parity with torch where torch has the op."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.sparse import _merge, _spmm

F64 = st.float64
DATA = np.array([[0.0, 1.5, 0.0, -0.5], [2.0, 0.0, -3.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
OTHER = np.array([[1.0, 0.0, 0.0, 2.0], [0.5, 0.0, 4.0, 0.0], [0.0, -1.0, 0.0, 0.0]])


def _dense(t):
    return (t.to_dense() if t.layout is not st.strided else t).detach().numpy()


def _sp(a, layout, dtype=F64):
    d = st.tensor(np.asarray(a), dtype=dtype)
    return d.to_sparse() if layout == "coo" else d.to_sparse_csr()


def _positions(t):
    """Set of stored positions (coalesced)."""
    c = t.detach().to_sparse_coo().coalesce() if t.layout is st.sparse_csr else t.detach().coalesce()
    return set(map(tuple, c.indices().numpy().T.tolist()))


def _values_fn(fn, s):
    """``fn`` as a function of the stored values of sparse ``s`` (for gradcheck)."""
    pattern = s.detach().coalesce() if s.layout is st.sparse_coo else s.detach()

    def f(v, *rest):
        out = fn(st._ops.with_values(pattern, v), *rest)
        return out.to_dense() if out.layout is not st.strided else out
    return f, pattern.values().detach().clone().requires_grad_(True)


# ---- sparse * dense with full broadcasting ----

BROADCAST = [  # (sparse dense-shape, sparse_dim or None, dense shape)
    ((3, 1), None, (3, 4)),
    ((3, 4), None, (4,)),
    ((3, 4), None, (3, 1)),
    ((3, 4), None, (2, 3, 4)),
    ((3, 4), None, ()),
    ((1, 4), None, (3, 1)),
    ((2, 3, 4), 1, (4,)),          # hybrid: dense operand lines up with the dense dim
    ((2, 3, 4), 2, (3, 1)),        # hybrid, broadcast over the dense dim
    ((2, 1, 4), 1, (2, 5, 4)),     # hybrid whose dense dim broadcasts
    ((1, 3), None, (2, 1, 1)),
]


def _make_sparse(shape, sparse_dim, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
    if sparse_dim is None:
        a[rng.random(shape) < 0.4] = 0
        return st.tensor(a, dtype=F64).to_sparse()
    a[rng.random(shape[:sparse_dim]) < 0.4] = 0
    return st.tensor(a, dtype=F64).to_sparse(sparse_dim)


@pytest.mark.parametrize("op", ["mul", "rmul", "div"])
@pytest.mark.parametrize("sshape,sd,dshape", BROADCAST)
def test_sparse_dense_broadcasting_gives_the_dense_answer(op, sshape, sd, dshape):
    s = _make_sparse(sshape, sd)
    d = st.tensor(np.random.default_rng(1).uniform(0.5, 2.0, dshape), dtype=F64)
    f = {"mul": lambda a, b: a * b, "rmul": lambda a, b: b * a, "div": lambda a, b: a / b}[op]
    got = f(s, d)
    assert got.layout is st.sparse_coo
    want = f(s.to_dense(), d)
    np.testing.assert_allclose(_dense(got), want.numpy(), rtol=1e-12)
    assert got.shape == want.shape
    # every stored entry of the broadcast pattern is there, nothing else
    assert got._nnz() <= int(np.prod(got.shape))


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_csr_and_coo_broadcast_keep_their_layout(layout):
    s = _sp([[1.0], [0.0], [2.0]], layout)
    got = s * st.arange(4.0, dtype=F64)
    assert got.layout is s.layout and tuple(got.shape) == (3, 4)
    np.testing.assert_array_equal(_dense(got), [[0, 1, 2, 3], [0, 0, 0, 0], [0, 2, 4, 6]])
    # a leading broadcast dim: batched CSR (each batch has the same pattern)
    b = _sp(DATA, layout) * st.ones(2, 3, 4, dtype=F64)
    assert b.layout is s.layout and tuple(b.shape) == (2, 3, 4)
    np.testing.assert_array_equal(_dense(b), np.broadcast_to(DATA, (2, 3, 4)))


def test_broadcasting_errors_name_the_sizes():
    with pytest.raises(RuntimeError, match="size of tensor a"):
        _sp(DATA, "coo") * st.ones(5)
    with pytest.raises(RuntimeError, match="same size"):
        _sp(DATA, "coo") * _sp(DATA[:2], "coo")


@pytest.mark.parametrize("sshape,sd,dshape", BROADCAST[:6])
def test_sparse_dense_gradients(sshape, sd, dshape):
    s = _make_sparse(sshape, sd)
    d0 = np.random.default_rng(2).uniform(0.5, 2.0, dshape)
    f, v = _values_fn(lambda x, d: x * d / (d + 3), s)
    d = st.tensor(d0, dtype=F64).requires_grad_(True)
    assert st.autograd.gradcheck(f, (v, d))
    # the gradient of the sparse leaf has its pattern; the dense one is dense
    leaf = s.detach().coalesce().requires_grad_(True)
    d = st.tensor(d0, dtype=F64).requires_grad_(True)
    (leaf * d).to_dense().sum().backward()
    assert leaf.grad.layout is st.sparse_coo and _positions(leaf.grad) <= _positions(leaf)
    assert d.grad.layout is st.strided and tuple(d.grad.shape) == tuple(d.shape)
    np.testing.assert_allclose(d.grad.numpy(), _sum_to(np.broadcast_to(
        s.to_dense().numpy(), np.broadcast_shapes(s.shape, d0.shape)), d0.shape))


def _sum_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


def test_division_by_dense_zeros_at_implicit_entries_stays_zero():
    s = _sp(DATA, "coo")
    d = st.zeros(3, 4, dtype=F64)
    r = s / d
    # stored entries: x / 0 = +-inf; implicit entries are not computed (0, not nan), as torch
    dense = _dense(r)
    assert np.isinf(dense[DATA != 0]).all() and (dense[DATA == 0] == 0).all()


# ---- two sparse operands ----

@pytest.mark.parametrize("layouts", [("coo", "coo"), ("csr", "csr"), ("coo", "csr")])
def test_add_sub_union_and_mul_intersection(layouts):
    a, b = _sp(DATA, layouts[0]), _sp(OTHER, layouts[1])
    for f in (lambda x, y: x + y, lambda x, y: x - y, lambda x, y: st.add(x, y, alpha=-2.0),
              lambda x, y: st.sub(x, y, alpha=0.5)):
        r = f(a, b)
        np.testing.assert_allclose(_dense(r), f(a.to_dense(), b.to_dense()).numpy())
        assert _positions(r) == _positions(a) | _positions(b)
        assert r.layout is (st.sparse_csr if layouts == ("csr", "csr") else st.sparse_coo)
    r = a * b
    np.testing.assert_allclose(_dense(r), DATA * OTHER)
    assert _positions(r) == _positions(a) & _positions(b)


def test_union_keeps_cancelled_and_stored_zero_entries():
    for layout in ("coo", "csr"):
        a, b = _sp(DATA, layout), _sp(DATA, layout)  # equal patterns in separate buffers: a merge
        for r in (a - b, a - a):
            assert _positions(r) == _positions(a) and not _dense(r).any()
    a = _sp(DATA, "coo")
    z = st.sparse_coo_tensor([[0, 1], [0, 1]], [0.0, 1.0], (3, 4), dtype=F64)
    assert _positions(a + z) == _positions(a) | {(0, 0), (1, 1)}


@pytest.mark.parametrize("mode", ["numba", "scipy", "numpy"])
def test_merge_paths_agree(mode, monkeypatch):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((60, 70)), rng.standard_normal((60, 70))
    a[rng.random(a.shape) < 0.8] = 0
    b[rng.random(b.shape) < 0.8] = 0
    b[3] = -a[3]  # exact cancellations
    monkeypatch.setattr(_merge, "_SCIPY_MIN_NNZ", 0 if mode == "scipy" else 10**12)
    old = _spmm.use_numba(mode == "numba")
    try:
        for layout in ("coo", "csr"):
            x, y = _sp(a, layout), _sp(b, layout)
            r = x - y
            np.testing.assert_allclose(_dense(r), a - b)
            assert _positions(r) == _positions(x) | _positions(y)
    finally:
        _spmm.use_numba(old)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_sparse_gradients_are_masked_for_both_operands(layout):
    a, b = _sp(DATA, layout).requires_grad_(True), _sp(OTHER, layout).requires_grad_(True)
    w = st.tensor(np.arange(12.0).reshape(3, 4), dtype=F64)
    (st.sub(a, b, alpha=2.0).to_dense() * w).sum().backward()
    for leaf, scale, data in ((a, 1.0, DATA), (b, -2.0, OTHER)):
        assert leaf.grad.layout is leaf.layout and _positions(leaf.grad) == _positions(leaf)
        np.testing.assert_allclose(_dense(leaf.grad), np.where(data != 0, scale * w.numpy(), 0))
    a.grad = b.grad = None
    (a * b).to_dense().sum().backward()
    np.testing.assert_allclose(_dense(a.grad), np.where(DATA != 0, OTHER, 0))
    np.testing.assert_allclose(_dense(b.grad), np.where(OTHER != 0, DATA, 0))
    f, v = _values_fn(lambda x, y: x + y * x, _sp(DATA, layout))
    assert st.autograd.gradcheck(lambda v: f(v, _sp(OTHER, layout)), (v,))


def test_sparse_plus_dense_is_dense():
    s, d = _sp(DATA, "coo"), st.ones(3, 4, dtype=F64)
    for r, want in ((s + d, DATA + 1), (d + s, DATA + 1), (d - s, 1 - DATA), (s - d, DATA - 1),
                    (_sp(DATA, "csr") + st.ones(4, dtype=F64), DATA + 1)):
        assert r.layout is st.strided
        np.testing.assert_allclose(r.numpy(), want)


def test_type_promotion_follows_the_dense_rule():
    s32 = _sp(DATA, "coo", st.float32)
    assert (s32 * st.ones(3, 4, dtype=F64)).dtype is F64
    assert (s32 + _sp(OTHER, "coo")).dtype is F64
    assert (s32 * 2).dtype is st.float32
    i = _sp(DATA * 2, "coo", st.int64)
    assert (i * 2.5).dtype is st.float32 and (i * 2).dtype is st.int64
    assert (i / 2).dtype is st.float32
    assert s32.to(F64).dtype is F64 and s32.double().layout is st.sparse_coo


# ---- teaching errors: the result would be dense ----

@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("fn", [
    lambda x: x.exp(), lambda x: x.cos(), lambda x: x + 1, lambda x: 1 - x, lambda x: x - 2.5,
    lambda x: x.sigmoid(), lambda x: x.log(), lambda x: 2 / x, lambda x: st.ones(3, 4) / x,
    lambda x: x.pow(0), lambda x: x ** -1, lambda x: x.clamp(1, 2), lambda x: x.clamp(max=-1),
    lambda x: st.softmax(x, 1), lambda x: x / x,
])
def test_non_zero_preserving_ops_raise_with_the_to_dense_hint(layout, fn):
    with pytest.raises(NotImplementedError, match=r"to_dense\(\)") as e:
        fn(_sp(DATA, layout, st.float32))
    assert "dense" in str(e.value)


def test_adding_zero_keeps_the_pattern():
    s = _sp(DATA, "coo")
    assert (s + 0).layout is st.sparse_coo and _positions(s + 0) == _positions(s)


# ---- uncoalesced input ----

def _uncoalesced():
    # (1, 0) stored three times: 0.5 + 2.5 - 1.0 = 2.0; (0, 1) twice: 3.0 - 4.0 = -1.0
    idx = [[1, 0, 1, 0, 1, 2], [0, 1, 0, 1, 0, 3]]
    return st.sparse_coo_tensor(idx, [0.5, 3.0, 2.5, -4.0, -1.0, 0.25], (3, 4), dtype=F64)


@pytest.mark.parametrize("fn", [
    lambda x: x.abs(), lambda x: x.square(), lambda x: x.relu(), lambda x: x.sin(),
    lambda x: x.sign(), lambda x: x.abs().sqrt(), lambda x: x ** 3, lambda x: x.clamp(-0.5, 0.5),
    lambda x: -x, lambda x: x * 2, lambda x: x / 4, lambda x: x.to(st.float32),
    lambda x: x * st.arange(4.0, dtype=F64), lambda x: x.sum(1), lambda x: x.amax(0),
    lambda x: x + _sp(OTHER, "coo"), lambda x: x * _sp(OTHER, "coo"),
])
def test_uncoalesced_input_matches_its_dense_value(fn):
    u = _uncoalesced()
    assert not u.is_coalesced()
    want = fn(u.to_dense())
    np.testing.assert_allclose(_dense(fn(u)), _dense(want), rtol=1e-6)
    # and through the gradient (of the stored values)
    f, v = _values_fn(fn, u.coalesce())
    if fn(u).dtype.is_floating_point and fn(u).dtype is F64:
        assert st.autograd.gradcheck(f, (v,))


def test_linear_ops_keep_duplicates_when_no_gradient_is_needed():
    u = _uncoalesced()
    for r in (-u, u * 2, u / 4):
        assert not r.is_coalesced() and r._nnz() == u._nnz()
    leaf = _uncoalesced().requires_grad_(True)
    (-leaf).to_dense().sum().backward()
    np.testing.assert_allclose(_dense(leaf.grad), np.where(_dense(leaf) != 0, -1.0, 0.0)
                               + np.where(_dense(leaf) == 0, 0, 0))


# ---- in-place variants ----

@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_inplace_ops_on_sparse(layout):
    x = _sp(DATA, layout)
    x.neg_()
    x.mul_(2)
    x.div_(4)
    x.abs_()
    x.sqrt_()
    assert x.layout is (st.sparse_coo if layout == "coo" else st.sparse_csr)
    np.testing.assert_allclose(_dense(x), np.sqrt(np.abs(DATA) / 2))
    x.add_(_sp(OTHER, layout))
    np.testing.assert_allclose(_dense(x), np.sqrt(np.abs(DATA) / 2) + OTHER)
    with pytest.raises(RuntimeError, match="layout"):
        x.add_(st.ones(3, 4, dtype=F64))  # the result of sparse + dense is dense
    # with autograd, on a non-leaf
    a = _sp(DATA, layout).requires_grad_(True)
    b = a * 1.0
    b.mul_(3)
    b.sin_()
    b.to_dense().sum().backward()
    np.testing.assert_allclose(_dense(a.grad), np.where(DATA != 0, 3 * np.cos(3 * DATA), 0))


# ---- reductions ----

@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sum_layouts(layout):
    x = _sp(DATA, layout)
    assert x.sum().layout is st.strided and x.sum().ndim == 0
    for dim in (0, 1, -1):
        r = x.sum(dim)
        np.testing.assert_allclose(_dense(r), DATA.sum(dim))
        assert r.layout is (st.sparse_coo if layout == "coo" else st.strided)
        k = x.sum(dim, keepdim=True)
        assert k.layout is x.layout and tuple(k.shape) == DATA.sum(dim, keepdims=True).shape
        np.testing.assert_allclose(_dense(k), DATA.sum(dim, keepdims=True))
    r = st.sparse.sum(x, dtype=st.float32)
    assert r.dtype is st.float32 and float(r) == pytest.approx(DATA.sum())
    np.testing.assert_allclose(_dense(st.sparse.sum(x, 1)), DATA.sum(1))


def test_sum_keeps_only_nonempty_slices():
    r = _sp(DATA, "coo").sum(1)  # row 2 has no stored entry: not stored in the result
    assert _positions(r) == {(0,), (1,)}
    h = st.tensor(np.arange(24.0).reshape(2, 3, 4), dtype=F64).to_sparse(2)
    assert st.sum(h, (0, 1)).layout is st.strided  # only dense dims remain: dense, as torch
    assert st.sum(h, 2).layout is st.sparse_coo


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_mean_counts_implicit_zeros_and_amax_includes_them(layout):
    x = _sp(DATA, layout)
    np.testing.assert_allclose(float(x.mean()), DATA.mean())
    np.testing.assert_allclose(_dense(x.mean(1)), DATA.mean(1))
    neg = _sp(-np.abs(DATA) - (DATA != 0), layout)  # stored values all negative
    dense = -np.abs(DATA) - (DATA != 0)
    np.testing.assert_allclose(float(neg.amax()), 0.0)  # an implicit zero is the max
    np.testing.assert_allclose(float(neg.amin()), dense.min())
    np.testing.assert_allclose(_dense(neg.amax(1)), dense.max(1))
    np.testing.assert_allclose(_dense(neg.amin(0)), dense.min(0))


def test_amax_gradient_goes_to_the_stored_maximum():
    x = _sp(DATA, "coo").requires_grad_(True)
    x.amax(1).to_dense().sum().backward()
    # row 0: max 1.5 (stored); row 1: max 2.0 (stored); row 2: no stored entry
    np.testing.assert_allclose(_dense(x.grad), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    y = _sp(np.where(DATA != 0, -1.0, 0.0), "csr").requires_grad_(True)
    y.amax(1).sum().backward()  # the max (0) is an implicit zero: no stored entry gets a gradient
    assert not _dense(y.grad).any()


# ---- softmax ----

@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_treats_unspecified_entries_as_minus_inf(layout, log):
    x = _sp(DATA * 1e4, layout)  # large magnitudes: stable
    fn = st.sparse.log_softmax if log else st.sparse.softmax
    for dim in (0, 1):
        r = fn(x, dim)
        assert r.layout is x.layout and _positions(r) == _positions(x)
        masked = np.where(DATA != 0, DATA * 1e4, -np.inf)
        m = masked.max(dim, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        z = masked - m
        lse = np.log(np.exp(z).sum(dim, keepdims=True))
        want = np.where(DATA != 0, z - lse if log else np.exp(z - lse), 0)
        got = _dense(r)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    f, v = _values_fn(lambda t: fn(t, 1), _sp(DATA, layout))
    assert st.autograd.gradcheck(f, (v,))


def test_softmax_dtype_and_hybrid():
    x = _sp(DATA, "coo", st.float32)
    assert st.sparse.softmax(x, 1, dtype=F64).dtype is F64
    h = st.tensor(np.arange(24.0).reshape(2, 3, 4) / 10, dtype=F64).to_sparse(1)
    r = st.sparse.softmax(h, 2)  # a dense dim: an ordinary softmax of each stored slice
    np.testing.assert_allclose(_dense(r), st.softmax(h.to_dense(), 2).numpy())


# ---- parity with torch ----

def _oracle(torch, fn, *args):
    """torch on the given layouts, else on COO (torch lacks many CSR kernels): the dense answer."""
    try:
        return fn(*args)
    except (RuntimeError, NotImplementedError):
        return fn(*[a.to_sparse_coo() if getattr(a, "layout", None) is torch.sparse_csr else a
                    for a in args])


def _torch_pair(kind):
    torch = pytest.importorskip("torch")
    t = torch.tensor(DATA)
    return torch, (t.to_sparse() if kind == "coo" else t.to_sparse_csr()), _sp(DATA, kind)


def _check(torch, tr, sr):
    want = tr.to_dense() if tr.layout is not torch.strided else tr
    np.testing.assert_allclose(_dense(sr), want.numpy(), rtol=1e-12, atol=1e-12)
    assert (sr.layout is st.strided) == (tr.layout is torch.strided)


@pytest.mark.parametrize("kind", ["coo", "csr"])
@pytest.mark.parametrize("name", ["abs", "neg", "sin", "tanh", "sqrt_abs", "relu", "square", "sgn",
                                  "expm1", "asinh", "trunc", "mul2", "div4", "pow2", "isnan"])
def test_unary_parity_with_torch(kind, name):
    torch, t, s = _torch_pair(kind)
    f = {"sqrt_abs": lambda x: x.abs().sqrt(), "mul2": lambda x: x * 2, "div4": lambda x: x / 4,
         "pow2": lambda x: x ** 2}.get(name, lambda x: getattr(x, name)())
    sr = f(s)
    assert sr.layout is s.layout
    _check(torch, _oracle(torch, f, t), sr)


@pytest.mark.parametrize("kind", ["coo", "csr"])
def test_binary_and_reduction_parity_with_torch(kind):
    torch, t, s = _torch_pair(kind)
    to = torch.tensor(OTHER)
    t2 = to.to_sparse() if kind == "coo" else to.to_sparse_csr()
    s2 = _sp(OTHER, kind)
    d = np.arange(12.0).reshape(3, 4)
    td, sd = torch.tensor(d), st.tensor(d)
    cases = [
        (lambda L, a, b, x: a + b), (lambda L, a, b, x: a - b), (lambda L, a, b, x: a * b),
        (lambda L, a, b, x: a * x), (lambda L, a, b, x: x + a), (lambda L, a, b, x: L.sum(a)),
        (lambda L, a, b, x: a * 2.5), (lambda L, a, b, x: L.sparse.softmax(a, 1)),
        (lambda L, a, b, x: L.sparse.log_softmax(a, 0)),
        (lambda L, a, b, x: L.sum(a, 1, keepdim=True)),
    ]
    if kind == "coo":
        cases += [(lambda L, a, b, x: L.sum(a, 0)), (lambda L, a, b, x: L.sparse.sum(a, 1))]
    for f in cases:
        tr = _oracle(torch, lambda a, b, f=f: f(torch, a, b, td), t, t2)
        _check(torch, tr, f(st, s, s2, sd))


@pytest.mark.parametrize("fn", [lambda x: x.max(1), lambda x: x.argmax(), lambda x: st.argmin(x, 0),
                                lambda x: x.prod(), lambda x: x.eq(x)])
def test_reductions_without_a_sparse_kernel_raise_not_implemented(fn):
    with pytest.raises(NotImplementedError, match="to_dense"):
        fn(_sp(DATA, "coo"))


def test_sum_and_mean_dtype_of_integer_and_bool_input():
    i = _sp(DATA * 2, "coo", st.int64)
    assert i.sum().dtype is st.int64 and i.sum(0).dtype is st.int64
    b = st.tensor(DATA != 0).to_sparse()
    assert int(b.sum()) == int((DATA != 0).sum()) and b.sum().dtype is st.int64
    with pytest.raises(RuntimeError, match="floating point"):
        i.mean()
    np.testing.assert_allclose(float(i.mean(dtype=F64)), (DATA * 2).mean())
