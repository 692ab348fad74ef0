"""Semantics of reductions and linear algebra: dtype rules, dims, empty/0-d input, ties, errors,
gradients (including double backward), and parity with torch where it is installed."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import gradcheck, gradgradcheck


def T(a, dtype=None, rg=False):
    """A tensor from a list or array; float64 arrays become the default dtype, as lists do."""
    a = np.asarray(a)
    if dtype is None and a.dtype == np.float64:
        dtype = st.get_default_dtype()
    return st.tensor(a, dtype=dtype, requires_grad=rg)


def close(t, want, **kw):
    np.testing.assert_allclose(np.asarray(t.detach().numpy(), dtype=np.float64), want, **kw)


# ---- sum ----

def test_sum_dtype_rules():
    assert st.arange(6).sum().dtype is st.int64
    assert T([True, False, True]).sum().item() == 2
    assert T([True, False]).sum().dtype is st.int64
    assert T([1, 2], dtype=st.int32).sum().dtype is st.int64
    assert T([1.5, 2.5]).sum(dtype=st.int32).item() == 3  # cast first, then summed
    assert T([1.5, 2.5]).sum(dtype=st.int32).dtype is st.int32
    assert T([1.0, 2.0]).sum().dtype is st.float32
    assert T([1.0, 2.0], dtype=st.float16).sum().dtype is st.float16
    assert T([1, 2]).sum(dtype=st.float64).dtype is st.float64


def test_sum_dims():
    x = T(np.arange(24.0).reshape(2, 3, 4))
    a = np.arange(24.0).reshape(2, 3, 4)
    close(x.sum(1), a.sum(1))
    close(x.sum(-1, keepdim=True), a.sum(-1, keepdims=True))
    close(x.sum((0, 2)), a.sum((0, 2)))
    close(x.sum([2, 0], True), a.sum((0, 2), keepdims=True))
    close(x.sum(()), a.sum())
    close(x.sum([]), a.sum())
    assert x.sum(dim=(0, 1, 2), keepdim=True).shape == (1, 1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(3)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.sum((0, 0))
    with pytest.raises(TypeError, match="must be a Tensor"):
        st.sum([1, 2])


def test_sum_returns_arrays_and_edge_shapes():
    x = T([1.0, 2.0, 3.0])
    r = x.sum()
    assert isinstance(r._data, np.ndarray) and r.shape == ()
    assert isinstance(x.sum(0)._data, np.ndarray)
    assert st.zeros(0).sum().item() == 0
    assert st.zeros(2, 0).sum(1).tolist() == [0.0, 0.0]
    s = T(3.0)
    assert s.sum(0).item() == 3.0 and s.sum(-1, keepdim=True).shape == ()
    with pytest.raises(IndexError):
        s.sum(1)


def test_sum_backward_shapes():
    x = T(np.arange(8.0), rg=True)
    x.sum().backward()
    assert x.grad.tolist() == [1.0] * 8 and x.grad.dtype is st.float32
    y = T(np.ones((2, 3, 4)), dtype=st.float64, rg=True)
    (y.sum((0, 2)) * T([1.0, 2.0, 3.0], dtype=st.float64)).sum().backward()
    close(y.grad, np.broadcast_to(np.array([1.0, 2.0, 3.0])[None, :, None], (2, 3, 4)))
    z = T(np.ones((2, 3)), rg=True)
    z.sum(1, keepdim=True).sum().backward()
    assert z.grad.shape == (2, 3)
    w = T(np.ones(3), rg=True)
    w.sum(dtype=st.float64).backward()
    assert w.grad.dtype is st.float32


def test_sum_backward_does_not_save_input():
    x = T([1.0, 2.0], rg=True)
    y = x * 1
    s = y.sum()
    y.add_(1.0)  # sum's backward needs only the shape, so this is allowed (as in torch)
    s.backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_sum_grad_is_writable_fresh_array():
    x = T(np.arange(8.0), rg=True)
    x.sum().backward()
    x.grad.add_(1.0)  # the expanded gradient is a real buffer, not a broadcast view
    assert x.grad.tolist() == [2.0] * 8


# ---- mean, nansum, nanmean, prod ----

def test_mean_rules():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype "
                                           r"must be either a floating point or complex dtype. Got: Long"):
        st.arange(4).mean()
    with pytest.raises(RuntimeError, match="Got: Bool"):
        T([True]).mean()
    assert st.arange(4).mean(dtype=st.float64).item() == 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(st.zeros(0).mean().item())
    assert T(np.ones((2, 3))).mean((0, 1), True).shape == (1, 1)


def test_nan_reductions():
    x = T([1.0, float("nan"), 2.0])
    assert x.nansum().item() == 3.0
    assert x.nanmean().item() == 1.5
    with pytest.raises(RuntimeError, match="nanmean"):
        st.arange(3).nanmean()
    assert T([1, 2]).nansum().item() == 3


def test_prod_dtype_and_dim():
    assert T([True, False]).prod().dtype is st.int64
    assert T([2, 3], dtype=st.int32).prod().item() == 6
    with pytest.raises(TypeError):
        T(np.ones((2, 2))).prod((0, 1))
    assert st.zeros(0).prod().item() == 1.0


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_grad_with_zeros(dim):
    a = np.array([[1.5, 0.0, -2.0], [0.0, 2.0, 0.0], [1.0, -1.0, 2.0]])
    x = T(a, dtype=st.float64, rg=True)
    f = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim))
    assert gradcheck(f, (x,))
    assert not np.isnan(_grad(f, x)).any()


def _grad(f, x, seed=0):
    x.grad = None
    out = f(x)
    w = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    (out * T(w, dtype=out.dtype)).sum().backward()
    return x.grad.numpy()


# ---- extrema ----

def test_amax_ties_split_gradient():
    x = T([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], rg=True)
    x.amax(1).sum().backward()
    close(x.grad, [[0, 0.5, 0.5], [0.5, 0.5, 0]])
    x.grad = None
    x.max().backward()
    close(x.grad, [[0, 0.5, 0.5], [0, 0, 0]])


def test_max_dim_returns_values_indices_and_one_element_grad():
    x = T([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], rg=True)
    r = st.max(x, 1)
    v, i = r
    assert r.values is v and r.indices is i
    assert i.tolist() == [1, 0] and i.dtype is st.int64
    assert "values=" in repr(r) and "indices=" in repr(r)
    v.sum().backward()
    close(x.grad, [[0, 1, 0], [1, 0, 0]])
    r2 = x.max(dim=1, keepdim=True)
    assert r2.values.shape == (2, 1) and r2.indices.shape == (2, 1)
    m = x.min(0)
    assert m.indices.tolist() == [0, 1, 1]
    assert type(r)((v, i)).values is v  # constructible from one sequence, like torch's


def test_max_other_and_errors():
    a, b = T([1.0, 5.0]), T([3.0, 2.0])
    assert st.max(a, b).tolist() == [3.0, 5.0]
    assert a.min(b).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        st.zeros(0).max()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        st.zeros(0, 3).max(0)
    assert st.zeros(0, 3).max(1).values.shape == (0,)
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        st.zeros(0).amax()
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 1"):
        st.zeros(2, 0).amax(1)
    assert st.zeros(2, 0).amax(0).shape == (0,)
    with pytest.raises(TypeError):
        st.max(a, "x")
    assert T(5.0).max(0).values.item() == 5.0


def test_argmax():
    x = T([3, 1, 3, 2, 3])
    assert x.argmax().item() == 0 and x.argmin().item() == 1
    assert T([1.0, float("nan"), 2.0]).argmax().item() == 1
    assert T(np.ones((2, 3))).argmax(keepdim=True).shape == (1, 1)
    assert T(np.ones((2, 3))).argmax(1, True).shape == (2, 1)
    with pytest.raises(IndexError, match="numel\\(\\) == 0"):
        st.zeros(0).argmax()
    with pytest.raises(RuntimeError, match="bool"):
        T([True]).argmax()


def test_aminmax():
    r = st.aminmax(T([[3, 1], [3, 2]]), dim=0)
    assert r.min.tolist() == [3, 1] and r.max.tolist() == [3, 2]
    assert T([3.0, 1.0]).aminmax().max.item() == 3.0
    with pytest.raises(RuntimeError, match="aminmax"):
        st.zeros(0).aminmax()


# ---- statistics ----

def test_var_std_argument_forms():
    a = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    x = T(a)
    close(x.var(), a.var(ddof=1), rtol=1e-6)
    close(x.std(unbiased=False), a.std(), rtol=1e-6)
    close(st.std(x, False), a.std(), rtol=1e-6)  # std(input, unbiased)
    close(x.var(1, True, True), a.var(1, ddof=1, keepdims=True), rtol=1e-6)
    close(x.var(0, correction=0), a.var(0), rtol=1e-6)
    close(x.var(dim=1, correction=0.5), a.var(1, ddof=0.5), rtol=1e-6)
    with pytest.raises(TypeError):
        x.var(unbiased=True, correction=1)
    with pytest.raises(RuntimeError, match="floating point"):
        st.arange(3).std()
    assert np.isnan(T([1.0]).std().item())
    s, m = st.std_mean(x, 0)
    close(s, a.std(0, ddof=1), rtol=1e-6)
    close(m, a.mean(0), rtol=1e-6)


def test_std_gradient_is_zero_for_constant_input():
    x = T(np.ones(3), dtype=st.float64, rg=True)
    (x * 1).std().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# ---- norms ----

@pytest.mark.parametrize("p", ["fro", 2, 1, 3, 0.5, float("inf"), -float("inf"), 0])
def test_norm_values(p):
    a = np.array([[1.0, -3.0, 3.0], [2.0, 2.0, 0.0]])
    x = T(a)
    flat = np.abs(a).reshape(-1)
    want = {"fro": np.sqrt((flat ** 2).sum()), 2: np.sqrt((flat ** 2).sum()), 1: flat.sum(),
            float("inf"): flat.max(), -float("inf"): flat.min(), 0: (flat != 0).sum()}.get(p)
    if want is None:
        want = (flat ** p).sum() ** (1 / p)
    close(x.norm(p), want, rtol=1e-6)
    assert x.norm(p).dtype is st.float32


def test_norm_forms_and_errors():
    a = np.array([[1.0, -3.0, 3.0], [2.0, 2.0, 0.0]])
    x = T(a)
    close(st.norm(x, dim=1), np.sqrt((a ** 2).sum(1)), rtol=1e-6)
    close(st.norm(x, p="fro", dim=(0, 1)), np.sqrt((a ** 2).sum()), rtol=1e-6)
    close(st.norm(x, p="nuc"), np.linalg.svd(a, compute_uv=False).sum(), rtol=1e-5)
    assert st.norm(x, dtype=st.float64).dtype is st.float64
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        st.arange(3).norm()
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        x.norm("abc")
    close(st.dist(x, T([1.0, 1.0, 1.0])), np.sqrt(((a - 1) ** 2).sum()), rtol=1e-6)


def test_norm_gradient_at_zero_is_not_nan():
    x = T(np.zeros(3), dtype=st.float64, rg=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = T(np.zeros((2, 2)), dtype=st.float64, rg=True)
    y.norm(dim=1).sum().backward()
    assert not np.isnan(y.grad.numpy()).any()


# ---- logsumexp, softmax ----

def test_logsumexp_stable():
    x = T([[1000.0, 1000.0], [-float("inf"), -float("inf")]])
    r = x.logsumexp(1)
    close(r, [1000.0 + np.log(2.0), -np.inf])
    assert st.arange(3).logsumexp(0).dtype is st.float32
    assert st.zeros(2, 0).logsumexp(1).tolist() == [-np.inf, -np.inf]


def test_softmax_stable_and_dtype():
    x = T([[1000.0, 1001.0], [-1000.0, -1000.0]])
    close(x.softmax(1), [[1 / (1 + np.e), np.e / (1 + np.e)], [0.5, 0.5]], rtol=1e-6)
    close(x.log_softmax(1), [[-np.log1p(np.e), -np.log1p(1 / np.e)], [-np.log(2), -np.log(2)]],
          rtol=1e-6)
    assert st.softmax(T([1.0, 2.0]), 0, st.float64).dtype is st.float64
    assert st.softmax(st.arange(3), 0, dtype=st.float32).dtype is st.float32
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        st.softmax(st.arange(3), 0)
    with pytest.raises(TypeError):
        st.softmax(T([1.0]), None)


# ---- logic ----

def test_all_any_count():
    x = T([[1, 0], [3, 4]])
    assert x.all().item() is False and x.any().item() is True
    assert x.all(0).tolist() == [True, False]
    assert T([[1, 0], [3, 4]], dtype=st.uint8).any(1).dtype is st.uint8
    assert x.all((0, 1)).item() is False
    assert x.count_nonzero().item() == 3 and x.count_nonzero(1).tolist() == [1, 2]
    assert x.count_nonzero().dtype is st.int64


# ---- cumulative ----

def test_cumsum_cumprod_dtypes():
    assert T([True, True]).cumsum(0).tolist() == [1, 2]
    assert T([True, True]).cumsum(0).dtype is st.int64
    assert T([3, 1], dtype=st.int32).cumprod(0).dtype is st.int64
    assert T([3, 1]).cumsum(0, dtype=st.float32).dtype is st.float32
    assert T(5.0).cumsum(0).item() == 5.0
    with pytest.raises(IndexError):
        T(np.ones((2, 2))).cumsum(2)


def test_cummax_cummin_ties_take_latest_index():
    r = T([3, 1, 3, 2, 3]).cummax(0)
    assert r.values.tolist() == [3, 3, 3, 3, 3] and r.indices.tolist() == [0, 0, 2, 2, 4]
    m = T([3, 1, 3, 1, 0]).cummin(0)
    assert m.values.tolist() == [3, 1, 1, 1, 0] and m.indices.tolist() == [0, 1, 1, 3, 4]


def test_cummax_gradient_accumulates_repeats():
    x = T([1.0, 3.0, 2.0, 0.5], rg=True)
    x.cummax(0).values.sum().backward()
    assert x.grad.tolist() == [1.0, 3.0, 0.0, 0.0]


# ---- median, sort, topk, kthvalue ----

def test_median():
    assert T([1, 3, 2, 4]).median().item() == 2  # lower median
    r = T([[1, 3, 2, 4], [3, 3, 3, 1]]).median(1)
    assert r.values.tolist() == [2, 3] and r.indices.tolist() == [2, 0]
    assert np.isnan(T([1.0, float("nan"), 2.0]).median().item())
    assert np.isnan(st.zeros(0).median().item())
    x = T([2.0, 2.0, 1.0, 3.0], rg=True)
    x.median().backward()
    assert x.grad.tolist() == [0.5, 0.5, 0.0, 0.0]
    with pytest.raises(IndexError, match="non-zero size"):
        st.zeros(2, 0).median(1)


def test_sort_stable_and_nan():
    v, i = T([3, 1, 3, 2]).sort(descending=True, stable=True)
    assert v.tolist() == [3, 3, 2, 1] and i.tolist() == [0, 2, 3, 1]
    assert T([3, 1, 3, 2]).argsort().tolist() == [1, 3, 0, 2]
    r = T([1.0, float("nan"), 2.0]).sort()
    assert r.indices.tolist() == [0, 2, 1]
    assert T([1.0, float("nan"), 2.0]).sort(descending=True).indices.tolist() == [1, 2, 0]
    assert st.zeros(2, 0).sort(1).values.shape == (2, 0)


def test_topk_kthvalue():
    r = T([3.0, 1.0, 4.0, 2.0]).topk(2)
    assert r.values.tolist() == [4.0, 3.0] and r.indices.tolist() == [2, 0]
    assert T([3, 1, 3, 2]).topk(2, largest=False).indices.tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="k out of range"):
        T([1.0]).topk(2)
    k = T([3, 1, 3, 2]).kthvalue(2)
    assert k.values.item() == 2 and k.indices.item() == 3
    with pytest.raises(RuntimeError, match="out of range for dimension 0"):
        T([3, 1]).kthvalue(5)
    x = T([3.0, 1.0, 4.0], rg=True)
    x.topk(2).values.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


_TOPK_KINDS = ["float32", "ties", "int32", "nan", "float16", "bfloat16", "uint8"]


def _topk_sample(kind, shape, r):
    return {"float32": lambda: r.random(shape).astype(np.float32),
            "ties": lambda: r.integers(0, 30, shape).astype(np.float64),
            "int32": lambda: r.integers(-10**6, 10**6, shape).astype(np.int32),
            "nan": lambda: np.where(r.random(shape) < 0.05, np.nan, r.standard_normal(shape)),
            "float16": lambda: r.integers(0, 40, shape).astype(np.float16),
            "bfloat16": lambda: r.integers(0, 40, shape).astype(np.float32),
            "uint8": lambda: r.integers(0, 9, shape).astype(np.uint8)}[kind]()


@pytest.mark.parametrize("kind", _TOPK_KINDS)
def test_topk_indices_are_torchs_ties_and_unsorted_included(kind):
    # torch's CPU topk runs std::partial_sort (k * 64 <= n) or std::nth_element + std::sort,
    # neither stable: LightGCN-PyTorch's PureMF scores saturate at 1.0 and its NDCG differed
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(11)
    for shape, dim in (((3, 2000), -1), ((40, 2, 3), 0), ((2, 130, 3), 1), ((90,), 0),
                       ((0, 80), 1), ((5, 1), 1)):
        a = _topk_sample(kind, shape, r)
        dt = {"bfloat16": (st.bfloat16, torch.bfloat16)}.get(kind, (None, None))
        x, xt = st.tensor(a, dtype=dt[0]), torch.tensor(a, dtype=dt[1])
        n = x.shape[dim]
        for k in sorted({0, 1, min(n, 5), n // 4, n // 2, n}):
            for largest in (True, False):
                for srt in (True, False):
                    v, i = x.topk(k, dim, largest, srt)
                    tv, ti = xt.topk(k, dim, largest, srt)
                    assert np.array_equal(i.numpy(), ti.numpy()), (shape, k, largest, srt)
                    assert np.array_equal(v.float().numpy(), tv.float().numpy(), equal_nan=True)


@pytest.mark.parametrize("kind", _TOPK_KINDS)
def test_topk_selection_fallback_gives_the_stable_sorts_indices(kind):
    # without the numba kernel (GPU, SPARSETORCH_NO_NUMBA) a small k of a long dim goes by
    # argpartition; its indices are the full stable sort's, ties and NaN rows included
    from sparsetorch._ops import sorting
    r = np.random.default_rng(7)
    for shape, dim in (((6, 300), -1), ((200, 3, 2), 0), ((2, 130, 3), 1), ((0, 80), 1)):
        a = _topk_sample(kind, shape, r)
        x = st.tensor(a, dtype=st.bfloat16 if kind == "bfloat16" else None)
        d = dim % x.ndim
        for k in (1, 5, x.shape[d] // 4):
            for largest in (True, False):
                full = sorting._slice_along(sorting._argsort_payload(x, d, largest), d, 0, k)
                got = sorting._partial_topk(x, d, k, largest)
                assert got is None or np.array_equal(got, full)
    a = r.random((100, 4489)).astype(np.float32)  # distinct values: the fast path is taken
    x = st.tensor(a)
    assert np.array_equal(sorting._partial_topk(x, 1, 20, True), np.argsort(-a, 1)[:, :20])
    g = st.tensor(a, requires_grad=True)
    g.topk(3, largest=False).values.sum().backward()
    assert g.grad.sum().item() == 300 and (g.grad.numpy()[np.arange(100)[:, None],
                                                              np.argsort(a, 1)[:, :3]] == 1).all()


# ---- double backward ----

_GG = [
    ("sum", lambda x: x.sum(1)),
    ("mean", lambda x: x.mean(0, keepdim=True)),
    ("prod", lambda x: x.prod(1)),
    ("amax", lambda x: x.amax(1)),
    ("std", lambda x: x.std(1)),
    ("norm", lambda x: x.norm(dim=1)),
    ("logsumexp", lambda x: x.logsumexp(1)),
    ("softmax", lambda x: x.softmax(1)),
    ("log_softmax", lambda x: x.log_softmax(0)),
    ("cumsum", lambda x: x.cumsum(1)),
    ("max.dim", lambda x: x.max(1).values),
    ("sort", lambda x: x.sort(1).values),
    ("mm", lambda x: st.mm(x, x.T)),
    ("matmul-vec", lambda x: st.matmul(x, st.ones(3, dtype=st.float64))),
    ("einsum", lambda x: st.einsum("ij,kj->ik", x, x)),
    ("diagonal", lambda x: x.diagonal() * x.diagonal()),
]


@pytest.mark.parametrize("name,f", _GG, ids=[n for n, _ in _GG])
def test_double_backward(name, f):
    a = np.random.default_rng(1).uniform(0.5, 2.0, (2, 3)) * np.array([1, -1, 1])
    x = T(a, dtype=st.float64, rg=True)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


# ---- linear algebra ----

def test_mm_errors_exact():
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)$"):
        st.mm(st.ones(2, 3), st.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"^expected m1 and m2 to have the same dtype, but got: float != double$"):
        st.mm(st.ones(2, 3), st.ones(3, 5, dtype=st.float64))
    with pytest.raises(RuntimeError, match="long int != float"):
        st.mm(st.ones(2, 3, dtype=st.int64), st.ones(3, 5))


def test_matmul_cases_shapes():
    o = st.ones
    assert st.matmul(o(3), o(3)).shape == ()
    assert st.matmul(o(2, 3), o(3)).shape == (2,)
    assert st.matmul(o(3), o(3, 4)).shape == (4,)
    assert st.matmul(o(5, 2, 3), o(3, 4)).shape == (5, 2, 4)
    assert st.matmul(o(3), o(5, 3, 4)).shape == (5, 4)
    assert st.matmul(o(5, 2, 3), o(3)).shape == (5, 2)
    assert st.matmul(o(2, 1, 2, 3), o(4, 3, 2)).shape == (2, 4, 2, 2)
    assert (o(2, 3) @ o(3, 2)).shape == (2, 2)
    assert (np.ones((2, 3), np.float32) @ o(3, 2)).shape == (2, 2)  # __rmatmul__
    with pytest.raises(RuntimeError, match="at least 1D"):
        st.matmul(st.ones(()), o(3))


def test_matmul_broadcast_gradients():
    a = T(np.random.default_rng(0).standard_normal((2, 1, 2, 3)), dtype=st.float64, rg=True)
    b = T(np.random.default_rng(1).standard_normal((4, 3, 2)), dtype=st.float64, rg=True)
    assert gradcheck(st.matmul, (a, b))
    v = T(np.random.default_rng(2).standard_normal(3), dtype=st.float64, rg=True)
    assert gradcheck(st.matmul, (v, b))
    assert gradcheck(st.matmul, (a, v))


def test_add_product_family():
    nan = st.full((2, 4), float("nan"))
    a, b = st.ones(2, 3), st.ones(3, 4)
    assert st.addmm(nan, a, b, beta=0).tolist() == [[3.0] * 4] * 2
    c = st.zeros(2, 4)
    r = c.addmm_(a, b, alpha=2.0)
    assert r is c and c.tolist() == [[6.0] * 4] * 2
    assert st.addmm(st.ones(4), a, b).shape == (2, 4)
    with pytest.raises(RuntimeError):
        st.addmm(st.ones(3, 4), a, b)
    assert st.addmv(st.ones(2), a, st.ones(3), beta=2, alpha=-1).tolist() == [-1.0, -1.0]
    assert st.addr(st.zeros(3, 2), st.ones(3), st.ones(2)).shape == (3, 2)
    assert st.baddbmm(st.zeros(2, 2), st.ones(3, 2, 4), st.ones(3, 4, 2)).shape == (3, 2, 2)


def test_einsum_forms():
    a = T(np.arange(6.0).reshape(2, 3))
    b = T(np.arange(12.0).reshape(3, 4))
    want = np.arange(6.0).reshape(2, 3) @ np.arange(12.0).reshape(3, 4)
    close(st.einsum("ij,jk->ik", a, b), want)
    close(st.einsum("ij,jk", [a, b]), want)
    close(st.einsum("i j , j k -> i k", a, b), want)
    close(st.einsum(a, [0, 1], b, [1, 2], [0, 2]), want)
    close(st.einsum("ii", T(np.eye(3))), 3.0)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        st.einsum("ij,jk->ik", a, st.ones(4, 4))


@pytest.mark.parametrize("eq,shapes", [
    ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ij,j->i", [(2, 3), (3,)]),
    ("...ij,jk->...ik", [(2, 2, 3), (3, 2)]), ("bij,bjk->bik", [(1, 2, 3), (2, 3, 2)]),
    ("iij->ij", [(2, 2, 3)]), ("ijk->kj", [(2, 3, 2)]), ("i,i->", [(3,), (3,)]),
    ("ij,ij->", [(1, 3), (2, 3)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)]),
])
def test_einsum_gradients(eq, shapes):
    rng = np.random.default_rng(3)
    ts = tuple(T(rng.standard_normal(s), dtype=st.float64, rg=True) for s in shapes)
    assert gradcheck(lambda *xs: st.einsum(eq, *xs), ts)


def test_diagonal_is_a_view_and_diag_forms():
    x = T(np.zeros((3, 3)))
    d = x.diagonal()
    d.fill_(1.0)  # writes through to x
    assert x.tolist() == np.eye(3).tolist()
    assert st.diag(T([1.0, 2.0]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    assert st.diag(T(np.arange(12.0).reshape(3, 4)), 1).tolist() == [1.0, 6.0, 11.0]
    assert st.diag_embed(T(np.ones((2, 3))), 1).shape == (2, 4, 4)
    assert st.trace(T(np.arange(9).reshape(3, 3))).item() == 12
    assert st.trace(T(np.arange(9, dtype=np.int32).reshape(3, 3))).dtype is st.int64
    with pytest.raises(RuntimeError, match="Supports 1D or 2D"):
        st.diag(st.ones(2, 2, 2))


def test_inplace_on_diagonal_view_flows_to_base():
    a = T(np.arange(9.0).reshape(3, 3), rg=True)
    x = a * 1
    x.diagonal().mul_(2)
    (x * T(np.arange(9.0).reshape(3, 3))).sum().backward()
    assert x.diagonal().tolist() == [0.0, 8.0, 16.0]
    assert a.grad.numpy().ravel().tolist() == [0, 1, 2, 3, 8, 5, 6, 7, 16]


def test_tril_triu_inplace_cross_kron():
    x = st.ones(3, 3)
    assert x.tril_(-1) is x and x.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    assert st.triu(st.ones(2, 3, 3), 1).shape == (2, 3, 3)
    close(st.cross(T([[1.0, 0, 0]]), T([[0.0, 1, 0]]), dim=1), [[0, 0, 1]])
    with pytest.raises(RuntimeError, match="no dimension of size 3"):
        st.cross(st.ones(2, 4), st.ones(2, 4))
    close(st.kron(T([[1.0, 2.0]]), T([[1.0], [10.0]])), np.kron([[1, 2]], [[1], [10]]))


def test_vector_products():
    assert st.dot(T([1, 2]), T([3, 4])).item() == 11
    assert st.outer(T([1.0, 2.0]), T([1.0, 2.0, 3.0], dtype=st.float64)).dtype is st.float64
    assert st.inner(st.ones(2, 3), st.ones(4, 3)).shape == (2, 4)
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        st.dot(st.ones(3, 1), st.ones(3))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        st.dot(st.ones(3), st.ones(4))
    with pytest.raises(RuntimeError, match="size mismatch, got input \\(2\\), mat \\(2x3\\), vec \\(4\\)"):
        st.mv(st.ones(2, 3), st.ones(4))


# ---- parity with torch ----

def _torch():
    return pytest.importorskip("torch")


def _run(lib, f, arrays, rg):
    ts = []
    for a in arrays:
        if lib is st:
            ts.append(st.tensor(a, requires_grad=rg and a.dtype.kind == "f"))
        else:
            ts.append(lib.tensor(a, requires_grad=rg and a.dtype.kind == "f"))
    out = f(lib, *ts)
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    grads = None
    if rg:
        loss = 0
        for k, o in enumerate(outs):
            if o.dtype.is_floating_point and o.requires_grad:
                w = np.random.default_rng(k).standard_normal(tuple(o.shape)).astype(np.float64)
                loss = loss + (o.double() * lib.tensor(w)).sum() if lib is not st else \
                    loss + (o.double() * st.tensor(w)).sum()
        if not isinstance(loss, int):
            loss.backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in ts]
    return [o.detach().numpy() for o in outs], grads


_P = [
    ("sum-int", lambda L, x: x.sum(), [np.arange(6).reshape(2, 3)]),
    ("sum-tuple", lambda L, x: x.sum((0, -1), keepdim=True), None),
    ("mean-dim", lambda L, x: x.mean(-1), None),
    ("prod-dim", lambda L, x: x.prod(1), [np.array([[1.5, 0.0, -2.0], [0.0, 2.0, 0.0], [1.0, -1.0, 2.0]])]),
    ("prod-all-zero", lambda L, x: x.prod(), [np.array([[1.5, 0.0, -2.0], [3.0, 2.0, 1.0]])]),
    ("amax-ties", lambda L, x: x.amax(0), [np.array([[1.0, 3.0], [1.0, 2.0]])]),
    ("max-dim-ties", lambda L, x: x.max(1), [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])]),
    ("min-dim", lambda L, x: L.min(x, 0, keepdim=True), None),
    ("median-all-ties", lambda L, x: x.median(), [np.array([2.0, 2.0, 1.0, 3.0])]),
    ("median-dim", lambda L, x: x.median(1), None),
    ("std", lambda L, x: x.std(1, keepdim=True), None),
    ("var-corr", lambda L, x: x.var(0, correction=0), None),
    ("norm-1", lambda L, x: x.norm(1, 1), None),
    ("norm-3", lambda L, x: x.norm(3), None),
    ("norm-inf", lambda L, x: x.norm(float("inf"), 0), None),
    ("norm-zero", lambda L, x: (x * 0).norm(), None),
    ("logsumexp", lambda L, x: x.logsumexp((0, 1)), None),
    ("softmax", lambda L, x: x.softmax(0), None),
    ("log_softmax", lambda L, x: L.log_softmax(x, -1), None),
    ("cumsum", lambda L, x: x.cumsum(1), None),
    ("cumprod-zeros", lambda L, x: x.cumprod(1), [np.array([[2.0, 0.0, 3.0, 0.0, 1.5], [1.0, 2.0, 0.0, 4.0, 2.0]])]),
    ("cumprod-first-zero", lambda L, x: x.cumprod(0), [np.array([0.0, 2.0, 3.0, 0.5])]),
    ("cummax", lambda L, x: x.cummax(1), [np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 5.0, 1.0]])]),
    ("cummin", lambda L, x: x.cummin(0), None),
    ("sort-desc", lambda L, x: x.sort(1, descending=True), None),
    ("topk", lambda L, x: x.topk(2, 0, largest=False), None),
    ("kthvalue", lambda L, x: x.kthvalue(2, 1, True), None),
    ("argmax", lambda L, x: x.argmax(1), None),
    ("matmul-bcast", lambda L, x, y: L.matmul(x, y), [np.ones((2, 1, 2, 3)) * 0.5, np.arange(18.0).reshape(3, 3, 2)]),
    ("matmul-vec-left", lambda L, x, y: L.matmul(x, y), [np.arange(3.0), np.arange(24.0).reshape(2, 3, 4)]),
    ("matmul-vec-right", lambda L, x, y: L.matmul(x, y), [np.arange(24.0).reshape(2, 4, 3), np.arange(3.0)]),
    ("addmm", lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), [np.ones(4), np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)]),
    ("einsum-diag", lambda L, x: L.einsum("ii->i", x), [np.arange(9.0).reshape(3, 3)]),
    ("einsum-bcast", lambda L, x, y: L.einsum("bij,bjk->bik", x, y), [np.ones((1, 2, 3)), np.arange(12.0).reshape(2, 3, 2)]),
    ("tensordot", lambda L, x, y: L.tensordot(x, y, dims=([1], [0])), [np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)]),
    ("diag-embed", lambda L, x: L.diag_embed(x, -1, 0, 2), [np.arange(6.0).reshape(2, 3)]),
    ("diagonal", lambda L, x: L.diagonal(x, 1, 2, 0), [np.arange(24.0).reshape(2, 3, 4)]),
    ("trace", lambda L, x: L.trace(x), [np.arange(12.0).reshape(3, 4)]),
    ("cross", lambda L, x, y: L.cross(x, y, dim=0), [np.arange(6.0).reshape(3, 2), np.ones((3, 2))]),
    ("kron", lambda L, x, y: L.kron(x, y), [np.arange(4.0).reshape(2, 2), np.arange(3.0) + 1]),
    ("inner", lambda L, x, y: L.inner(x, y), [np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)]),
]


@pytest.mark.parametrize("name,f,arrays", _P, ids=[p[0] for p in _P])
def test_matches_torch(name, f, arrays):
    torch = _torch()
    if arrays is None:
        arrays = [np.random.default_rng(7).uniform(-2, 2, (3, 4))]
    rg = all(a.dtype.kind == "f" for a in arrays)
    got, ggot = _run(st, f, arrays, rg)
    want, gwant = _run(torch, f, arrays, rg)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, name
        assert g.dtype == w.dtype, name
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    if rg:
        for g, w in zip(ggot, gwant):
            assert (g is None) == (w is None) or (w is None and not np.any(g)), name
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_selection_ops_refuse_sparse_input_naming_the_conversion(layout):
    # torch raises NotImplementedError for sparse input to these; ours said numpy AxisError
    x = st.rand(3, 5)
    s = x.to_sparse() if layout == "coo" else x.to_sparse_csr()
    calls = {"sort": lambda: st.sort(s), "argsort": lambda: st.argsort(s),
             "topk": lambda: st.topk(s, 2), "kthvalue": lambda: st.kthvalue(s, 2),
             "median": lambda: st.median(s, 1), "cummax": lambda: st.cummax(s, 1),
             "cummin": lambda: st.cummin(s, 0)}
    for name, f in calls.items():
        with pytest.raises(NotImplementedError, match=rf"^{name}: not implemented for layouts "
                           rf"\(sparse_{layout}\)\. Convert the sparse input with \.to_dense\(\)"):
            f()
    assert st.topk(s.to_dense(), 2).values.tolist() == st.topk(x, 2).values.tolist()
