"""DataLoader workers can't hang the main process (issue 17): a worker stuck forever that
ignores SIGTERM (timeout: SIGTERM, then SIGKILL; at interpreter exit too), and a result or an
exception a worker cannot pickle (reported with its batch index and the offending type).

Each case runs in a fresh interpreter under a hard timeout, so a regression fails, never hangs."""

import os
import subprocess
import sys
import textwrap
import time

import sparsetorch as st

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))

PRELUDE = """
import os, signal, sys, time
import sparsetorch as torch
from sparsetorch.utils.data import DataLoader, Dataset

class Stuck(Dataset):
    # item 1 hangs forever and ignores SIGTERM (a worker stuck in C code behaves alike)
    def __len__(self):
        return 4
    def __getitem__(self, i):
        if i == 1:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(0.05)
        return torch.tensor([float(i)])
"""


def _run(body, limit=60):
    code = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=limit, env=env, cwd=ROOT)
    return p, time.monotonic() - t0


def test_timeout_kills_a_worker_that_ignores_sigterm():
    p, _ = _run("""
        it = iter(DataLoader(Stuck(), batch_size=None, num_workers=1, timeout=1.0))
        assert next(it).tolist() == [0.0]
        t0 = time.monotonic()
        try:
            next(it)
        except RuntimeError as e:
            assert "timed out after 1.0 seconds" in str(e), e
        took = time.monotonic() - t0
        pid = it._workers[0].pid
        assert not it._workers[0].is_alive()
        print("TOOK", took)
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    took = float(p.stdout.split("TOOK")[1])
    assert took < 1.0 + 1.0, took  # the error arrives within timeout + 1 s


def test_exit_with_a_stuck_worker_does_not_hang():
    # no timeout: the iterator is abandoned with a worker stuck in item 1; the interpreter exits
    p, took = _run("""
        it = iter(DataLoader(Stuck(), batch_size=None, num_workers=2))
        assert next(it).tolist() == [0.0]
        time.sleep(0.3)  # worker 1 is inside the stuck item now
        print("EXITING", flush=True)
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "EXITING" in p.stdout
    assert took < 45, took


def test_unpicklable_batch_is_reported_with_its_index():
    p, _ = _run("""
        class WithLambda(Dataset):
            def __len__(self):
                return 5
            def __getitem__(self, i):
                return {"x": i, "f": (lambda: i) if i == 2 else None}
        it = iter(DataLoader(WithLambda(), batch_size=None, num_workers=2))
        got = [next(it), next(it)]
        try:
            next(it)
        except RuntimeError as e:
            msg = str(e)
        else:
            raise AssertionError("no error")
        assert "batch index 2" in msg, msg
        assert "<class 'function'>" in msg, msg
        print("OK")
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "OK" in p.stdout


def test_unpicklable_collate_result_is_reported():
    p, _ = _run("""
        dl = DataLoader(list(range(8)), batch_size=2, num_workers=1,
                        collate_fn=lambda b: [b, (lambda: 0)])
        try:
            list(dl)
        except RuntimeError as e:
            msg = str(e)
        assert "batch index 0" in msg and "<class 'function'>" in msg, msg
        print("OK")
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "OK" in p.stdout


def test_local_exception_class_is_reported():
    p, _ = _run("""
        def make():
            class Boom(Exception):
                pass
            class Bad(Dataset):
                def __len__(self):
                    return 4
                def __getitem__(self, i):
                    if i == 3:
                        raise Boom("bad item 3")
                    return i
            return Bad()
        it = iter(DataLoader(make(), batch_size=None, num_workers=1))
        assert [next(it) for _ in range(3)] == [0, 1, 2]
        try:
            next(it)
        except RuntimeError as e:
            msg = str(e)
        else:
            raise AssertionError("no error")
        assert "Boom" in msg and "cannot be pickled" in msg and "batch index 3" in msg, msg
        assert "bad item 3" in msg, msg  # the original traceback comes along
        print("OK")
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "OK" in p.stdout


def test_dead_worker_reported_at_once_with_a_long_timeout():
    p, _ = _run("""
        class Dies(Dataset):
            def __len__(self):
                return 4
            def __getitem__(self, i):
                if i == 1:
                    os._exit(3)
                return i
        it = iter(DataLoader(Dies(), batch_size=None, num_workers=1, timeout=120))
        t0 = time.monotonic()
        try:
            list(it)
        except RuntimeError as e:
            assert "exited unexpectedly" in str(e), e
        print("TOOK", time.monotonic() - t0)
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert float(p.stdout.split("TOOK")[1]) < 10.0  # not the 120 s timeout
