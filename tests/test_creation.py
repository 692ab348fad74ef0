"""Creation, random sampling and in-place fills: semantics, and parity with real torch."""

import math
import warnings

import numpy as np
import pytest

import sparsetorch as st


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _outcome(mod, expr, env=None):
    """(kind, details) of evaluating ``expr`` with ``torch`` bound to ``mod``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(expr, {"torch": mod, "np": np, "math": math, **(env or {})})
    except Exception as e:  # noqa: BLE001 - the error type is what is compared
        return ("error", type(e).__name__)
    if hasattr(r, "dtype") and hasattr(r, "tolist"):
        return (
            "tensor",
            str(r.dtype).split(".")[-1],
            tuple(r.shape),
            r.detach().tolist(),
            bool(r.requires_grad),
        )
    if isinstance(r, str):
        r = r.replace("sparsetorch.", "torch.")
    return ("value", r)


def assert_parity(torch, expr, values=True, env=None):
    want = _outcome(torch, expr, env)
    got = _outcome(st, expr, env)
    if not values and want[0] == "tensor":
        want, got = want[:3], got[:3]
    assert got == want, f"{expr}: sparsetorch {got} != torch {want}"


# ---- tensor(): dtype inference, nesting, errors ----

TENSOR_EXPRS = [
    "torch.tensor([1, 2.5])",
    "torch.tensor([True, 1])",
    "torch.tensor([1, 2j])",
    "torch.tensor([True, False])",
    "torch.tensor(3)",
    "torch.tensor(3.5)",
    "torch.tensor(True)",
    "torch.tensor([[1, 2], [3, 4]])",
    "torch.tensor(((1, 2), (3, 4)))",
    "torch.tensor(range(3))",
    "torch.tensor([torch.tensor(1.), torch.tensor(2.)])",
    "torch.tensor([1, torch.tensor(2.5)])",
    "torch.tensor([torch.tensor(1, dtype=torch.int32), 2])",
    "torch.tensor([torch.tensor(1, dtype=torch.int32), torch.tensor(2, dtype=torch.int32)])",
    "torch.tensor([torch.tensor([[1.]])])",
    "torch.tensor(np.float32(3))",
    "torch.tensor(np.int32(3))",
    "torch.tensor(np.bool_(True))",
    "torch.tensor([np.float32(1), 2.5])",
    "torch.tensor([np.int32(1), 2])",
    "torch.tensor([np.float64(1), 2])",
    "torch.tensor([np.float16(2), 1])",
    # lists of NumPy scalars (dlrm's loader: [0, np.int64(5), ...]), one dtype per scalar type
    "torch.tensor([0] + [np.int64(i) for i in range(1, 40)])",
    "torch.tensor([np.int32(1), np.int64(2), np.uint8(3)])",
    "torch.tensor([np.uint8(1), np.int8(-2)])",
    "torch.tensor([np.bool_(True), np.bool_(False)])",
    "torch.tensor([np.float16(1.5), np.float32(2)])",
    "torch.tensor([np.float32(1.5), np.int64(2), True])",
    "torch.tensor([np.complex64(1 + 2j), np.float64(2)])",
    "torch.tensor([np.int64(300), np.int64(2)], dtype=torch.uint8)",
    "torch.tensor([np.float64(1e300)], dtype=torch.float32)",
    "torch.tensor([np.int64(2**62), np.float32(1.5)])",
    "torch.tensor(np.array([1, 2], dtype=np.int32))",
    "torch.tensor(np.array([1., 2.]))",
    "torch.tensor([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])",
    "torch.tensor([np.array([1, 2], dtype=np.int32), [3, 4]])",
    "torch.tensor(np.arange(6.)[::2])",
    "torch.tensor([])",
    "torch.tensor([[]])",
    "torch.tensor([[], []])",
    "torch.tensor([[[]]])",
    "torch.tensor([1.5], dtype=torch.int32)",
    "torch.tensor([0.5], dtype=torch.bool)",
    "torch.tensor([-1], dtype=torch.uint8)",
    "torch.tensor([1.5], dtype=torch.complex64)",
    "torch.tensor([1, 2], dtype=torch.float64, requires_grad=True)",
    "torch.tensor([2**62, 1.5])",
    "torch.tensor([1e300], dtype=torch.float32)",
    "torch.tensor(np.array([[1, 2]]).T)",
    "torch.tensor(torch.tensor([1, 2]))",
    # errors
    "torch.tensor([[1, 2], [3]])",
    "torch.tensor([[1, 2], [3, 4, 5]])",
    "torch.tensor([1, [2]])",
    "torch.tensor([[1], 2])",
    "torch.tensor('a')",
    "torch.tensor(None)",
    "torch.tensor([1, None])",
    "torch.tensor({1: 2})",
    "torch.tensor([1, 2], dtype=np.float32)",
    "torch.tensor([2**63])",
    "torch.tensor([float('nan')], dtype=torch.int64)",
    "torch.tensor([300], dtype=torch.uint8)",
    "torch.tensor([1e10], dtype=torch.int32)",
    "torch.tensor([1 + 2j], dtype=torch.float32)",
    "torch.tensor([1, 2], requires_grad=True)",
    "torch.tensor([torch.tensor([1., 2.]), [3, 4]])",
]


@pytest.mark.parametrize("expr", TENSOR_EXPRS)
def test_tensor_matches_torch(torch, expr):
    assert_parity(torch, expr)


@pytest.mark.parametrize(
    "data,dtype",
    [
        ([1.0, 2], st.float32),
        ([1, 2], st.int64),
        ([True], st.bool),
        ([1j], st.complex64),
        (np.float64(1.0), st.float64),
        ([np.float64(1.0), 2], st.float64),
        (3, st.int64),
    ],
)
def test_tensor_dtype_inference(data, dtype):
    assert st.tensor(data).dtype is dtype


def test_tensor_default_dtype_follows_set_default_dtype():
    st.set_default_dtype(st.float64)
    try:
        assert st.tensor([1.5]).dtype is st.float64
        assert st.tensor([1j]).dtype is st.complex128
        assert st.full((2,), 1.5).dtype is st.float64
        assert st.arange(0.5, 2).dtype is st.float64
    finally:
        st.set_default_dtype(st.float32)


def test_tensor_errors_have_torch_types_and_messages():
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1"):
        st.tensor([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        st.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="dtype"):
        st.zeros(2, dtype=np.float32)


def test_tensor_copies_and_warns_on_tensor_input():
    a = np.arange(3.0)
    t = st.tensor(a)
    a[0] = 10
    assert t[0].item() == 0
    src = st.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="detach"):
        c = st.tensor(src)
    assert not c.requires_grad and c.is_leaf
    c.add_(1)
    assert src.tolist() == [1.0, 2.0]


# ---- as_tensor / asarray / from_numpy ----


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(4.0)
    for t in (st.as_tensor(a), st.asarray(a), st.from_numpy(a)):
        a[0] += 1
        assert t[0].item() == a[0]
    x = st.tensor([1.0, 2.0])
    assert st.as_tensor(x) is x and st.asarray(x) is x
    assert st.as_tensor(a, dtype=st.float32).dtype is st.float32  # a converting copy
    with pytest.raises(ValueError, match="alias"):
        st.asarray(np.arange(3), dtype=st.float32, copy=False)
    c = st.asarray(a, copy=True)
    a[1] = -5
    assert c[1].item() != -5


def test_asarray_requires_grad(torch):
    for expr in [
        "torch.asarray([1, 2], requires_grad=True)",
        "torch.asarray([1., 2], requires_grad=True)",
        "torch.asarray(3)",
        "torch.asarray(3.5, dtype=torch.float64)",
        "torch.asarray(torch.tensor([1, 2]), dtype=torch.float32, copy=False)",
    ]:
        assert_parity(torch, expr)


def test_from_numpy():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        st.from_numpy([1, 2])
    with pytest.raises(ValueError, match="byte order"):
        st.from_numpy(np.array([1], dtype=">i4"))
    with pytest.raises(TypeError, match="uint16"):
        st.from_numpy(np.array([1], dtype=np.uint16))
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = st.from_numpy(ro)
    assert t.dtype is st.float64 and t.tolist() == [0.0, 1.0, 2.0]
    assert st.from_numpy(np.array(3.0)).shape == ()


# ---- filled tensors ----

FACTORY_EXPRS = [
    "torch.zeros(2, 3)",
    "torch.zeros((2, 3))",
    "torch.zeros([2, 3])",
    "torch.zeros(torch.Size([2, 3]))",
    "torch.zeros(())",
    "torch.zeros([])",
    "torch.zeros(size=(2, 3))",
    "torch.zeros(np.int64(2))",
    "torch.zeros(torch.tensor(2))",
    "torch.zeros(2, dtype=torch.int32)",
    "torch.ones(2, 2, dtype=torch.bool)",
    "torch.zeros(2, (3,))",
    "torch.zeros(2.0)",
    "torch.zeros((2.0,))",
    "torch.zeros(-1)",
    "torch.zeros(2, -3)",
    "torch.zeros(True)",
    "torch.zeros(torch.tensor(2.))",
    "torch.zeros(2, dtype='float32')",
    "torch.empty(-1)",
    "torch.ones(2, requires_grad=True)",
    "torch.ones(2, dtype=torch.int64, requires_grad=True)",
    "torch.full((2,), True)",
    "torch.full((2,), 1)",
    "torch.full((2,), 1.5)",
    "torch.full((2,), 1j)",
    "torch.full((2,), torch.tensor(3))",
    "torch.full((2,), torch.tensor(3., dtype=torch.float64))",
    "torch.full((2,), np.float64(3))",
    "torch.full((2,), np.int32(3))",
    "torch.full((), 7)",
    "torch.full(2, 1.)",
    "torch.full((2,), 'a')",
    "torch.full((2,), 1.5, dtype=torch.int64)",
    "torch.full((2,), 300, dtype=torch.uint8)",
    "torch.full((2,), torch.tensor([1., 2]))",
    "torch.full((-1,), 2.)",
    "torch.full((2,), -1, dtype=torch.uint8)",
    "torch.zeros_like(torch.tensor([1, 2]))",
    "torch.ones_like(torch.tensor([1, 2]), dtype=torch.float32)",
    "torch.full_like(torch.tensor([1, 2]), 2.7)",
    "torch.zeros_like([1, 2])",
    "torch.zeros_like(torch.tensor([1., 2], requires_grad=True))",
    "torch.empty_like(torch.ones(2, 3, dtype=torch.float64)).shape",
    "torch.zeros(2, out=torch.empty(0, dtype=torch.int64))",
    "torch.zeros(2, out=torch.empty(0, dtype=torch.int64), dtype=torch.float32)",
    "torch.ones(2, out=torch.empty(2, requires_grad=True))",
    "torch.empty_strided((2, 3), (1, 2)).stride()",
    "torch.empty_strided((2,), (1, 2))",
    "torch.empty_strided((2, 3), (-1, 2))",
    "torch.empty_strided((2, 3), (3, 1)).is_contiguous()",
    "torch.scalar_tensor(3)",
    "torch.scalar_tensor(3, dtype=torch.int64)",
    "torch.Tensor(2, 3).shape",
    "torch.Tensor([1, 2])",
    "torch.Tensor(2.5)",
    "torch.Tensor()",
    "torch.Tensor((2, 3))",
    "torch.Tensor(np.array([1, 2]))",
]


@pytest.mark.parametrize("expr", FACTORY_EXPRS)
def test_factories_match_torch(torch, expr):
    assert_parity(torch, expr, values="empty" not in expr)


def test_out_writes_and_resizes():
    out = st.empty(0, dtype=st.int64)
    r = st.ones(2, 3, out=out)
    assert r is out and out.shape == (2, 3) and out.dtype is st.int64 and out.sum().item() == 6


# ---- ranges ----

RANGE_EXPRS = [
    "torch.arange(5)",
    "torch.arange(5.)",
    "torch.arange(0, 1, 0.1)",
    "torch.arange(1, 2.5, 0.5)",
    "torch.arange(10, 0, -3)",
    "torch.arange(1, 1.3, 0.1)",
    "torch.arange(0, 0.3, 0.1)",
    "torch.arange(0, 5, 1.5, dtype=torch.int64)",
    "torch.arange(0.5, 5, dtype=torch.int64)",
    "torch.arange(-1.5, 3, 1, dtype=torch.int64)",
    "torch.arange(0, 5, 1.5, dtype=torch.int32)",
    "torch.arange(-3, 3, 2, dtype=torch.uint8)",
    "torch.arange(0, 1, 0.3, dtype=torch.float16)",
    "torch.arange(torch.tensor(5, dtype=torch.int32))",
    "torch.arange(torch.tensor(5., dtype=torch.float64))",
    "torch.arange(True)",
    "torch.arange(1, 1)",
    "torch.arange(np.int64(4))",
    "torch.arange(np.float32(2.5))",
    "torch.arange(start=1, end=4)",
    "torch.arange(end=4)",
    "torch.arange(-2.5, 7.3, 0.7)",
    "torch.arange(0., 10, 3, requires_grad=True)",
    "torch.arange(5, out=torch.empty(2))",
    "torch.arange(0, 10, 0)",
    "torch.arange(0, 10, -1)",
    "torch.arange(5, 1)",
    "torch.arange(-5)",
    "torch.arange(0, float('inf'))",
    "torch.arange('a')",
    "torch.arange(1 + 2j)",
    "torch.arange(0, 5, 2, dtype=torch.bool)",
    "torch.arange(0, 3, dtype=torch.complex64)",
    "torch.arange(0, 10, 3, requires_grad=True)",
    "torch.arange(5, dtype=torch.int32, out=torch.empty(2))",
    "torch.range(0, 4)",
    "torch.range(1, 4, 0.5)",
    "torch.range(0, 4, dtype=torch.int64)",
    "torch.range(4, 0, -1)",
    "torch.range(0.0, 1.0, 0.3)",
    "torch.range(0, 1, 0.1)",
    "torch.range(0, 4, 0)",
    "torch.linspace(0, 1, 5)",
    "torch.linspace(0, 1, 7)",
    "torch.linspace(-2.5, 7.1, 11)",
    "torch.linspace(-3.3, 8.1, 101)",
    "torch.linspace(-3.3, 8.1, 100, dtype=torch.float64)",
    "torch.linspace(1, 0, 6)",
    "torch.linspace(0, 10, 7, dtype=torch.int64)",
    "torch.linspace(0.9, 10.9, 3, dtype=torch.int64)",
    "torch.linspace(3, -1, 4, dtype=torch.int32)",
    "torch.linspace(0, 1, 1)",
    "torch.linspace(0, 1, 0)",
    "torch.linspace(0, 1 + 1j, 3)",
    "torch.linspace(torch.tensor(0.), torch.tensor(1.), 3)",
    "torch.linspace(0, 1, 5, dtype=torch.float16)",
    "torch.linspace(0, 1, -1)",
    "torch.linspace(0, 1, 2.0)",
    "torch.logspace(0, 2, 3)",
    "torch.logspace(0, 2, 3, base=2)",
    "torch.logspace(0, 3, 4, dtype=torch.int64)",
    "torch.logspace(0, 1, 3, 2)",
    "torch.logspace(-1, 1, 5)",
    "torch.eye(2)",
    "torch.eye(2, 3, dtype=torch.int64)",
    "torch.eye(0)",
    "torch.eye(-1)",
    "torch.eye(2, -1)",
    "torch.eye(2.0)",
    "torch.eye(3, out=torch.empty(0, dtype=torch.int64))",
    "torch.tril_indices(3, 3)",
    "torch.triu_indices(3, 4, 1)",
    "torch.tril_indices(3, 2, -1)",
    "torch.tril_indices(0, 0)",
    "torch.triu_indices(2, 3, -5)",
    "torch.tril_indices(3, 3, 10)",
    "torch.tril_indices(3, 3, dtype=torch.int32)",
    "torch.tril_indices(-1, 3)",
    "torch.tril_indices(3, 3, dtype=torch.float32)",
    "torch.complex(torch.tensor([1., 2]), torch.tensor([3., 4]))",
    "torch.complex(torch.tensor([1, 2]), torch.tensor([3, 4]))",
    "torch.complex(torch.tensor([1.]), torch.tensor([3.], dtype=torch.float64))",
    "torch.polar(torch.tensor([1., 2]), torch.tensor([0., 1.5]))",
]


@pytest.mark.parametrize("expr", RANGE_EXPRS)
def test_ranges_match_torch(torch, expr):
    assert_parity(torch, expr)


@pytest.mark.parametrize("args", [(100, -7, -3.3), (1e-3, 50, 0.0137), (-10, 10, 0.01)])
def test_long_float_aranges_within_one_ulp_of_torch(torch, args):
    # torch's vectorised chunks round differently from its scalar path (CPU dependent); the
    # length, dtype and values up to rounding at the range's magnitude are what must agree
    want = torch.arange(*args).numpy()
    got = st.arange(*args).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2 * np.finfo(np.float32).eps * np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def test_range_warns_deprecated():
    with pytest.warns(UserWarning, match="deprecated"):
        assert st.range(0, 2).tolist() == [0.0, 1.0, 2.0]


# ---- random: generators and determinism ----


def test_generator_determinism_and_state():
    g = st.Generator()
    assert g.manual_seed(123) is g and g.initial_seed() == 123
    a = st.rand(5, generator=g)
    g.manual_seed(123)
    assert st.rand(5, generator=g).tolist() == a.tolist()
    state = g.get_state()
    assert state.dtype is st.uint8 and state.shape == (5056,)  # torch's CPUGeneratorImplState
    x = st.randn(4, generator=g)
    g.set_state(state)
    assert st.randn(4, generator=g).tolist() == x.tolist()
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1
    assert st.Generator().initial_seed() == 67280421310721
    with pytest.raises(RuntimeError, match="manual_seed expected a long"):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(st.zeros(3, dtype=st.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(st.zeros(5056))
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**64


def test_default_generator_functions():
    assert st.manual_seed(7) is st.default_generator
    assert st.initial_seed() == 7
    a = st.rand(3)
    st.manual_seed(7)
    assert st.rand(3).tolist() == a.tolist()
    state = st.get_rng_state()
    b = st.randint(0, 100, (5,))
    st.set_rng_state(state)
    assert st.randint(0, 100, (5,)).tolist() == b.tolist()
    st.set_rng_state(state)
    with st.random.fork_rng():  # draws inside do not advance the state seen outside
        st.rand(10)
    assert st.randint(0, 100, (5,)).tolist() == b.tolist()


def test_generator_keyword_everywhere():
    def draws(g):
        x = st.zeros(3)
        return [
            st.rand(2, generator=g),
            st.randn(2, generator=g),
            st.randint(0, 9, (2,), generator=g),
            st.randperm(5, generator=g),
            st.rand_like(x, generator=g),
            st.randn_like(x, generator=g),
            st.randint_like(x, 9, generator=g),
            st.normal(0.0, 1.0, (2,), generator=g),
            st.normal(x, 1.0, generator=g),
            st.bernoulli(x + 0.5, generator=g),
            st.multinomial(x + 1, 2, generator=g),
            st.poisson(x + 2, generator=g),
            x.clone().uniform_(generator=g),
            x.clone().normal_(generator=g),
            x.clone().bernoulli_(0.5, generator=g),
            x.clone().random_(0, 9, generator=g),
            x.clone().exponential_(generator=g),
        ]

    a = draws(st.Generator().manual_seed(3))
    b = draws(st.Generator().manual_seed(3))
    assert [t.tolist() for t in a] == [t.tolist() for t in b]
    with pytest.raises(TypeError, match="generator"):
        st.rand(2, generator=1)


def test_random_values_dtypes_and_ranges():
    g = st.Generator().manual_seed(0)
    for dt in (st.float16, st.float32, st.float64):
        u = st.rand(10000, dtype=dt, generator=g)
        assert u.dtype is dt and 0 <= u.min().item() and u.max().item() < 1
    assert st.rand(3).dtype is st.float32 and st.randn(3).dtype is st.float32
    z = st.randn(20000, generator=g).numpy()
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    c = st.randn(20000, dtype=st.complex64, generator=g).numpy()
    assert abs(np.mean(np.abs(c) ** 2) - 1) < 0.05
    r = st.randint(-3, 4, (5000,), generator=g)
    assert r.dtype is st.int64 and r.min().item() == -3 and r.max().item() == 3
    assert sorted(st.randperm(50, generator=g).tolist()) == list(range(50))
    p = st.poisson(st.full((20000,), 3.0), generator=g).numpy()
    assert abs(p.mean() - 3) < 0.1
    e = st.empty(20000).exponential_(2.0, generator=g).numpy()
    assert abs(e.mean() - 0.5) < 0.02 and e.min() >= 0
    x = st.empty(5000).uniform_(-2, 3, generator=g).numpy()
    assert x.min() >= -2 and x.max() < 3
    assert set(st.empty(100, dtype=st.int64).random_(4, generator=g).tolist()) <= {0, 1, 2, 3}
    f = st.empty(1000).random_(generator=g).numpy()
    assert f.min() >= 0 and f.max() <= 2**24


def test_multinomial_and_bernoulli():
    g = st.Generator().manual_seed(1)
    w = st.tensor([[0.0, 1.0, 3.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    s = st.multinomial(w, 500, replacement=True, generator=g)
    assert s.shape == (2, 500) and s.dtype is st.int64
    assert set(s[0].tolist()) <= {1, 2}
    counts = np.bincount(s[0].numpy(), minlength=4)
    assert 0.65 < counts[2] / 500 < 0.85
    s = st.multinomial(w, 4, generator=g)
    assert sorted(s[1].tolist()) == [0, 1, 2, 3] and set(s[0, :2].tolist()) == {1, 2}
    b = st.bernoulli(st.tensor([0.0, 1.0, 0.0, 1.0]), generator=g)
    assert b.tolist() == [0.0, 1.0, 0.0, 1.0]
    assert st.zeros(3).bernoulli_(st.tensor([0.0, 1.0, 1.0])).tolist() == [0.0, 1.0, 1.0]


RANDOM_EXPRS = [
    "torch.rand(2, dtype=torch.int64)",
    "torch.rand(2, 3)",
    "torch.rand((2, 3))",
    "torch.rand(2, dtype=torch.complex64)",
    "torch.randn(2, dtype=torch.complex64)",
    "torch.randn(2, dtype=torch.int64)",
    "torch.rand(2, requires_grad=True)",
    "torch.rand(2, dtype=torch.float16)",
    "torch.rand(2, dtype=torch.bool)",
    "torch.rand(-1)",
    "torch.randn(2, out=torch.empty(0, dtype=torch.float64))",
    "torch.randint(5, (3,))",
    "torch.randint(2, 5, (3,))",
    "torch.randint(5, 5, (3,))",
    "torch.randint(5, (3,), dtype=torch.float32)",
    "torch.randint(5, 3)",
    "torch.randint(0, 2**40, (2,), dtype=torch.int32)",
    "torch.randint(0, 300, (2,), dtype=torch.uint8)",
    "torch.randint(high=5, size=(2,))",
    "torch.randint(low=1, high=5, size=(2,))",
    "torch.randint(0, 2, (3,), dtype=torch.bool)",
    "torch.randint(5.5, (2,))",
    "torch.randint(0, 5, (2,), requires_grad=True)",
    "torch.randperm(5, dtype=torch.float32)",
    "torch.randperm(-1)",
    "torch.randperm(0)",
    "torch.randperm(300, dtype=torch.uint8)",
    "torch.rand_like(torch.tensor([1, 2]))",
    "torch.randn_like(torch.tensor([1., 2], dtype=torch.float64))",
    "torch.randint_like(torch.tensor([1., 2]), 5)",
    "torch.randint_like(torch.tensor([1., 2]), 3, 5)",
    "torch.normal(torch.zeros(2), torch.ones(2))",
    "torch.normal(torch.zeros(2), 1.)",
    "torch.normal(0., torch.ones(2))",
    "torch.normal(0., 1., (2,))",
    "torch.normal(0., 1., size=(2,), dtype=torch.float64)",
    "torch.normal(torch.zeros(2), torch.ones(3))",
    "torch.normal(torch.zeros(2, 1), torch.ones(3))",
    "torch.normal(torch.zeros(2), -1.)",
    "torch.normal(torch.zeros(2), torch.tensor([1., -1]))",
    "torch.normal(torch.zeros(2, dtype=torch.int64), 1.)",
    "torch.normal(0., 1.)",
    "torch.normal(mean=torch.zeros(2))",
    "torch.normal(torch.zeros(2), torch.ones(2, dtype=torch.float64))",
    "torch.bernoulli(torch.tensor([0., 1.]), 0.5)",
    "torch.bernoulli(torch.tensor([0, 1]))",
    "torch.bernoulli(torch.tensor([2., 1.]))",
    "torch.multinomial(torch.tensor([0., 1., 0.]), 4)",
    "torch.multinomial(torch.tensor([0., 0., 0.]), 1)",
    "torch.multinomial(torch.tensor([-1., 1., 0.]), 1)",
    "torch.multinomial(torch.tensor([1, 2]), 1)",
    "torch.multinomial(torch.tensor(1.), 1)",
    "torch.multinomial(torch.ones(2), 0)",
    "torch.multinomial(torch.tensor([float('nan'), 1.]), 1)",
    "torch.multinomial(torch.tensor([0., 1., 0.]), 2)",
    "torch.multinomial(torch.tensor([[0., 1.], [1., 0]]), 1)",
    "torch.poisson(torch.tensor([1., 2.]))",
    "torch.poisson(torch.tensor([1, 2]))",
    "torch.poisson(torch.tensor([-1.]))",
    "torch.zeros(3).uniform_(2, 1)",
    "torch.zeros(3, dtype=torch.int64).uniform_()",
    "torch.zeros(3).uniform_(0, float('inf'))",
    "torch.zeros(3).normal_(0, -1)",
    "torch.zeros(3, dtype=torch.int8).random_()",
    "torch.zeros(3, dtype=torch.uint8).random_(300)",
    "torch.zeros(3).random_(1.5, 3)",
    "torch.zeros(3).random_(5, 2)",
    "torch.zeros(3).bernoulli_(1.5)",
    "torch.zeros(3).bernoulli_(torch.tensor([0.5, 0.5]))",
    "torch.zeros(3).exponential_(0)",
    "torch.ones(3, requires_grad=True).uniform_()",
]


@pytest.mark.parametrize("expr", RANDOM_EXPRS)
def test_random_metadata_and_errors_match_torch(torch, expr):
    assert_parity(torch, expr, values=False)


# ---- in-place fills: values, errors, autograd ----

FILL_EXPRS = [
    "torch.zeros(3, dtype=torch.int64).fill_(2.5)",
    "torch.zeros(3).fill_(torch.tensor([1.]))",
    "torch.zeros(3).fill_('a')",
    "torch.zeros(3, dtype=torch.int64).fill_(True)",
    "torch.zeros(3, dtype=torch.uint8).fill_(300)",
    "torch.zeros(3, dtype=torch.uint8).fill_(-1)",
    "torch.zeros(3).fill_(torch.tensor(2.5))",
    "torch.ones(3).zero_()",
    "torch.zeros(3).copy_(torch.ones(2))",
    "torch.zeros(3).copy_(3)",
    "torch.zeros(3).copy_([1, 2, 3])",
    "torch.zeros(3, dtype=torch.int64).copy_(torch.tensor([1.5, 2.5, -3.5]))",
    "torch.zeros(1).copy_(torch.ones(3, 1))",
    "torch.zeros(2, 3).copy_(torch.tensor([1, 2, 3]))",
    "torch.ones(3, requires_grad=True).fill_(2)",
    "torch.ones(3, requires_grad=True).zero_()",
    "torch.ones(3, requires_grad=True).copy_(torch.ones(3))",
]


@pytest.mark.parametrize("expr", FILL_EXPRS)
def test_fills_match_torch(torch, expr):
    assert_parity(torch, expr)


@pytest.mark.parametrize(
    "op",
    ["uniform_", "normal_", "fill_", "zero_", "copy_", "bernoulli_", "random_", "exponential_"],
)
def test_overwriting_a_non_leaf_gives_zero_gradient(op):
    a = st.ones(3, requires_grad=True)
    x = a * 2
    args = {"fill_": (3,), "copy_": (st.ones(3),), "bernoulli_": (0.5,)}.get(op, ())
    getattr(x, op)(*args)
    assert x.grad_fn is not None
    (x * 3).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]


def test_copy_and_fill_pass_gradients_on():
    y = st.tensor([1.0, 2.0], dtype=st.float64, requires_grad=True)
    x = st.zeros(3, 2)
    x.copy_(y)
    assert x.dtype is st.float32 and x.requires_grad
    (x * st.arange(6.0).view(3, 2)).sum().backward()
    assert y.grad.dtype is st.float64 and y.grad.tolist() == [6.0, 9.0]
    v = st.tensor(2.0, requires_grad=True)
    z = st.zeros(3)
    z.fill_(v)
    z.sum().backward()
    assert v.grad.item() == 3.0
    base, src = st.zeros(2, 3), st.ones(3, requires_grad=True)
    base[0].copy_(src * 2)
    base.sum().backward()
    assert src.grad.tolist() == [2.0, 2.0, 2.0]


def test_fills_under_no_grad_on_leaves_and_version_counter():
    w = st.ones(3, requires_grad=True)
    with st.no_grad():
        for f in (lambda: w.fill_(2), w.zero_, w.uniform_, w.normal_, lambda: w.copy_(st.ones(3))):
            f()
    assert w.requires_grad and w.is_leaf and w.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.fill_(1)
    x = st.zeros(3)
    v = x._version
    assert x.fill_(1) is x and x.copy_(st.ones(3)) is x and x.uniform_() is x
    assert x._version == v + 3


def test_normal_sampling_functions_are_differentiable_with_zero_grads():
    m = st.zeros(3, requires_grad=True)
    s = st.ones(3, requires_grad=True)
    st.normal(m, s).sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    p = st.tensor([0.3, 0.7], requires_grad=True)
    assert st.bernoulli(p).requires_grad
