"""Conversion and interop: repr, NumPy memory sharing, DLPack, pickling, ``to``, Python scalars."""

import copy
import operator
import pickle
import warnings

import numpy as np
import pytest

import sparsetorch as st

from .test_creation import assert_parity


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


# ---- repr ----


def _repr_cases():
    rng = np.random.default_rng(0)
    cases = []
    for dt in (np.float32, np.float64, np.float16):
        for scale in (1, 1e-3, 1e-5, 1e3, 1e5, 1e9, 123.456):
            for shape in ((), (1,), (5,), (3, 4), (2, 3, 4), (30,), (7, 13), (1001,), (3, 400)):
                with np.errstate(over="ignore"):
                    cases.append((rng.standard_normal(shape) * scale).astype(dt))
                    cases.append(np.round(rng.standard_normal(shape) * scale).astype(dt))
        for vals in (
            [np.nan, 1.5, -np.inf],
            [np.nan, 1.0, np.inf],
            [0.0, -0.0],
            [np.inf],
            [0.0, 1e-5, 1.0],
            [1e8, 1.0],
            [-1.0, 2.0, 1000.0],
            [-1.0, 2.0, 1001.0],
        ):
            with np.errstate(over="ignore"):
                cases.append(np.array(vals, dt))
        for shape in ((0,), (0, 3), (2, 0, 3)):
            cases.append(np.zeros(shape, dt))
        cases += [np.array(0.0, dt), np.array(-0.5, dt), np.array(np.nan, dt)]
    for dt in (np.int64, np.int32, np.int8, np.uint8, np.int16, np.bool_):
        hi = 2 if dt is np.bool_ else 100
        lo = 0 if dt in (np.uint8, np.bool_) else -100
        for shape in ((), (5,), (3, 4), (2, 3, 4), (1001,), (40, 40), (0,), (0, 2)):
            cases.append(rng.integers(lo, hi, shape).astype(dt))
    for dt in (np.complex64, np.complex128):
        for shape in ((), (3,), (2, 3), (1001,)):
            cases.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt))
        cases += [np.array([1 + 0j, 1.5, -2j], dt), np.array([1e-5 + 1e5j], dt)]
    return cases


def _same_repr(torch, a):
    a = np.asarray(a)
    want = repr(torch.from_numpy(a.copy()))
    got = repr(st.from_numpy(a.copy())).replace("sparsetorch.", "torch.")
    assert got == want, f"\n{got}\n!=\n{want}"


def test_repr_matches_torch(torch):
    for a in _repr_cases():
        _same_repr(torch, a)


@pytest.mark.parametrize(
    "opts",
    [
        {"precision": 2},
        {"sci_mode": True},
        {"sci_mode": False},
        {"threshold": 5},
        {"edgeitems": 1, "threshold": 5},
        {"linewidth": 30},
        {"profile": "short"},
        {"profile": "full"},
    ],
)
def test_set_printoptions_matches_torch(torch, opts):
    rng = np.random.default_rng(1)
    arrays = [
        np.array([1.5, 2.25, 1e-6], np.float32),
        np.arange(20.0).reshape(4, 5),
        np.array([123456789.0, 1.0]),
        rng.standard_normal((6, 7)).astype(np.float32),
    ]
    torch.set_printoptions(**opts)
    st.set_printoptions(**opts)
    try:
        for a in arrays:
            _same_repr(torch, a)
    finally:
        torch.set_printoptions(profile="default")
        st.set_printoptions(profile="default")


def test_repr_suffixes(torch):
    for build in (
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda m: m.tensor([1.0, 2.0], requires_grad=True) + 1,
        lambda m: m.tensor([[1.0, 2.0]] * 30, dtype=m.float64, requires_grad=True) * 3,
        lambda m: m.tensor([], dtype=m.int64),
        lambda m: m.zeros(0, 3, dtype=m.float64),
    ):
        assert repr(build(st)).replace("sparsetorch.", "torch.") == repr(build(torch))
    assert repr(st.tensor(3.0)) == "tensor(3.)"
    assert repr(st.tensor([5.0, 12.0, 21.0])) == "tensor([ 5., 12., 21.])"
    assert repr(st.tensor([], dtype=st.float64)) == "tensor([], dtype=sparsetorch.float64)"
    assert (
        str(st.tensor([1.0, 2.0], dtype=st.float64))
        == "tensor([1., 2.], dtype=sparsetorch.float64)"
    )


# ---- NumPy ----


def test_numpy_memory_sharing_both_ways():
    a = np.arange(4.0)
    t = st.from_numpy(a)
    np.add(a, 1, out=a)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0]
    t.add_(1)
    assert a.tolist() == [2.0, 3.0, 4.0, 5.0]
    n = t.numpy()
    assert np.shares_memory(n, a)
    x = st.ones(3)
    x.numpy()[0] = 7
    assert x[0].item() == 7
    assert np.shares_memory(np.asarray(x), x.numpy())


def test_numpy_refusals_and_array_protocol():
    w = st.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        w.numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(w)
    assert w.numpy(force=True).tolist() == [1.0, 1.0]
    x = st.tensor([1.0, 2.0])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        x.__array__(np.float64, copy=False)
    assert x.__array__(copy=False) is x.numpy()
    c = x.__array__(copy=True)
    c[0] = 9
    assert x[0].item() == 1.0


# ---- DLPack ----


def test_dlpack_with_torch_shares_memory(torch):
    tt = torch.arange(4.0)
    s = st.from_dlpack(tt)
    tt[0] = 100
    assert s[0].item() == 100 and s.dtype is st.float32
    s2 = st.arange(3.0)
    t2 = torch.from_dlpack(s2)
    s2.add_(1)
    assert t2.tolist() == [1.0, 2.0, 3.0]
    s3 = st.tensor([[1, 2], [3, 4]], dtype=st.int32).t()
    t3 = torch.from_dlpack(s3)
    assert t3.tolist() == [[1, 3], [2, 4]] and t3.stride() == (1, 2)
    assert st.from_dlpack(torch.tensor([True, False])).tolist() == [True, False]
    caps = torch.utils.dlpack.to_dlpack(torch.arange(3))
    assert st.from_dlpack(caps).tolist() == [0, 1, 2]


def test_dlpack_with_numpy_and_refusals():
    s = st.arange(3.0)
    n = np.from_dlpack(s)
    s.add_(1)
    assert n.tolist() == [1.0, 2.0, 3.0]
    a = np.arange(3.0)
    t = st.from_dlpack(a)
    a[0] = 5
    assert t[0].item() == 5
    assert tuple(int(v) for v in s.__dlpack_device__()) == (1, 0)
    with pytest.raises(BufferError, match="gradient"):
        st.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError, match="negative strides"):
        st.from_numpy(np.arange(3.0)[::-1]).__dlpack__()
    with pytest.raises(TypeError, match="__dlpack__"):
        st.from_dlpack([1, 2])


# ---- pickling and deepcopy ----


def test_pickle_keeps_data_dtype_requires_grad_not_graph():
    w = st.tensor([1.0, 2.0], requires_grad=True)
    w.grad = st.ones(2)
    for obj, rg in ((w, True), (w * 2, True), (st.tensor([[1, 2]], dtype=st.int16), False)):
        r = pickle.loads(pickle.dumps(obj))
        assert r.tolist() == obj.tolist() and r.dtype is obj.dtype
        assert r.requires_grad is rg and r.grad_fn is None and r.grad is None
    base = st.arange(6.0)
    nb, nv = pickle.loads(pickle.dumps((base, base[2:4])))
    nv[0] = 100
    assert nb.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # as torch: views are not re-linked


def test_deepcopy():
    w = st.tensor([1.0, 2.0], requires_grad=True)
    w.grad = st.ones(2)
    c = copy.deepcopy(w)
    assert c.requires_grad and c.is_leaf and c.grad.tolist() == [1.0, 1.0]
    c.data.add_(1)
    assert w.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(w * 2)
    base = st.arange(6.0)
    nb, nv = copy.deepcopy((base, base[2:4]))
    nv[0] = 100
    assert nb.tolist() == [0.0, 1.0, 100.0, 3.0, 4.0, 5.0]  # as torch: views keep sharing
    t = st.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
    assert copy.deepcopy(t).tolist() == t.tolist()


def test_generator_pickles_and_deepcopies():
    g = st.Generator().manual_seed(5)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert st.rand(3, generator=h).tolist() == st.rand(3, generator=copy.deepcopy(g)).tolist()
        assert h.initial_seed() == 5


# ---- to(), type(), Python scalars ----

CONVERSION_EXPRS = [
    "float(torch.tensor([1., 2.]))",
    "int(torch.tensor([1., 2.]))",
    "bool(torch.tensor([1., 2.]))",
    "complex(torch.tensor([1., 2.]))",
    "operator.index(torch.tensor(1.))",
    "operator.index(torch.tensor([1]))",
    "operator.index(torch.tensor([[1]]))",
    "operator.index(torch.tensor(True))",
    "torch.tensor([1., 2.]).item()",
    "float(torch.tensor([2.5]))",
    "int(torch.tensor(2.7))",
    "int(torch.tensor(-2.7))",
    "bool(torch.tensor([]))",
    "float(torch.tensor([]))",
    "torch.tensor([]).item()",
    "f'{torch.tensor(2.5):.3f}'",
    "f'{torch.tensor([1., 2.]):.3f}'",
    "format(torch.tensor(3), 'd')",
    "[1, 2, 3][torch.tensor(1)]",
    "torch.tensor(2.5).item()",
    "type(torch.tensor(2).item())",
    "type(torch.tensor(True).item())",
    "type(torch.tensor(2.).item())",
    "torch.tensor([1.]).tolist()",
    "torch.tensor(1.).tolist()",
    "torch.tensor([[True]]).tolist()",
    "torch.tensor([1j]).tolist()",
    "len(torch.tensor(1.))",
    "iter(torch.tensor(1.))",
    "torch.tensor([1., 2.]).type()",
    "torch.tensor([1]).type()",
    "torch.tensor([True]).type()",
    "torch.tensor([1j]).type()",
    "torch.tensor([1., 2.]).type('torch.DoubleTensor')",
    "torch.tensor([1., 2.]).type(torch.int64)",
    "torch.tensor([1., 2.]).type('foo')",
    "torch.tensor([1., 2.]).to(torch.float64, False, True)",
    "torch.tensor([1., 2.]).to('cpu', torch.float64)",
    "torch.tensor([1., 2.]).to(torch.tensor([1]))",
    "torch.tensor([1., 2.]).to(dtype=torch.float64, device='cpu')",
    "torch.tensor([1., 2.]).to(None)",
    "torch.tensor([1., 2.]).to(device=None)",
    "torch.tensor([1., 2.]).to(torch.device('cpu'), torch.float64, False, True)",
    "torch.tensor([1., 2.]).to(torch.float64, 'cpu')",
    "torch.tensor([1., 2.]).to('cpu', 'cpu')",
    "torch.tensor([1., 2.]).to(other=torch.tensor([1., 2.]))",
    "torch.tensor([1., 2.]).to(torch.int64, non_blocking=True)",
    "torch.tensor([1., 2.]).to(torch.float64, foo=1)",
    "torch.tensor([1.5]).int()",
    "torch.tensor([1.5]).long()",
    "torch.tensor([1.5]).double()",
    "torch.tensor([1]).float()",
    "torch.tensor([1]).bool()",
    "torch.tensor([1.]).half()",
    "torch.tensor([1.]).cfloat()",
    "torch.tensor([1]).byte()",
    "torch.tensor([1.]).type_as(torch.tensor([1]))",
    "torch.tensor([[1., 2.], [3., 4.]]).t().contiguous().stride()",
    "torch.tensor([[1., 2.], [3., 4.]]).t().clone().stride()",
]


@pytest.mark.parametrize("expr", CONVERSION_EXPRS)
def test_conversions_match_torch(torch, expr):
    assert_parity(torch, expr, env={"operator": operator})


def test_to_identity_copy_and_grad():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    assert x.to("cpu") is x and x.to(st.float32) is x
    assert x.to("cpu", copy=True) is not x and x.to(st.float32, copy=True) is not x
    y = x.to(st.float64)
    assert y.dtype is st.float64 and y.grad_fn is not None
    (y * 3).sum().backward()
    assert x.grad.dtype is st.float32 and x.grad.tolist() == [3.0, 3.0]
    assert x.type() == "torch.FloatTensor"
    assert x.type("sparsetorch.DoubleTensor").dtype is st.float64


def test_format_of_zero_dim():
    assert f"{st.tensor(2.5):.3f}" == "2.500"
    assert f"{st.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        format(st.tensor([1.0, 2.0]), ".3f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [10, 20, 30][st.tensor(2)] == 30


def test_audit_sparse_tolist_and_numpy_raise_torchs_errors():
    torch = pytest.importorskip("torch")
    import warnings
    for conv in ("to_sparse", "to_sparse_csr"):
        s = getattr(st.eye(2), conv)()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's CSR beta warning
            t = getattr(torch.eye(2), conv)()
        for fn, err in (("tolist", RuntimeError), ("numpy", TypeError)):
            with pytest.raises(err) as want:
                getattr(t, fn)()
            with pytest.raises(err) as got:
                getattr(s, fn)()
            assert str(got.value).startswith(str(want.value).split(".")[0])
