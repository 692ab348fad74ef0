"""torch.backends, torch.version / __version__, matmul precision, determinism switches,
torch.accelerator and torch.ops: names, defaults, types and errors as torch 2.13's."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _flags

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_flags():
    saved = dict(_flags.STATE)
    yield
    _flags.STATE.clear()
    _flags.STATE.update(saved)


# ---- backends: defaults and setters ----

FLAGS = [
    "cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic", "cudnn.allow_tf32",
    "cudnn.depthwise_kernel", "cudnn.fp32_precision", "cudnn.benchmark_limit",
    "cuda.matmul.allow_tf32", "cuda.matmul.allow_fp16_reduced_precision_reduction",
    "cuda.matmul.allow_bf16_reduced_precision_reduction", "cuda.matmul.allow_fp16_accumulation",
    "cuda.matmul.fp32_precision", "mkldnn.enabled", "mkldnn.deterministic", "mkldnn.allow_tf32",
    "mkldnn.fp32_precision", "fp32_precision",
]


def _get(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


@pytest.mark.parametrize("path", FLAGS)
def test_flag_defaults_match_torch(path):
    assert _get(st.backends, path) == _get(torch.backends, path)


@pytest.mark.parametrize("path", [
    "cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic", "mkldnn.enabled",
    "mkldnn.deterministic", "cuda.matmul.allow_tf32", "cuda.matmul.allow_fp16_accumulation",
])
def test_bool_flags_refuse_non_bools_as_torch(path):
    *mod, name = path.split(".")
    ours, theirs = _get(st.backends, ".".join(mod)), _get(torch.backends, ".".join(mod))
    with pytest.raises(RuntimeError) as want:
        setattr(theirs, name, 1)
    with pytest.raises(RuntimeError) as got:
        setattr(ours, name, 1)
    assert str(got.value) == str(want.value)


def test_flags_are_settable_and_read_back():
    b = st.backends
    b.cudnn.benchmark = True
    b.cudnn.deterministic = True
    b.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    assert b.cudnn.benchmark and b.cudnn.deterministic
    assert b.cuda.matmul.allow_fp16_reduced_precision_reduction is False
    with pytest.raises(TypeError, match="expects a bool or a tuple/list of bools"):
        b.cuda.matmul.allow_bf16_reduced_precision_reduction = 0.5
    with pytest.raises(RuntimeError, match="Unknown precision: x"):
        b.cuda.matmul.fp32_precision = "x"
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        b.cuda.matmul.foo = 1
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        b.cuda.matmul.foo  # noqa: B018


def test_cudnn_flags_context_manager_sets_and_restores():
    b = st.backends.cudnn
    with b.flags(enabled=True, deterministic=True, benchmark=True):
        assert b.enabled and b.deterministic and b.benchmark and _flags.deterministic()
    assert b.enabled and not b.deterministic and not b.benchmark
    with b.flags(deterministic=True):  # torch's defaults: flags() disables cuDNN in its block
        assert b.enabled is False
    assert b.enabled is True
    with pytest.raises(RuntimeError, match="set_deterministic_cudnn expects a bool"):
        with b.flags(deterministic=1):
            pass
    assert b.deterministic is False
    with st.backends.mkldnn.flags(enabled=False):
        assert st.backends.mkldnn.enabled is False
    assert st.backends.mkldnn.enabled is True


def test_backend_availability_answers():
    b = st.backends
    assert b.cudnn.is_available() is False and b.cudnn.version() is None  # no cuDNN is used
    assert b.mkldnn.is_available() is False  # no oneDNN either (torch's CPU build: True)
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert b.mps.is_available() == torch.backends.mps.is_available()
    assert isinstance(b.cuda.is_built(), bool)
    assert b.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
    assert isinstance(b.openmp.is_available(), bool)


# ---- float32 matmul precision ----

def test_matmul_precision_default_values_and_errors():
    assert st.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    assert st.backends.cuda.matmul.allow_tf32 is False
    st.set_float32_matmul_precision("high")
    assert st.get_float32_matmul_precision() == "high"
    assert st.backends.cuda.matmul.allow_tf32 is True
    st.backends.cuda.matmul.allow_tf32 = False
    assert st.get_float32_matmul_precision() == "highest"
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        st.set_float32_matmul_precision("fast")
    assert st.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="expects a str, but got int"):
        st.set_float32_matmul_precision(1)


# ---- determinism switches ----

def test_deterministic_switches_match_torch():
    assert st.are_deterministic_algorithms_enabled() is False
    assert st.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode() == 0
    try:
        for mode in ("warn", "error", "default", 1, 2, 0):
            st.set_deterministic_debug_mode(mode)
            torch.set_deterministic_debug_mode(mode)
            assert st.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert (st.are_deterministic_algorithms_enabled()
                    == torch.are_deterministic_algorithms_enabled())
            assert (st.is_deterministic_algorithms_warn_only_enabled()
                    == torch.is_deterministic_algorithms_warn_only_enabled())
        for bad in ("x", 3, 1.0):
            with pytest.raises(Exception) as want:
                torch.set_deterministic_debug_mode(bad)
            with pytest.raises(want.type, match=str(want.value)):
                st.set_deterministic_debug_mode(bad)
    finally:
        torch.use_deterministic_algorithms(False)
    st.use_deterministic_algorithms(True)
    assert _flags.deterministic()
    st.use_deterministic_algorithms(False)
    st.backends.cudnn.deterministic = True
    assert _flags.deterministic() and not st.are_deterministic_algorithms_enabled()


# ---- versions ----

@pytest.mark.parametrize("other", [
    "2.0", "2.13", "2.13.0", "2.13.1", "2.14.0.dev20250101", "2.13.0rc1", "1.13.1", "3",
    (2, 0), (2, 13), (2, 13, 0), (2, 14), [3],
])
def test_version_compares_as_torch_does(other):
    ours, theirs = st.__version__, torch.__version__
    for op in ("__lt__", "__le__", "__gt__", "__ge__"):
        assert getattr(ours, op)(other) == getattr(theirs, op)(other), (op, other)
    assert (ours == other) == (theirs == other)
    assert ours >= "2.0" and ours >= (2, 0) and ours < (3,)


def test_version_is_a_str_naming_the_torch_api_and_sparsetorch():
    v = st.__version__
    assert isinstance(v, str) and type(v).__name__ == "TorchVersion"
    assert v.split("+")[0] == "2.13.0" == st.version.torch_api
    assert v == "2.13.0+sparsetorch." + st.version.sparsetorch and hash(v) == hash(str(v))
    assert v > "2.13.0+cpu"  # PEP 440 local labels: compared segment by segment
    with pytest.raises(TypeError):
        v >= 3  # noqa: B015 - torch's TypeError too
    assert st.version.__version__ == v and st.version.cuda is None and st.version.hip is None
    assert st.version.debug is False and isinstance(st.version.git_version, str)


# ---- accelerator ----

def test_accelerator_without_a_device_matches_torch():
    if st.cuda.is_available():
        pytest.skip("a CUDA device is present")
    a = st.accelerator
    assert a.is_available() is torch.accelerator.is_available() is False
    assert a.current_accelerator() is None and a.device_count() == 0
    for name, args in [("current_device_index", ()), ("set_device_index", (0,)),
                       ("synchronize", ()), ("current_stream", ()), ("empty_cache", ()),
                       ("memory_allocated", ())]:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                               "available."):
            getattr(a, name)(*args)
    with a.device_index(None):
        pass


def test_cuda_streams_and_events_without_a_device():
    if st.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError):
        torch.cuda.Stream()
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        st.cuda.Stream()
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        st.cuda.Event(enable_timing=True)
    with pytest.raises((AssertionError, RuntimeError)):
        st.cuda.current_stream()
    with pytest.raises((AssertionError, RuntimeError)):
        st.cuda.default_stream()
    with st.cuda.stream(None):  # a no-op, as in torch
        pass
    assert st.cuda.set_stream(None) is None


# ---- torch.ops ----

def test_ops_namespaces_resolve_our_ops():
    from sparsetorch._ops import ops

    assert ops is st.ops
    x = st.tensor([[1.0, -2.0], [3.0, 4.0]])
    tx = torch.tensor(x.numpy())
    cases = [("add", (x, x)), ("mul", (x, 2.0)), ("mm", (x, x)), ("relu", (x,)), ("sum", (x,)),
             ("view", (x, (4,))), ("t", (x,)), ("gelu", (x,)), ("exp", (x,))]
    for name, args in cases:
        targs = tuple(tx if a is x else a for a in args)
        got = getattr(ops.aten, name)(*args)
        want = getattr(torch.ops.aten, name)(*targs)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=name)
    assert ops.aten.add.Tensor(x, x).numpy().tolist() == (x + x).numpy().tolist()
    assert ops.aten.mm.default(x, x).shape == (2, 2)
    assert ops.aten._softmax(x, 1, False).sum(1).numpy().tolist() == pytest.approx([1.0, 1.0])
    assert str(ops.aten.add) == str(torch.ops.aten.add) == "aten.add"
    assert repr(ops.aten.add.Tensor) == repr(torch.ops.aten.add.Tensor)
    assert ops.aten.add.Tensor.name() == torch.ops.aten.add.Tensor.name()


def test_unknown_ops_raise_torchs_attribute_error():
    for expr in ("aten.nonexistent_op", "foo.bar", "aten.add.nonover"):
        with pytest.raises(AttributeError) as want:
            _get(torch.ops, expr)
        with pytest.raises(AttributeError) as got:
            _get(st.ops, expr)
        assert str(got.value) == str(want.value)
    assert st.ops.prims.__name__ == "torch.ops.prims"  # any namespace exists, as in torch
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hasattr(st.ops.aten, "matmul")


def test_empty_fills_memory_in_deterministic_mode_as_torch():
    dtypes = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
              "float64", "complex64"]
    try:
        st.use_deterministic_algorithms(True)
        torch.use_deterministic_algorithms(True)
        assert st.utils.deterministic.fill_uninitialized_memory is True
        for name in dtypes:
            got = st.empty(3, dtype=getattr(st, name))
            want = torch.empty(3, dtype=getattr(torch, name))
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        x = st.ones(2, 2)
        for got in (st.empty_like(x), x.new_empty(4), st.empty_strided((2, 2), (1, 2))):
            assert bool(got.isnan().all())
        st.utils.deterministic.fill_uninitialized_memory = False
        assert st.empty(3).shape == (3,)  # left uninitialized again
        with pytest.raises(RuntimeError, match="expected a bool, but got int"):
            st.utils.deterministic.fill_uninitialized_memory = 1
    finally:
        torch.use_deterministic_algorithms(False)


def test_deterministic_assign_keeps_the_last_repeated_index():
    import types

    from sparsetorch import _xpcompat

    gpu_like = types.SimpleNamespace(name="cuda", xp=np)  # the CUDA branch, over NumPy
    idx = np.array([3, 1, 3, 0, 1, 3])
    src = np.arange(6.0, dtype=np.float32)
    st.use_deterministic_algorithms(True)
    out = np.zeros(5, np.float32)
    _xpcompat.assign(gpu_like, out, idx, src)
    assert out.tolist() == [3.0, 4.0, 0.0, 5.0, 0.0]
    out2 = np.zeros((2, 3), np.float32)
    _xpcompat.assign(gpu_like, out2, (np.array([1, 1, 0]), slice(None)), 7.0)
    assert out2.tolist() == [[7.0] * 3, [7.0] * 3]
    out3 = np.zeros((3, 2), np.int64)
    _xpcompat.assign(gpu_like, out3, (np.array([2, 2]),), np.array([[1, 2], [3, 4]]))
    assert out3.tolist() == [[0, 0], [0, 0], [3, 4]]


def test_audit_mkl_opt_einsum_and_bf16_support_names():
    b = st.backends
    assert b.mkl.is_available() is False  # no oneMKL call of our own (torch's CPU build: True)
    assert (b.mkl.VERBOSE_OFF, b.mkl.VERBOSE_ON) == (0, 1)
    with b.mkl.verbose(b.mkl.VERBOSE_ON):
        pass
    oe, toe = b.opt_einsum, torch.backends.opt_einsum
    assert oe.is_available() == toe.is_available()
    assert (oe.enabled, oe.strategy) == (toe.enabled, toe.strategy)
    if not oe.is_available():
        assert oe.get_opt_einsum() is None
        for mod in (oe, toe):  # torch records the flag even so
            mod.enabled = True
            mod.strategy = "greedy"
            assert (mod.enabled, mod.strategy) == (True, "greedy")
            mod.enabled, mod.strategy = False, None
    with oe.flags(enabled=False):
        assert oe.enabled is False
    assert oe.enabled == toe.enabled
    if not st.cuda.is_available():
        assert st.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
        assert st.cuda.is_bf16_supported(including_emulation=False) is False


def test_audit_nn_attention_sdpa_kernel_and_sdp_kernel_deprecation():
    A, TA = st.nn.attention, torch.nn.attention
    assert ([(k, int(v)) for k, v in A.SDPBackend.__members__.items()]
            == [(k, int(v)) for k, v in TA.SDPBackend.__members__.items()])
    for lib, att in ((st, A), (torch, TA)):
        with att.sdpa_kernel(att.SDPBackend.MATH) as r:
            assert r == {}
            assert lib.backends.cuda.math_sdp_enabled()
            assert not lib.backends.cuda.flash_sdp_enabled()
            assert not lib.backends.cuda.mem_efficient_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()
        with att.sdpa_kernel([att.SDPBackend.FLASH_ATTENTION, att.SDPBackend.MATH]):
            assert lib.backends.cuda.flash_sdp_enabled() and not lib.backends.cuda.cudnn_sdp_enabled()
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
            with att.sdpa_kernel("math"):
                pass
        with pytest.warns(FutureWarning, match=r"sdp_kernel\(\)` is deprecated"):
            with lib.backends.cuda.sdp_kernel(enable_flash=False):
                assert not lib.backends.cuda.flash_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()
    q = st.ones(1, 2, 3)
    with A.sdpa_kernel(A.SDPBackend.EFFICIENT_ATTENTION):  # results do not depend on it
        assert st.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3)
