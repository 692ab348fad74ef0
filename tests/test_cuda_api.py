"""sparsetorch.cuda where there is no GPU (torch's answers and error types), the device objects'
rules, and the device tests (tests/gpu) run on the fake CUDA backend in a subprocess, so CPU-only
CI exercises the device plumbing."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sparsetorch as st
from sparsetorch import _backend

NO_GPU = not st.cuda.is_available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="a CUDA device (or the fake backend) is present")
ROOT = Path(__file__).resolve().parents[1]


@needs_no_gpu
def test_queries_without_a_gpu():
    assert st.cuda.is_available() is False  # no error, cached
    assert st.cuda.is_available() is False
    assert st.cuda.device_count() == 0
    assert st.cuda.is_initialized() is False
    assert st.cuda.memory_allocated() == 0 and st.cuda.max_memory_allocated() == 0
    assert st.cuda.memory_reserved() == 0
    st.cuda.empty_cache()
    st.cuda.reset_peak_memory_stats()
    st.cuda.set_device(-1)  # negative: a no-op, as torch
    with st.cuda.device(None):
        pass


@needs_no_gpu
def test_calls_that_need_a_gpu_raise_torch_errors():
    reason = _backend.cuda_unavailable_reason()
    err = AssertionError if "CuPy" in reason else RuntimeError
    for fn in (st.cuda.current_device, st.cuda.synchronize, st.cuda.get_device_name,
               st.cuda.get_device_capability, lambda: st.cuda.set_device(0)):
        with pytest.raises(err, match="is_available"):
            fn()
    with pytest.raises(RuntimeError, match="CUDA is not available"), st.cuda.device(0):
        pass
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.zeros(2, device="cuda:0")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        st.ones(2).to("cuda")


@needs_no_gpu
def test_cuda_manual_seed_is_a_no_op_without_a_gpu():
    st.manual_seed(3)
    a = st.rand(4)
    st.manual_seed(3)
    st.cuda.manual_seed(99)
    st.cuda.manual_seed_all(99)
    assert st.equal(st.rand(4), a)  # the CPU stream is untouched, as in torch


def test_device_objects_are_interned():
    assert st.device("cuda:1") is st.device("cuda", 1) is st.device(1)
    assert st.device("cpu") is st.device("cpu")
    assert st.device("cuda") is not st.device("cuda:0") and st.device("cuda").index is None
    import pickle

    assert pickle.loads(pickle.dumps(st.device("cuda:2"))) is st.device("cuda:2")


def test_cuda_device_argument_checks():
    with pytest.raises(ValueError, match="expected a cuda device"):
        st.cuda.device("cpu")
    with pytest.raises(TypeError, match="device index"):
        st.cuda.set_device(True)


def test_cpu_tensor_device_queries():
    t = st.ones(2)
    assert not t.is_cuda and t.is_cpu and t.get_device() == -1


def _fake_cuda_suite(*paths):
    env = dict(os.environ, SPARSETORCH_FAKE_CUDA="2")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", *paths, "-m", "cuda", "-q", "-x",
         "-p", "no:cacheprovider", "-o", "addopts="],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    tail = (r.stdout + r.stderr)[-3000:]
    assert r.returncode == 0, tail
    passed = re.search(r"(\d+) passed", tail)
    return int(passed.group(1)) if passed else 0, tail


@pytest.mark.skipif(os.environ.get("SPARSETORCH_FAKE_CUDA") is not None,
                    reason="already running under the fake backend")
def test_device_plumbing_passes_on_the_fake_cuda_backend():
    """The quick part of tests/gpu under SPARSETORCH_FAKE_CUDA=2 (placement, moves, cross-device
    errors, the cuda module); the whole of it is the opt-in test below."""
    passed, tail = _fake_cuda_suite("tests/gpu/test_device_plumbing.py",
                                    "tests/gpu/test_cuda_module.py")
    assert passed >= 20, tail  # the device tests ran, not skipped


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SPARSETORCH_FAKE_CUDA") is not None,
                    reason="already running under the fake backend")
def test_device_tests_pass_on_the_fake_cuda_backend():
    """tests/gpu under SPARSETORCH_FAKE_CUDA=2: placement, moves, cross-device errors, the op
    table slice, nn layers and optimizers on two fake devices."""
    passed, tail = _fake_cuda_suite("tests/gpu")
    assert passed >= 300, tail  # the device tests ran, not skipped


def _bench(env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gpu.py"), "--tiny",
                           "--no-wait"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.mark.slow
@needs_no_gpu
def test_gpu_benchmark_exits_cleanly_without_a_gpu():
    r = _bench({"SPARSETORCH_FAKE_CUDA": "0"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "no CUDA device" in r.stdout


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SPARSETORCH_FAKE_CUDA") is not None,
                    reason="already running under the fake backend")
def test_gpu_benchmark_code_paths_run_on_the_fake_backend():
    r = _bench({"SPARSETORCH_FAKE_CUDA": "1"})
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    for section in ("sparse.mm", "EmbeddingBag", "coalesce of"):
        assert section in r.stdout
    assert "csr fwd+bwd sparsetorch" in r.stdout and "coo fwd+bwd sparsetorch" in r.stdout
