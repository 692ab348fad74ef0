"""The torchrun-style launcher (``python -m sparsetorch.distributed.run``) and
``launcher.api.elastic_launch`` / ``LaunchConfig``, over mpirun and local processes."""

import os
import subprocess
import sys

import pytest

from sparsetorch.distributed.launcher.api import ChildFailedError as LaunchError

from ._launch import HERE, ROOT, mpirun_or_skip

TARGET = os.path.join(HERE, "_launch_targets.py")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, HERE, env.get("PYTHONPATH", "")])
    env.setdefault("NUMBA_NUM_THREADS", "1")
    return env


def _run(*args):
    return subprocess.run([sys.executable, "-m", "sparsetorch.distributed.run", *args],
                          capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT,
                          check=False)


def test_run_sets_torchrun_variables_over_mpirun():
    mpirun_or_skip()
    p = _run("--nproc_per_node", "2", "--master_port", "29611", TARGET, "a", "b")
    assert p.returncode == 0, p.stderr[-3000:]
    lines = sorted(ln for ln in p.stdout.splitlines() if ln.startswith("worker"))
    assert lines == [
        "worker (0, 0, 2, 0, 2, ['a', 'b'], True) 127.0.0.1 29611 0",
        "worker (1, 1, 2, 1, 2, ['a', 'b'], True) 127.0.0.1 29611 0",
    ]


def test_run_restarts_a_failed_job():
    mpirun_or_skip()
    p = _run("--nproc-per-node", "2", "--max-restarts", "1", TARGET, "--fail-first")
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.count("worker") == 2 and p.stdout.strip().endswith("1")


def test_run_local_launcher_and_refusals(capfd):
    from sparsetorch.distributed.run import parse_args, run

    code = "import os; print('RANK=' + os.environ['RANK'], os.environ['LOCAL_WORLD_SIZE'])"
    run(parse_args(["--nproc-per-node", "3", "--launcher", "local", "--no-python",
                    sys.executable, "-c", code]))
    out = capfd.readouterr().out
    assert sorted(ln for ln in out.splitlines() if ln.startswith("RANK=")) == \
        ["RANK=0 3", "RANK=1 3", "RANK=2 3"]
    with pytest.raises(LaunchError, match="exit codes by rank") as e:
        run(parse_args(["--nproc-per-node", "2", "--launcher", "local", "--no-python",
                        sys.executable, "-c", "import os, sys; sys.exit(int(os.environ['RANK']))"]))
    assert e.value.failures == {1: 1}
    for bad, msg in [(["--nnodes", "2"], "rendezvous server"),
                     (["--log-dir", "/tmp/x"], "not supported"),
                     (["--node-rank", "1"], "--node-rank must be 0")]:
        with pytest.raises(ValueError, match=msg):
            run(parse_args([*bad, TARGET]))


def test_local_workers_cannot_form_an_mpi_group(monkeypatch):
    """init_process_group in a worker started without mpirun says so (not a 1-rank world)."""
    pytest.importorskip("mpi4py")
    import sparsetorch.distributed as dist

    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="started without mpirun"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_elastic_launch_callable_and_program():
    mpirun_or_skip()
    from sparsetorch.distributed.launcher.api import LaunchConfig, elastic_launch

    from ._launch_targets import rank_info

    cfg = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=2, max_restarts=0)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]
    try:
        out = elastic_launch(cfg, rank_info)("x")
        assert out == {0: (0, 0, 2, 0, 2, "x", True), 1: (1, 1, 2, 1, 2, "x", True)}
        out = elastic_launch(cfg, sys.executable)("-c", "pass")
        assert out == {0: None, 1: None}
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def test_elastic_launch_refusals():
    from sparsetorch.distributed.launcher.api import LaunchConfig, elastic_launch

    with pytest.raises(ValueError, match="rendezvous server"):
        elastic_launch(LaunchConfig(min_nodes=1, max_nodes=4, nproc_per_node=2), print)()
    cfg = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=2)
    with pytest.raises(ValueError, match="importable"):
        elastic_launch(cfg, lambda: 1)()
    assert cfg.rdzv_backend == "etcd" and cfg.max_restarts == 3  # torch's defaults
