"""``python -m sparsetorch.warmup``: compiles (or, with a warm cache, loads) every kernel group
through the public API and says what it did."""

import io
import subprocess
import sys

import pytest

from sparsetorch import _jit, warmup


def test_list_names_every_group(capsys):
    assert warmup.main(["--list"]) == 0
    out = capsys.readouterr().out
    for g in ("embedding", "optim", "spmm", "spgemm", "rowsort", "merge", "nn", "distributed", "random"):
        assert g in out


def test_run_one_group_reports_it():
    pytest.importorskip("numba")
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    buf = io.StringIO()
    rows = warmup.run(["distributed"], ["float32"], file=buf)  # two small kernels: ~3 s cold
    assert [r[:2] for r in rows] == [("distributed", "float32")]
    assert rows[0][2] >= 0 and rows[0][3] >= 0
    out = buf.getvalue()
    assert "distributed" in out and "kernel signatures compiled into numba's cache" in out
    assert _jit.NOTICE[0] is True  # the notice is back on afterwards
    assert _jit.built().get("dist_merge")  # the group was built
    assert warmup.run(["distributed"], ["float32"], file=io.StringIO())[0][3] == 0  # cached now


def test_switched_off_does_nothing():
    buf = io.StringIO()
    old = _jit.use_numba(False)
    try:
        assert warmup.run(["merge"], file=buf) == []
    finally:
        _jit.use_numba(old)
    assert "switched off" in buf.getvalue()


def test_unknown_group_is_refused():
    with pytest.raises(ValueError, match="unknown warmup group"):
        warmup.run(["nope"])
    r = subprocess.run([sys.executable, "-m", "sparsetorch.warmup", "--only", "nope"],
                       check=False, capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice" in r.stderr
