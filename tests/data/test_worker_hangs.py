"""DataLoader workers can't hang the main process (issue 17): a worker stuck forever that
ignores SIGTERM (timeout: SIGTERM, then SIGKILL; at interpreter exit too), a worker that dies
while the loader has a long timeout (one holding every lock it shares with the main process
included), and a result or an exception a worker cannot pickle
(reported with its batch index and the offending type).

The scenarios run one after another in one fresh interpreter under a hard timeout (so a
regression fails, never hangs); each prints a line of results that one test below checks. The
last scenario leaves a stuck worker behind and lets the interpreter exit."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

import sparsetorch as st

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))

SCRIPT = textwrap.dedent("""
    import json, os, signal, sys, time
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

    class WithLambda(Dataset):
        def __len__(self):
            return 5
        def __getitem__(self, i):
            return {"x": i, "f": (lambda: i) if i == 2 else None}

    class Dies(Dataset):
        def __len__(self):
            return 4
        def __getitem__(self, i):
            if i == 0:
                os._exit(3)
            return i

    class DiesHoldingLocks(Dataset):
        # item 0 takes every lock it shares with the main process (the shutdown flag's, the
        # queues'), as a worker SIGKILLed inside one of their calls would leave them, and dies
        def __len__(self):
            return 4
        def __getitem__(self, i):
            if i == 0:
                from multiprocessing.synchronize import SemLock
                f = sys._getframe()
                while f.f_code.co_name != "worker_loop":
                    f = f.f_back
                seen, todo = set(), [f.f_locals[k] for k in ("done_event", "data_queue",
                                                             "index_queue")]
                while todo:
                    o = todo.pop()
                    if id(o) in seen:
                        continue
                    seen.add(id(o))
                    if isinstance(o, SemLock):
                        o.acquire(False)
                    else:
                        for name in ("_byte", "_cond", "_lock", "_flag", "_rlock", "_wlock",
                                     "_sem", "_notempty"):
                            if hasattr(o, name):
                                todo.append(getattr(o, name))
                os.kill(os.getpid(), signal.SIGKILL)
            return i

    def make_local_error():
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

    def report(name, **kw):
        print("RESULT", json.dumps(dict(name=name, **kw)), flush=True)

    def first_error(it, n_ok):
        got = [next(it) for _ in range(n_ok)]
        t0 = time.monotonic()
        try:
            next(it)
        except RuntimeError as e:
            return got, str(e), time.monotonic() - t0
        return got, None, time.monotonic() - t0

    # 1. timeout with a worker that ignores SIGTERM
    it = iter(DataLoader(Stuck(), batch_size=None, num_workers=1, timeout=1.0))
    got, msg, took = first_error(it, 1)
    report("timeout", msg=msg, took=took, alive=it._workers[0].is_alive())

    # 2. a worker dies while the loader waits with a long timeout
    it = iter(DataLoader(Dies(), batch_size=None, num_workers=1, timeout=120))
    got, msg, took = first_error(it, 0)
    report("dead", msg=msg, took=took)

    # 2b. a worker killed while it holds every lock it shares with the main process
    it = iter(DataLoader(DiesHoldingLocks(), batch_size=None, num_workers=1, timeout=120))
    got, msg, took = first_error(it, 0)
    report("dead_holding_locks", msg=msg, took=took)

    # 3. a batch holding a lambda
    it = iter(DataLoader(WithLambda(), batch_size=None, num_workers=2))
    got, msg, took = first_error(it, 2)
    report("lambda", msg=msg, took=took)

    # 4. collate_fn returning a lambda
    it = iter(DataLoader(list(range(8)), batch_size=2, num_workers=1,
                         collate_fn=lambda b: [b, (lambda: 0)]))
    got, msg, took = first_error(it, 0)
    report("collate", msg=msg, took=took)

    # 5. an exception class defined in a function
    it = iter(DataLoader(make_local_error(), batch_size=None, num_workers=1))
    got, msg, took = first_error(it, 3)
    report("local_exception", msg=msg, took=took, got=got)

    # 6. exit with a worker stuck in item 1 (no timeout; the iterator is left alive)
    it = iter(DataLoader(Stuck(), batch_size=None, num_workers=2))
    assert next(it).tolist() == [0.0]
    time.sleep(0.3)  # worker 1 is inside the stuck item now
    report("exiting", at=time.time())
""")


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=90, env=env, cwd=ROOT)
    end = time.time()
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            out[r["name"]] = r
    out["_proc"], out["_end"] = p, end
    return out


def _get(results, name):
    assert name in results, results["_proc"].stderr[-3000:]
    return results[name]


def test_timeout_kills_a_worker_that_ignores_sigterm(results):
    r = _get(results, "timeout")
    assert r["msg"] and "timed out after 1.0 seconds" in r["msg"], r
    assert r["took"] < 1.0 + 1.0, r  # the error arrives within timeout + 1 s
    assert not r["alive"]  # SIGKILLed after SIGTERM was ignored


def test_dead_worker_reported_at_once_with_a_long_timeout(results):
    r = _get(results, "dead")
    assert r["msg"] and "exited unexpectedly" in r["msg"], r
    assert r["took"] < 10.0, r  # not the 120 s timeout


def test_worker_killed_holding_shared_locks_does_not_hang_shutdown(results):
    # multiprocessing.Event as the shutdown flag hung here: set() waited for the lock the dead
    # worker held inside is_set() (the soak found it, once in ~4,000 kills)
    r = _get(results, "dead_holding_locks")
    assert r["msg"] and "exited unexpectedly" in r["msg"], r
    assert r["took"] < 10.0, r


def test_unpicklable_batch_is_reported_with_its_index(results):
    r = _get(results, "lambda")
    assert r["msg"] and "batch index 2" in r["msg"] and "<class 'function'>" in r["msg"], r


def test_unpicklable_collate_result_is_reported(results):
    r = _get(results, "collate")
    assert r["msg"] and "batch index 0" in r["msg"] and "<class 'function'>" in r["msg"], r


def test_local_exception_class_is_reported(results):
    r = _get(results, "local_exception")
    assert r["got"] == [0, 1, 2]
    msg = r["msg"]
    assert msg and "Boom" in msg and "cannot be pickled" in msg and "batch index 3" in msg, r
    assert "bad item 3" in msg  # the original traceback comes along


def test_exit_with_a_stuck_worker_does_not_hang(results):
    r = _get(results, "exiting")
    p = results["_proc"]
    assert p.returncode == 0, p.stderr[-3000:]
    assert results["_end"] - r["at"] < 10.0  # exit: join 1 s, SIGTERM, SIGKILL 0.5 s later
