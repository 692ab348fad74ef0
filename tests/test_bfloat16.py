"""bfloat16 against torch: promotion, finfo, creation and printing, conversions, bitwise
elementwise results, float32-accumulated reductions and products, sparse paths, nn layers."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def _pair(shape=(64, 33), seed=0, scale=3.0):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    return st.tensor(x).bfloat16(), torch.tensor(x).bfloat16()


def _same(ours, theirs):
    """Same dtype name and the very same bfloat16 bits (NaN where torch has NaN)."""
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    a = ours.detach().float().numpy()
    b = theirs.detach().float().numpy()
    np.testing.assert_array_equal(a, b)


# ---- dtype rules ----

@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_table(a):
    for b in DTYPES:
        want = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert st.promote_types(getattr(st, a), getattr(st, b)).name == str(want).split(".")[1], (a, b)


@pytest.mark.parametrize("other", [1.5, 2, True, 1j, "int0d", "f16", "f16_0d", "f64_0d", "i64"])
def test_result_type_with_numbers_and_0d(other):
    def mk(T):
        x = T.ones(3, dtype=T.bfloat16)
        o = {"int0d": T.tensor(3), "f16": T.ones(3, dtype=T.float16),
             "f16_0d": T.tensor(1.0, dtype=T.float16), "f64_0d": T.tensor(1.0, dtype=T.float64),
             "i64": T.ones(3, dtype=T.int64)}.get(other, other) if isinstance(other, str) else other
        return T.result_type(x, o), (x + o).dtype, T.result_type(o, T.tensor(1.0, dtype=T.bfloat16))

    for ours, theirs in zip(mk(st), mk(torch)):
        assert ours.name == str(theirs).split(".")[1]


def test_finfo_matches_torch():
    f, g = st.finfo(st.bfloat16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(f, name) == getattr(g, name), name
    assert st.bfloat16.itemsize == 2 and st.bfloat16.is_floating_point
    assert st.bfloat16.to_complex() is st.complex64


# ---- creation, conversion, printing ----

def test_creation_and_conversions():
    vals = [1.1, 2.2, -3.3, 1e-3, 12345.678, 1e10]
    _same(st.tensor(vals, dtype=st.bfloat16), torch.tensor(vals, dtype=torch.bfloat16))
    for name in ("zeros", "ones"):
        _same(getattr(st, name)(2, 3, dtype=st.bfloat16), getattr(torch, name)(2, 3, dtype=torch.bfloat16))
    _same(st.full((2,), 0.1, dtype=st.bfloat16), torch.full((2,), 0.1, dtype=torch.bfloat16))
    _same(st.arange(0, 2, 0.3, dtype=st.bfloat16), torch.arange(0, 2, 0.3, dtype=torch.bfloat16))
    x = st.tensor(vals)
    tx = torch.tensor(vals)
    _same(x.to(st.bfloat16), tx.to(torch.bfloat16))
    _same(x.bfloat16(), tx.bfloat16())
    _same(x.type(st.bfloat16), tx.type(torch.bfloat16))
    assert x.bfloat16().type() == tx.bfloat16().type() == "torch.BFloat16Tensor"
    _same(x.bfloat16().float(), tx.bfloat16().float())
    _same(x.bfloat16().double(), tx.bfloat16().double())
    _same(st.tensor([1, 2, 300]).bfloat16(), torch.tensor([1, 2, 300]).bfloat16())
    assert st.rand(3, dtype=st.bfloat16).dtype is st.bfloat16
    r = st.randn(1000, dtype=st.bfloat16)
    assert r.dtype is st.bfloat16 and 0.8 < float(r.float().std()) < 1.2
    u = st.rand(1000, dtype=st.bfloat16).float()
    assert float(u.min()) >= 0 and float(u.max()) < 1


def test_item_tolist():
    x, tx = _pair((3, 4))
    assert x.tolist() == tx.tolist()
    assert x[1, 2].item() == tx[1, 2].item()
    assert type(x[0, 0].item()) is float


def test_numpy_refuses_bfloat16_as_torch():
    x = st.ones(2, dtype=st.bfloat16)
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        x.numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="requires grad"):  # as torch: that check comes first
        x.requires_grad_().numpy()
    arr = np.ones(2, dtype=ml_dtypes.bfloat16)
    for f in (st.from_numpy, st.tensor, st.as_tensor):
        with pytest.raises(TypeError, match="ml_dtypes.bfloat16"):
            f(arr)


@pytest.mark.parametrize("vals", [[1.1, 2.2, 3.3], [1e-3, 12345.678, 1e10], [[1.0, 2.0], [3.0, 4.0]],
                                  3.0, [float("inf"), float("nan"), -1.5], [1e-8, 1.0], [0.5, 1234567.0]])
def test_repr_matches_torch(vals):
    ours = repr(st.tensor(vals, dtype=st.bfloat16)).replace("sparsetorch.", "torch.")
    assert ours == repr(torch.tensor(vals, dtype=torch.bfloat16))


def test_sparse_repr_matches_torch():
    d = [[1.0, 0.0, 2.5]]
    for f in ("to_sparse", "to_sparse_csr"):
        ours = repr(getattr(st.tensor(d, dtype=st.bfloat16), f)()).replace("sparsetorch.", "torch.")
        assert ours == repr(getattr(torch.tensor(d, dtype=torch.bfloat16), f)())


# ---- arithmetic: bitwise as torch ----

@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "pow",
                                "remainder", "fmod"])
def test_binary_bitwise(op):
    (a, ta), (b, tb) = _pair(seed=1), _pair(seed=2)
    _same(getattr(st, op)(a, b), getattr(torch, op)(ta, tb))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("number", [2.5, 3, 0.1, -7.3])
def test_binary_with_number_bitwise(op, number):
    # torch rounds a number to bfloat16 first, except the second operand of mul/div (kept in
    # float); number / tensor is reciprocal() * number
    a, ta = _pair(seed=3)
    _same(getattr(st, op)(a, number), getattr(torch, op)(ta, number))
    _same(getattr(st, op)(number, a), getattr(torch, op)(number, ta))
    _same(number - a, number - ta)
    _same(number / a, number / ta)
    _same(number * a, number * ta)
    _same(a == number, ta == number)
    _same(a <= number, ta <= number)
    _same(a % number, ta % number)


def test_alpha_rounds_to_bfloat16_as_torch():
    (a, ta), (b, tb) = _pair(seed=11), _pair(seed=12)
    for alpha in (0.1, -7.3, 2.5):
        for f in ("add", "sub"):
            got = getattr(st, f)(a, b, alpha=alpha).float().numpy()
            want = getattr(torch, f)(ta, tb, alpha=alpha).float().numpy()
            # torch's SIMD body and scalar tail round a few elements differently
            assert (got != want).mean() < 0.01


@pytest.mark.parametrize("op", ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos",
                                "relu", "floor", "ceil", "trunc", "frac", "round", "reciprocal",
                                "exp2", "log1p", "expm1", "erf", "square", "sign", "atan", "asinh"])
def test_unary_bitwise(op):
    a, ta = _pair(seed=4)
    if op in ("log", "sqrt", "log1p"):
        a, ta = a.abs(), ta.abs()
    _same(getattr(st, op)(a), getattr(torch, op)(ta))


def test_round_decimals_bitwise():
    a, ta = _pair((2000,), seed=5)
    for d in (0, 1, 2, -1):
        _same(st.round(a, decimals=d), torch.round(ta, decimals=d))


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_sum_mean_accumulate_in_float32(dim):
    a, ta = _pair((300, 40), seed=6)
    kw = {} if dim is None else {"dim": dim}
    _same(a.sum(**kw), ta.sum(**kw))
    _same(a.mean(**kw), ta.mean(**kw))
    # a bfloat16 accumulator would stall at 32 (0.1 is below half its spacing there)
    ones = st.full((4096,), 0.1, dtype=st.bfloat16)
    _same(ones.sum(), torch.full((4096,), 0.1, dtype=torch.bfloat16).sum())
    _same(st.softmax(a, 1), torch.softmax(ta, 1))


def test_matmul_products_in_float32():
    (a, ta), (b, tb) = _pair((64, 33), seed=7), _pair((33, 48), seed=8)
    # one rounding of a float32 accumulation: equal to torch up to float32 summation order
    st.testing.assert_close(a @ b, st.tensor((ta @ tb).float().numpy()).bfloat16(), rtol=2 ** -7, atol=0)
    ref = (a.float() @ b.float()).bfloat16()
    _same(a @ b, torch.tensor(ref.float().numpy()).bfloat16())
    _same(st.mm(a, b), torch.tensor(ref.float().numpy()).bfloat16())
    _same(st.einsum("ij,jk->ik", a, b), torch.tensor(ref.float().numpy()).bfloat16())
    _same(st.bmm(a[None], b[None])[0], torch.tensor(ref.float().numpy()).bfloat16())


def test_sort_puts_nan_last_as_torch():
    vals = [3.0, float("nan"), 1.0, 2.0, -5.0, 1.0]
    x, tx = st.tensor(vals, dtype=st.bfloat16), torch.tensor(vals, dtype=torch.bfloat16)
    _same(x.sort().values, tx.sort().values)
    assert x.argsort(descending=True).tolist() == tx.argsort(descending=True).tolist()
    _same(st.unique(x), torch.unique(tx))
    _same(x.topk(2).values, tx.topk(2).values)
    assert st.nanmedian(x).item() == torch.nanmedian(tx).item()


# ---- sparse ----

@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_sparse_products_and_sums(layout):
    rng = np.random.default_rng(9)
    dense = ((rng.random((50, 400)) < 0.3) * rng.standard_normal((50, 400))).astype(np.float32)
    a = st.tensor(dense).bfloat16()
    b = st.randn(400, 20).bfloat16()
    s = getattr(a, layout)()
    want = (a.float() @ b.float()).bfloat16()
    st.testing.assert_close(s @ b, want, rtol=0, atol=0)
    st.testing.assert_close(st.sparse.mm(s, b), want, rtol=0, atol=0)
    st.testing.assert_close((s @ s.t()).to_dense(), (a.float() @ a.float().t()).bfloat16(), rtol=0, atol=0)
    for d in (0, 1):
        st.testing.assert_close(st.sparse.sum(s, d).to_dense(), a.float().sum(d).bfloat16(), rtol=0, atol=0)
    assert (s * 2).dtype is st.bfloat16 and (s + s).dtype is st.bfloat16


def test_sparse_gradients_in_bfloat16():
    s = st.tensor([[1.5, 0, 2.25], [0, 0, 3.0], [4.0, 0, 0]], dtype=st.bfloat16).to_sparse().requires_grad_()
    d = st.ones(3, 2, dtype=st.bfloat16, requires_grad=True)
    st.sparse.mm(s, d).sum().backward()
    assert s.grad.layout is st.sparse_coo and s.grad.dtype is st.bfloat16
    assert s.grad.to_dense().tolist() == [[2.0, 0.0, 2.0], [0.0, 0.0, 2.0], [2.0, 0.0, 0.0]]
    assert d.grad.tolist() == [[5.5, 5.5], [0.0, 0.0], [5.25, 5.25]]


def test_to_scipy_refuses_bfloat16():
    s = st.tensor([[1.0, 0.0]], dtype=st.bfloat16).to_sparse()
    with pytest.raises(TypeError, match="no bfloat16"):
        s.to_scipy()


# ---- nn layers ----

def _copy_params(ours, theirs):
    with st.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(st.tensor(q.detach().float().numpy()))


@pytest.mark.parametrize("layer", ["linear", "conv2d", "embedding", "embedding_sparse"])
def test_nn_layers_forward_backward(layer):
    make = {
        "linear": (lambda T: T.nn.Linear(8, 5), (4, 8), 2 ** -7),
        "conv2d": (lambda T: T.nn.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 6), 2 ** -6),
        "embedding": (lambda T: T.nn.Embedding(10, 4), None, 0),
        "embedding_sparse": (lambda T: T.nn.Embedding(10, 4, sparse=True), None, 0),
    }
    build, shape, tol = make[layer]
    torch.manual_seed(0)
    tm, sm = build(torch).bfloat16(), build(st).bfloat16()
    _copy_params(sm, tm)
    if shape is None:
        ti, si = torch.tensor([[1, 2, 2], [9, 0, 1]]), st.tensor([[1, 2, 2], [9, 0, 1]])
    else:
        x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
        ti, si = torch.tensor(x).bfloat16().requires_grad_(), st.tensor(x).bfloat16().requires_grad_()
    to, so = tm(ti), sm(si)
    assert so.dtype is st.bfloat16
    st.testing.assert_close(so.float(), st.tensor(to.float().detach().numpy()), rtol=tol, atol=tol * 4)
    (to * to).sum().backward()
    (so * so).sum().backward()
    for p, q in zip(sm.parameters(), tm.parameters()):
        g, h = p.grad, q.grad
        assert g.dtype is st.bfloat16
        g = g.to_dense() if g.layout is not st.strided else g
        h = h.to_dense() if h.layout is not torch.strided else h
        scale = max(1.0, float(h.abs().max()))
        st.testing.assert_close(g.float(), st.tensor(h.float().numpy()), rtol=4 * tol, atol=4 * tol * scale)
    if shape is not None:
        assert si.grad.dtype is st.bfloat16


@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}),
                                     ("AdamW", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})])
def test_optimizers_step_bfloat16_params(name, kw):
    w0 = np.random.default_rng(13).standard_normal((5, 4)).astype(np.float32)
    x0 = np.random.default_rng(14).standard_normal((8, 4)).astype(np.float32)
    out = []
    for T in (st, torch):
        w = T.nn.Parameter(T.tensor(w0).bfloat16())
        x = T.tensor(x0).bfloat16()
        opt = getattr(T.optim, name)([w], **kw)
        for _ in range(5):
            opt.zero_grad()
            ((x @ w.t()) ** 2).mean().backward()
            opt.step()
        assert w.dtype is T.bfloat16 and w.grad.dtype is T.bfloat16
        out.append(w.detach().float().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=2 ** -6, atol=2 ** -7)


def test_default_dtype_bfloat16():
    prev = st.get_default_dtype()
    try:
        st.set_default_dtype(st.bfloat16)
        torch.set_default_dtype(torch.bfloat16)
        assert st.tensor([1.5]).dtype is st.bfloat16 and torch.tensor([1.5]).dtype is torch.bfloat16
        assert (st.ones(2, dtype=st.int64) * 1.5).dtype is st.bfloat16
    finally:
        st.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "var", "std", "norm"])
def test_reductions_in_float32_bitwise(op):
    a, ta = _pair((64, 300), seed=15)
    if op == "cumprod":
        a, ta = a * 0.1 + 1, ta * 0.1 + 1
    for kw in ({"dim": 0}, {"dim": 1}) + (() if op.startswith("cum") else ({},)):
        _same(getattr(a, op)(**kw), getattr(ta, op)(**kw))
    got = a.logsumexp(1).float()
    st.testing.assert_close(got, st.tensor(ta.logsumexp(1).float().numpy()), rtol=2 ** -7, atol=0)
