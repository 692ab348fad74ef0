"""The optimizers' warm-up step (``optim/_warm_paths.py``, issue 14 item 5): one tiny training
step through the common ops when an optimizer is built, under ``_jit.no_compile()``. It must
leave nothing behind (random state, gradients of user tensors, profiler records), never compile
or load a kernel, and stop at once with a cold numba cache."""

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _jit
from sparsetorch.optim import _warm_paths

numba = pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(not _jit.ENABLED[0], reason="numba switched off")


def _run(code, env=None):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, check=False, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_step_runs_once_per_dtype_and_leaves_no_trace(monkeypatch):
    emb = st.nn.EmbeddingBag(50, 4, mode="sum", sparse=True)  # the embedding ops join the step
    st.eye(3).to_sparse_csr()  # a sparse tensor in the process: the product paths too
    with st.enable_grad():  # every kernel the step reaches compiled (a cold cache) and loaded
        _warm_paths._step(st.float32)
    st.optim.SGD(emb.parameters(), lr=0.1)
    monkeypatch.setattr(_warm_paths, "_DONE", set())
    state = st.get_rng_state().clone()
    assert _warm_paths.run({np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)}) >= 1
    assert _warm_paths._DONE >= {np.dtype(np.float32)}  # ints are not run
    assert _warm_paths.run({np.dtype(np.float32)}) == 0  # once per process and dtype
    assert st.equal(st.get_rng_state(), state)
    assert emb.weight.grad is None


def test_step_skipped_while_profiling_or_in_anomaly_mode(monkeypatch):
    monkeypatch.setattr(_warm_paths, "_DONE", set())
    with st.autograd.profiler.profile() as prof:
        assert _warm_paths.run({np.dtype(np.float32)}) == 0
    assert not [e for e in prof.function_events if "linear" in e.name or "bmm" in e.name]
    with st.autograd.detect_anomaly():
        assert _warm_paths.run({np.dtype(np.float32)}) == 0
    assert not _warm_paths._DONE


def test_no_compile_raises_in_its_thread_only():
    def build():
        from numba import njit

        @njit  # no cache: a compile every process
        def plus_one(x):
            return x + 1

        return (plus_one,)

    k = _jit.kernels("test_no_compile_group", build, 0.1)
    k[0](1)  # an int overload is loaded
    seen = []
    with _jit.no_compile():
        assert k[0](2) == 3  # loaded: runs
        with pytest.raises(TypeError, match="no_compile"):
            k[0](1.5)  # a float overload would compile
        t = threading.Thread(target=lambda: seen.append(k[0](2.5)))  # another thread compiles
        t.start()
        t.join()
    assert seen == [3.5]
    assert k[0](4.5) == 5.5  # after the section: as usual
    assert "compile" not in vars(k[0])


def test_cold_cache_stops_the_step_without_compiling(tmp_path):
    # an empty numba cache: nothing loads at the optimizer, and the warm-up step stops at its
    # first kernel call instead of compiling (seconds); the model's own step then compiles
    env = dict(__import__("os").environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = _run("""
        import numba.core.dispatcher as D
        import sparsetorch as st
        from sparsetorch.optim import _warm_paths
        emb = st.nn.EmbeddingBag(50, 4, mode="sum", sparse=True)
        calls = []
        orig = D.Dispatcher.compile
        D.Dispatcher.compile = lambda self, sig: calls.append(1) or orig(self, sig)
        ran = []
        run = _warm_paths.run
        _warm_paths.run = lambda d: ran.append(run(d)) or ran[-1]
        st.optim.SGD(emb.parameters(), lr=0.1)
        print(ran, len(calls))
    """, env)
    assert out == ["[0]", "0"]
