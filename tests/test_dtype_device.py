"""dtype objects, torch's promotion rules, devices and layouts."""

import itertools
import pickle

import numpy as np
import pytest

import sparsetorch as st

DTYPES = [st.float16, st.float32, st.float64, st.int8, st.int16, st.int32, st.int64, st.uint8,
          st.bool, st.complex64, st.complex128]


def test_default_dtype_is_float32():
    assert st.get_default_dtype() is st.float32
    assert st.tensor([1.0, 2.0]).dtype is st.float32
    assert st.tensor(1.5).dtype is st.float32
    assert st.tensor([1, 2]).dtype is st.int64
    assert st.tensor([True]).dtype is st.bool
    assert st.tensor([1 + 2j]).dtype is st.complex64
    assert st.zeros(2).dtype is st.float32
    assert st.from_numpy(np.zeros(2)).dtype is st.float64  # from_numpy keeps NumPy's dtype


@pytest.mark.parametrize("a,b,want", [
    (st.int64, st.float16, st.float16), (st.int32, st.float16, st.float16),
    (st.uint8, st.int8, st.int16), (st.bool, st.uint8, st.uint8), (st.float64, st.complex64, st.complex128),
    (st.float16, st.complex64, st.complex64), (st.int64, st.float32, st.float32), (st.int8, st.int64, st.int64),
])
def test_promote_types_table(a, b, want):
    assert st.promote_types(a, b) is want
    assert st.promote_types(b, a) is want


def test_python_scalars_do_not_upcast():
    x = st.ones(3)
    assert (x + 2.5).dtype is st.float32
    assert (x * 2).dtype is st.float32
    assert (st.ones(3, dtype=st.int64) + 2.5).dtype is st.float32
    assert (st.ones(3, dtype=st.int32) + 2).dtype is st.int32
    assert (st.ones(3, dtype=st.int64) / 2).dtype is st.float32
    assert (st.ones(3, dtype=st.float16) + st.tensor(1.0, dtype=st.float64)).dtype is st.float16
    assert (st.tensor(1.0, dtype=st.float64) + st.tensor(1.0)).dtype is st.float64
    assert (st.ones(3, dtype=st.uint8) + st.tensor(300)).dtype is st.uint8
    assert (st.ones(3, dtype=st.bool) + 1).dtype is st.int64
    assert (st.ones(3) + 1j).dtype is st.complex64


def _tname(d):
    # torch has complex32 (float16 + complex scalar); NumPy has none, so sparsetorch gives complex64
    return str(d).split(".")[1].replace("complex32", "complex64")


def test_result_type_matches_torch_everywhere():
    torch = pytest.importorskip("torch")
    tmap = {d: getattr(torch, d.name) for d in DTYPES}
    for a, b in itertools.product(DTYPES, DTYPES):
        assert st.promote_types(a, b).name == _tname(torch.promote_types(tmap[a], tmap[b]))
        for a_dim, b_dim in [(1, 1), (1, 0), (0, 1), (0, 0)]:
            x = st.zeros((2,) * a_dim, dtype=a)
            y = st.zeros((2,) * b_dim, dtype=b)
            tx = torch.zeros((2,) * a_dim, dtype=tmap[a])
            ty = torch.zeros((2,) * b_dim, dtype=tmap[b])
            assert st.result_type(x, y).name == _tname(torch.result_type(tx, ty)), (a, b, a_dim, b_dim)
        for s in (True, 2, 2.5, 1j):
            assert st.result_type(st.zeros(2, dtype=a), s).name == \
                _tname(torch.result_type(torch.zeros(2, dtype=tmap[a]), s)), (a, s)


def test_set_default_dtype():
    try:
        st.set_default_dtype(st.float64)
        assert st.tensor([1.0]).dtype is st.float64
        assert (st.ones(2, dtype=st.int64) * 1.5).dtype is st.float64
    finally:
        st.set_default_dtype(st.float32)
    with pytest.raises(TypeError):
        st.set_default_dtype(st.int64)


def test_dtype_identity_aliases_and_pickle():
    assert st.float is st.float32 and st.double is st.float64 and st.long is st.int64
    assert st.half is st.float16 and st.int is st.int32 and st.cfloat is st.complex64
    assert repr(st.float32) == "sparsetorch.float32"
    for d in DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d
    assert st.float32.is_floating_point and not st.int64.is_floating_point and st.complex64.is_complex
    assert st.finfo(st.float32).eps == np.finfo(np.float32).eps
    assert st.iinfo(st.int8).max == 127


def test_device_parsing():
    assert st.device("cpu").type == "cpu" and st.device("cpu").index is None
    d = st.device("cuda:1")
    assert (d.type, d.index) == ("cuda", 1)
    assert st.device("cuda", 0) == st.device("cuda:0")
    assert str(st.device("cuda:1")) == "cuda:1"
    assert repr(st.device("cpu")) == "device(type='cpu')"
    assert st.device("cpu") == "cpu"
    assert st.ones(2).device == st.device("cpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        st.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        st.device("cuda:x")


def test_cuda_without_gpu_raises_clearly():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy present")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.ones(2).cuda()


def test_layouts():
    assert st.ones(2).layout is st.strided
    assert repr(st.sparse_coo) == "sparsetorch.sparse_coo"
    assert not st.ones(2).is_sparse


def test_dtype_knows_torchs_names_of_it():
    """Each dtype carries torch's ScalarType name (``x.type()``'s ``torch.<Name>Tensor``) and C++
    name (the mm dtype message): the one table every message uses."""
    torch = pytest.importorskip("torch")
    names = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
             "uint8", "bool", "complex64", "complex128")
    for name in names:
        assert getattr(st, name).scalar_name == torch.zeros(1, dtype=getattr(torch, name)).type()[6:-6]
    for name in ("float16", "bfloat16", "float64", "int64", "complex64"):
        with pytest.raises(RuntimeError) as e:
            torch.ones(2, 2).mm(torch.ones(2, 2, dtype=getattr(torch, name)))
        assert e.value.args[0].endswith(f"float != {getattr(st, name).cpp_name}")


def test_finfo_iinfo_repr_and_refusals_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("float16", "bfloat16", "float32", "float64", "complex64"):
        assert repr(st.finfo(getattr(st, name))) == repr(torch.finfo(getattr(torch, name)))
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        assert repr(st.iinfo(getattr(st, name))) == repr(torch.iinfo(getattr(torch, name)))
    assert repr(st.finfo()) == repr(torch.finfo())
    for f, d in (("iinfo", "float32"), ("finfo", "int64"), ("finfo", "bool"), ("iinfo", "bool")):
        with pytest.raises(TypeError) as theirs:
            getattr(torch, f)(getattr(torch, d))
        with pytest.raises(TypeError) as ours:
            getattr(st, f)(getattr(st, d))
        assert str(ours.value) == str(theirs.value).replace("torch.", "sparsetorch.")
