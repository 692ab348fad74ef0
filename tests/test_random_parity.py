"""Same seed, same numbers: sparsetorch's generator and sampling ops against torch 2.13's CPU
generator, bit for bit, over dtypes, sizes on both sides of torch's algorithm switches, and
consecutive calls (the stream continues where the previous call left it)."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")

SIZES = [0, 1, 2, 15, 16, 17, 31, 100, 1003]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _np(t):
    if t.dtype is torch.bfloat16:
        return t.float().numpy()
    return t.numpy()


def _ours(t):
    if t.dtype is st.bfloat16:
        return t.float().numpy()
    return t.numpy()


def same(ours, theirs):
    a, b = _ours(ours), _np(theirs)
    assert a.shape == b.shape and str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(a, b)


def both(fn, seed=1234, calls=3):
    """Run ``fn(lib)`` ``calls`` times after seeding each library; compare every result."""
    st.manual_seed(seed)
    torch.manual_seed(seed)
    for _ in range(calls):
        same(fn(st), fn(torch))


@pytest.mark.parametrize("dtype", FLOATS + ["complex64"])
@pytest.mark.parametrize("n", SIZES)
def test_rand_randn(dtype, n):
    both(lambda L: L.rand(n, dtype=getattr(L, dtype)))
    both(lambda L: L.randn(n, dtype=getattr(L, dtype)))
    both(lambda L: L.randn(n, 3, dtype=getattr(L, dtype)), calls=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_mixed_sizes_continue_the_stream(dtype):
    seq = [5, 16, 1, 33, 0, 7, 48]

    def draw(L):
        d = getattr(L, dtype)
        return L.cat([L.randn(k, dtype=d) for k in seq] + [L.rand(k, dtype=d) for k in seq])

    both(draw, calls=2)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 15, 16, 17, 200])
def test_uniform_normal_with_parameters(dtype, n):
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).uniform_(-3.0, 7.25))
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(2.0, 0.5))
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(1.7, 0.3))  # fused multiply-add
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).uniform_(0.125, 0.5))


@pytest.mark.parametrize("dtype", INTS + ["float32", "float64"])
@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (0, 2**28), (3, 2**31 - 1)])
def test_randint(dtype, low, high):
    d = getattr(st, dtype)
    if dtype != "int64" and dtype != "float64" and dtype != "float32":
        info = np.iinfo(d.np)
        if low < info.min or high - 1 > info.max:
            return
    both(lambda L: L.randint(low, high, (37,), dtype=getattr(L, dtype)))
    both(lambda L: L.randint(high, (5, 3), dtype=getattr(L, dtype)))


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
def test_random_(dtype):
    both(lambda L: L.empty(40, dtype=getattr(L, dtype)).random_())
    if dtype != "bool":
        both(lambda L: L.empty(40, dtype=getattr(L, dtype)).random_(7))
        both(lambda L: L.empty(40, dtype=getattr(L, dtype)).random_(2, 9))


def test_random_full_64_bit_range():
    both(lambda L: L.empty(9, dtype=L.int64).random_(-(2**63), None))
    both(lambda L: L.randint(-(2**62), 2**62, (9,)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 100, 2000])
def test_randperm(n):
    both(lambda L: L.randperm(n))
    both(lambda L: L.randperm(n, dtype=L.float32), calls=1)


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
@pytest.mark.parametrize("n", [1, 17, 500])
def test_bernoulli(dtype, n):
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).bernoulli_(0.3))
    if dtype in ("float32", "float64"):
        both(lambda L: L.bernoulli(L.linspace(0, 1, n, dtype=getattr(L, dtype))))
        both(lambda L: L.bernoulli(L.ones(n, dtype=getattr(L, dtype)), 0.7))
        both(lambda L: L.empty(n, 2).bernoulli_(L.linspace(0, 1, 2, dtype=getattr(L, dtype))))


def test_dropout():
    def run(L):
        x = L.ones(7, 9)
        return L.cat([L.nn.functional.dropout(x, 0.4).reshape(-1),
                      L.nn.Dropout(0.2)(x).reshape(-1),
                      L.nn.functional.alpha_dropout(x * 0.5, 0.3, True).reshape(-1)])

    both(run)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 17, 100])
def test_dropout_low_precision_scale_as_torch(dtype, n):
    # torch scales half by 1/(1-p) computed in float32 (one rounding): 1.4287, not 1.4277
    base = np.linspace(-3, 3, n)
    both(lambda L: L.nn.functional.dropout(L.tensor(base).to(getattr(L, dtype)), 0.3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 16, 33])
def test_one_uniform_transforms(dtype, n):
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).exponential_(1.5))
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).cauchy_(0.37, 0.77))
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).log_normal_(0.37, 0.77))
    both(lambda L: L.empty(n, dtype=getattr(L, dtype)).geometric_(0.3))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_one_uniform_transforms_low_precision_round_through_float(dtype):
    # torch builds half/bfloat16 from a float: double -> float -> half (element 3771 of this
    # stream rounds differently when cast directly)
    for fn in (lambda L: L.empty(4000, dtype=getattr(L, dtype)).exponential_(1.5),
               lambda L: L.empty(4000, dtype=getattr(L, dtype)).cauchy_(0.37, 0.77),
               lambda L: L.empty(4000, dtype=getattr(L, dtype)).log_normal_(0.37, 0.77),
               lambda L: L.empty(9, dtype=getattr(L, dtype)).normal_(0.37, 0.77)):
        both(fn, seed=72, calls=2)


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial(replacement, dtype):
    w = np.array([[0.1, 2.0, 0.0, 3.0, 1.0, 0.5], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], dtype=dtype)

    def draw(L, k):
        return L.multinomial(L.tensor(w), k, replacement)

    both(lambda L: draw(L, 1))
    both(lambda L: draw(L, 3))
    if replacement:
        both(lambda L: draw(L, 40))
    both(lambda L: L.multinomial(L.tensor(w[0]), 2, replacement))
    both(lambda L: L.multinomial(L.tensor(w).t() + 0.5, 2, replacement))  # Exp(1) in memory order


def test_normal_tensor_forms_and_likes():
    both(lambda L: L.normal(L.arange(20.0), L.ones(20) * 0.5))
    both(lambda L: L.normal(L.arange(5.0), 2.0))
    both(lambda L: L.normal(1.5, L.ones(18) * 3.0))
    both(lambda L: L.normal(0.5, 2.0, (4, 5)))
    x = np.zeros((3, 7), np.float32)
    both(lambda L: L.rand_like(L.tensor(x)))
    both(lambda L: L.randn_like(L.tensor(x)))
    both(lambda L: L.randint_like(L.tensor(x), 3, 11))


def test_poisson():
    lam = np.array([0.0, 0.5, 3.0, 9.5, 10.0, 25.0, 300.0], np.float32)
    both(lambda L: L.poisson(L.tensor(lam)))


def test_seeds_as_torch():
    for s in [0, 1, 72, 2**32 + 5, 2**64 - 1, -1, -(2**63), 67280421310721]:
        assert st.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
        same(st.rand(4), torch.rand(4))
    g, tg = st.Generator(), torch.Generator(device="cpu")
    assert g.initial_seed() == tg.initial_seed()
    same(st.rand(5, generator=g), torch.rand(5, generator=tg))
    s = st.seed()
    assert st.initial_seed() == s and 0 <= s < 2**64


def test_state_round_trips_with_torch():
    torch.manual_seed(5)
    torch.randn(3)  # leaves a cached normal sample in the state
    torch.rand(700)  # past one twist of the engine
    state = torch.get_rng_state()
    ours = st.tensor(state.numpy())
    st.set_rng_state(ours)
    assert st.get_rng_state().numpy().tobytes() == state.numpy().tobytes()
    same(st.randn(5), torch.randn(5))
    same(st.rand(30), torch.rand(30))
    back = st.get_rng_state()
    assert back.shape == (5056,) and back.dtype is st.uint8
    torch.set_rng_state(torch.from_numpy(back.numpy()))
    same(st.randn(3, dtype=st.float64), torch.randn(3, dtype=torch.float64))
    # a freshly seeded generator's state has torch's bytes too
    g, tg = st.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    assert g.get_state().numpy().tobytes() == tg.get_state().numpy().tobytes()
    g2 = st.Generator().set_state(st.tensor(tg.get_state().numpy()))
    same(st.randperm(50, generator=g2), torch.randperm(50, generator=tg))


def test_state_errors():
    g = st.Generator()
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(st.zeros(3, dtype=st.uint8))
    bad = g.get_state().numpy().copy()
    bad[8:12] = 0  # left == 0 is not a valid mt19937 state
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(st.tensor(bad))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_fills_follow_memory_order(dtype):
    def fills(L):
        d = getattr(L, dtype)
        base = L.zeros(6, 20, dtype=d)
        t = base.t()  # memory order differs from logical order
        s = L.zeros(6, 40, dtype=d)[:, ::2]  # logical order, but not contiguous
        return L.cat([
            t.uniform_(-1, 2).reshape(-1), t.normal_().reshape(-1), s.normal_(1, 2).reshape(-1),
            t.bernoulli_(0.4).reshape(-1), t.random_(0, 50).reshape(-1),
            t.exponential_().reshape(-1), t.bernoulli_(L.full((20, 1), 0.5, dtype=d)).reshape(-1),
        ])

    both(fills, calls=2)


@pytest.mark.parametrize("make", [
    lambda L: L.nn.Linear(5, 7), lambda L: L.nn.Conv2d(3, 4, 3), lambda L: L.nn.Embedding(10, 4),
    lambda L: L.nn.LSTM(3, 5), lambda L: L.nn.GRU(3, 5, num_layers=2), lambda L: L.nn.Bilinear(3, 4, 5),
])
def test_module_initialisation(make):
    torch.manual_seed(0)
    st.manual_seed(0)
    theirs, ours = dict(make(torch).named_parameters()), dict(make(st).named_parameters())
    assert theirs.keys() == ours.keys()
    for k in theirs:
        same(ours[k].detach(), theirs[k].detach())


@pytest.mark.parametrize("init", ["uniform_", "normal_", "xavier_uniform_", "kaiming_normal_",
                                  "kaiming_uniform_", "sparse_"])
def test_nn_init(init):
    args = (0.3,) if init == "sparse_" else ()
    both(lambda L: getattr(L.nn.init, init)(L.empty(6, 5), *args), calls=2)


@pytest.mark.parametrize("shape", [(6, 5), (5, 6), (1, 3), (2, 3, 4)])
def test_orthogonal_same_draws_qr_to_rounding(shape):
    # the same normal draws; the QR (NumPy's LAPACK vs torch's) agrees to a few float32 ulps
    for seed in (1, 72):
        st.manual_seed(seed)
        torch.manual_seed(seed)
        a = st.nn.init.orthogonal_(st.empty(*shape), gain=1.5).numpy()
        b = torch.nn.init.orthogonal_(torch.empty(*shape), gain=1.5).numpy()
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-6)
        same(st.rand(3), torch.rand(3))  # the stream continues in step


@pytest.mark.parametrize("args", [(), (0.0, 1.0, 1.0, 3.0), (0.0, 0.02, -0.04, 0.04), (0, 1, 2.5, 4.0)])
def test_trunc_normal(args):
    both(lambda L: L.nn.init.trunc_normal_(L.empty(40, 30), *args), calls=2)


def test_data_loading_order():
    from torch.utils.data import DataLoader, RandomSampler, random_split

    import sparsetorch.utils.data as sd

    torch.manual_seed(5)
    st.manual_seed(5)
    theirs = [b.tolist() for b in DataLoader(list(range(20)), batch_size=4, shuffle=True)]
    assert [b.tolist() for b in sd.DataLoader(list(range(20)), batch_size=4, shuffle=True)] == theirs
    theirs = list(RandomSampler(range(10), replacement=True, num_samples=7))
    assert list(sd.RandomSampler(range(10), replacement=True, num_samples=7)) == theirs
    theirs = [list(x) for x in random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))]
    assert [list(x) for x in sd.random_split(range(10), [3, 7], generator=st.Generator().manual_seed(1))] == theirs


@pytest.mark.parametrize("use_numba", [True, False])
def test_large_draws_with_and_without_numba(use_numba):
    from sparsetorch.sparse import _spmm

    old = _spmm.use_numba(use_numba)
    try:
        both(lambda L: L.randn(5000), calls=2)
        both(lambda L: L.randn(4500, dtype=L.float64), calls=1)
        both(lambda L: L.empty(5000, dtype=L.float64).normal_(1.5, 2.0), calls=1)
        both(lambda L: L.empty(5000).exponential_(), calls=1)
        both(lambda L: L.empty(5000).cauchy_(), calls=1)
        both(lambda L: L.empty(5000).log_normal_(), calls=1)
        both(lambda L: L.empty(5000).geometric_(0.25), calls=1)
        both(lambda L: L.randperm(6000), calls=1)
    finally:
        _spmm.use_numba(old)


def test_generator_clone_state_and_offsets():
    g, tg = st.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    st.randn(1, generator=g)
    torch.randn(1, generator=tg)  # a cached normal sample travels with the clone
    c, tc = g.clone_state(), tg.clone_state()
    assert c.initial_seed() == tc.initial_seed() == 3
    same(st.randn(3, generator=c), torch.randn(3, generator=tc))
    same(st.randn(3, generator=g), torch.randn(3, generator=tg))
    for call in (lambda x: x.get_offset(), lambda x: x.set_offset(1)):
        with pytest.raises(RuntimeError, match="does not use offset"):
            call(g)
    with pytest.raises(NotImplementedError, match="graphsafe_get_state"):
        g.graphsafe_get_state()


def test_edge_shapes_and_bounds():
    both(lambda L: L.bernoulli(L.tensor(0.5)))
    both(lambda L: L.randn(()))
    both(lambda L: L.empty(20).uniform_(1, 1))
    both(lambda L: L.empty(20).normal_(3, 0))
    both(lambda L: L.multinomial(L.tensor([0.0, 0.0, 1.0, 0.0]), 3, True))
    for args, dtype, match in [((-60000, 60000), "float16", "to-from <= std::numeric_limits<Half>"),
                               ((1, 2e5), "float16", "to is out of bounds for c10::Half"),
                               ((-1e39, 0), "float32", "from is out of bounds for float")]:
        with pytest.raises(RuntimeError, match=match.replace("(", r"\(")):
            st.empty(3, dtype=getattr(st, dtype)).uniform_(*args)


def test_like_and_dropout_of_permuted_tensors_keep_torch_order_and_strides():
    def run(L):
        x = L.ones(4, 6).t()
        y = L.ones(2, 3, 5).permute(2, 0, 1)
        outs = [L.rand_like(x), L.randn_like(x), L.randn_like(y), L.randint_like(x, 10),
                L.nn.functional.dropout(x, 0.5), L.nn.functional.alpha_dropout(x, 0.5, True),
                L.rand_like(L.ones(4, 6)[:, ::2])]
        assert [tuple(o.stride()) for o in outs[:2]] == [(1, 6), (1, 6)]
        return L.cat([o.reshape(-1) for o in outs])

    both(run, calls=2)
