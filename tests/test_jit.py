"""sparsetorch._jit: the one numba switch, the build-once kernel cache, the compile notice, the
thread policy (free cores, work size)."""

import io
import os
import threading
import time

import pytest

from sparsetorch import _jit
from sparsetorch.nn._kernels import embedding as emb_kernels
from sparsetorch.sparse import _spmm, _threads


def test_one_switch_shared_by_every_user():
    assert _spmm._ENABLED is _jit.ENABLED
    assert _spmm.use_numba is _jit.use_numba
    assert _threads.limit is _jit.limit and _threads.PAR_MIN_WORK == _jit.PAR_MIN_WORK
    calls = []
    old = _jit.use_numba(False)
    try:
        assert _jit.kernels("test-off", lambda: calls.append(1) or (1,)) is None
        assert calls == []  # switched off: nothing is built
    finally:
        assert _jit.use_numba(old) is False


def test_kernels_built_once_per_process():
    calls = []

    def build():
        calls.append(1)
        return ("k",)

    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    pytest.importorskip("numba")
    a = _jit.kernels("test-once", build)
    b = _jit.kernels("test-once", build)
    assert a == ("k",) and b is a and calls == [1]
    assert _jit.kernels("test-fails", lambda: False) is None  # a builder without numba
    assert _jit.built()["test-fails"] is False


def test_dispatchers_found_through_python_wrappers():
    pytest.importorskip("numba")
    from sparsetorch._backend import CPU

    k = emb_kernels.kernels(CPU)
    if k is None:
        pytest.skip("numba switched off")
    names = {d.py_func.__name__ for d in _jit.dispatchers(k)}
    # bag_grad is a Python function choosing between kernels it holds in its closure
    assert {"bag_sum", "bag_max", "bag_grad_1", "bag_grad_par"} <= names
    assert _jit.warm(k, "float32") >= 0  # loads what numba's cache holds for float32 tables
    assert _jit.warm(k, "float32") == 0  # once
    assert _jit.warm(None, "float32") == 0  # numba off or missing: nothing to do


def test_warm_picks_overloads_by_dtype():
    numba = pytest.importorskip("numba")
    t = numba.types
    f32, f64, i64 = t.float32[:, :], t.float64[:, :], t.int64[:]
    assert _jit._wanted((f32, i64, t.float64), "float32")  # a float64 scalar is a parameter
    assert not _jit._wanted((f64, i64), "float32")
    assert _jit._wanted((i64, i64), "float64")  # integer-only kernels serve every dtype


def test_notice_printed_once(monkeypatch):
    monkeypatch.setattr(_jit, "_NOTICED", [False])
    monkeypatch.setattr(_jit, "NOTICE", [True])
    buf = io.StringIO()
    assert _jit.notice(3.4, file=buf) is True
    assert _jit.notice(3.4, file=buf) is False
    lines = buf.getvalue().splitlines()
    assert lines == [("sparsetorch: compiling sparse kernels once (~3 s); "
                      "`python -m sparsetorch.warmup` does it ahead")]
    monkeypatch.setattr(_jit, "_NOTICED", [False])
    monkeypatch.setattr(_jit, "NOTICE", [False])  # the warmup reports by itself
    assert _jit.notice(1, file=buf) is False


def test_first_compile_of_a_sparsetorch_kernel_announces_itself(monkeypatch, capsys):
    numba = pytest.importorskip("numba")
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off")
    monkeypatch.setattr(_jit, "_NOTICED", [False])
    monkeypatch.setattr(_jit, "NOTICE", [True])
    g = {"__name__": "sparsetorch._test_fake_kernels", "numba": numba}  # "our" kernels, uncached
    exec("def build():\n"  # noqa: S102 - a module of our package's name, compiled uncached
         "    def twice(x):\n        return 2 * x\n"
         "    def thrice(x):\n        return 3 * x\n"
         "    return numba.njit(twice), numba.njit(thrice)\n", g)
    k = _jit.kernels("test-notice", g["build"], estimate=2.0)
    assert k[0](2) == 4 and k[1](2) == 6 and k[0](2.5) == 5.0  # three compiles
    err = capsys.readouterr().err
    assert err.count("sparsetorch: compiling sparse kernels once (~2 s)") == 1

    @numba.njit
    def not_ours(x):  # a user's own kernel compiles silently
        return x + 1

    monkeypatch.setattr(_jit, "_NOTICED", [False])
    assert not_ours(1) == 2
    assert "compiling" not in capsys.readouterr().err


def test_thread_count_from_work_and_free_cores(monkeypatch):
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 2])  # a sample that does not expire
    small = _jit.PAR_MIN_WORK - 1
    assert _jit.thread_count(small, 8) == 1
    assert _jit.thread_count(_jit.PAR_MIN_WORK, 8) == 2  # two per PAR_MIN_WORK at most
    assert _jit.thread_count(10 * _jit.PAR_MIN_WORK, 8) == 2  # capped by the free cores
    assert _jit.thread_count(10 * _jit.PAR_MIN_WORK, 1) == 1  # capped by numba's setting
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 1])  # every core busy beside us
    assert _jit.thread_count(10 * _jit.PAR_MIN_WORK, 8) == 1
    assert _jit.thread_count(_jit.WHOLE_POOL_WORK, 8) == 8  # long kernels: every thread


def test_free_cores_sampled_at_most_every_ttl(monkeypatch):
    calls = []

    def sample():
        calls.append(1)
        return 1

    monkeypatch.setattr(_jit, "SAMPLER", [False])  # the caller samples (no daemon thread)
    monkeypatch.setattr(_jit, "_FREE", [-1.0, 1])
    monkeypatch.setattr(_jit, "_sample_free", sample)
    assert _jit.free_cores() == 1 and _jit.free_cores() == 1
    assert calls == [1]


def test_busy_reading_held_briefly_and_confirmed(monkeypatch):
    # a reading that finds a core busy is held BUSY_TTL, not LOAD_TTL, and needs a second one
    clock = [100.0]
    monkeypatch.setattr(_jit, "SAMPLER", [False])  # the caller samples (no daemon thread)
    monkeypatch.setattr(_jit.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(_jit, "_cores", lambda: 2)
    monkeypatch.setattr(_jit, "_FREE", [-1.0, 2])
    readings = [1, 0]  # a passing process, gone at the second read: both cores free
    monkeypatch.setattr(_jit, "_others", lambda: readings.pop(0))
    assert _jit.free_cores() == 2 and not readings
    assert _jit._FREE[0] == 100.0 + _jit.LOAD_TTL
    clock[0] += _jit.LOAD_TTL
    readings[:] = [1, 1]  # a busy process: still running at the second read
    assert _jit.free_cores() == 1 and not readings
    assert _jit._FREE[0] == clock[0] + _jit.BUSY_TTL < clock[0] + _jit.LOAD_TTL
    readings[:] = [0]
    clock[0] += _jit.BUSY_TTL  # sampled again soon: the core is free again
    assert _jit.free_cores() == 2 and not readings


def test_sampler_thread_takes_the_samples_and_stops_when_idle(monkeypatch):
    # the first call samples itself and starts the daemon sampler; expired values are then
    # refreshed by it (the calls return at once); it stops after SAMPLER_IDLE without calls
    calls = []

    def sample():
        calls.append(threading.current_thread().name)
        return 2

    monkeypatch.setattr(_jit, "SAMPLER", [True])
    monkeypatch.setattr(_jit, "_SAMPLER_THREAD", [None])
    monkeypatch.setattr(_jit, "LOAD_TTL", 0.02)
    monkeypatch.setattr(_jit, "SAMPLER_IDLE", 0.3)
    monkeypatch.setattr(_jit, "_sample_free", sample)
    monkeypatch.setattr(_jit, "_FREE", [-1.0, 1])
    assert _jit.free_cores() == 2 and calls == [threading.current_thread().name]
    t = _jit._SAMPLER_THREAD[0]
    assert t is not None and t.daemon and t.name == "sparsetorch-load-sampler"
    deadline = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < deadline:
        _jit.free_cores()  # never samples in this thread while the sampler runs
        time.sleep(0.01)
    assert calls[1:] and set(calls[1:]) == {"sparsetorch-load-sampler"}
    t.join(5)  # no more calls: it stops by itself
    assert not t.is_alive() and _jit._SAMPLER_THREAD[0] is None
    _jit._FREE[:] = [float("inf"), 1]  # a pinned value: not replaced
    assert _jit.free_cores() == 1


def test_sample_free_within_affinity():
    n = _jit._sample_free()
    assert isinstance(n, int) and 1 <= n <= _jit._cores()
    assert _jit._own_running() >= 1  # the caller itself is running


def test_limit_sets_and_restores_numba_threads(monkeypatch):
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 1])
    with _jit.limit(10 * _jit.PAR_MIN_WORK) as n:
        assert n == 1 and numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    monkeypatch.setattr(_jit, "_FREE", [float("inf"), 64])
    with _jit.limit(10 * _jit.PAR_MIN_WORK) as n:
        assert n == min(before, 64, 11) == numba.get_num_threads()
    with _jit.limit(10) as n:
        assert n == 1 == numba.get_num_threads()
    assert numba.get_num_threads() == before


def test_layers_and_optimizers_warm_their_kernels_when_constructed(monkeypatch):
    np = pytest.importorskip("numpy")
    numba = pytest.importorskip("numba")
    import sparsetorch as st
    from sparsetorch.optim import _kernels as optim_kernels

    calls = []
    monkeypatch.setattr(_jit, "warm", lambda k, dt, names=None: calls.append((str(dt), names)) or 0)
    emb = st.nn.EmbeddingBag(10, 3, sparse=True)
    assert calls == [("float32", None)]
    calls.clear()
    st.optim.SparseAdam(emb.parameters())
    # its own row kernel, then the first steps' kernels every optimizer loads (optim/_warm.py):
    # small bmm, ReLU's backward, the CSR spmm rows and the transposed patterns' kernel
    rows = ("csr_f_rows", "csr_f_rows_p", "pattern_t")
    step = [("float32", None), ("float32", None), ("float32", rows),
            ("float32", None)] + [("float32", None)] * (numba.get_num_threads() > 1)
    assert calls == step + [("float32", ("adam_rows",))]
    calls.clear()
    optim_kernels.warm(st.optim.AdamW, {np.dtype("float64")})  # through its base class, Adam
    assert calls == [("float64", ("adam_flat", "adam_rows"))]
    calls.clear()
    st.optim.LBFGS(st.nn.Linear(2, 1).parameters())  # no row kernels of its own: the step's only
    assert calls == step


def test_pool_starts_with_non_spinning_workers_and_leaves_the_environment_as_it_was():
    """start_pool sets GOMP_SPINCOUNT/KMP_BLOCKTIME only while numba's OpenMP runtime loads (it
    reads them then), never over a user's own value, and removes what it set."""
    import subprocess
    import sys

    code = ("import os, sparsetorch as st; st.set_num_threads(1); "
            "print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('KMP_BLOCKTIME'))")
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["None", "None"]
    env["GOMP_SPINCOUNT"] = "1000"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1000", "None"]
