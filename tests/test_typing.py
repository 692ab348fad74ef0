"""The annotations ``py.typed`` promises, checked with mypy (pyproject.toml [tool.mypy]).

One mypy run (about 10 s cold, 2 s with its cache) over three user programs in tests/typing/:
``sample_user_code.py`` (creation, Tensor methods, an nn.Module subclass, an optimizer loop) must
pass clean; every line of ``bad_user_code.py`` marked ``# E: <code>`` must be flagged with that code
and nothing else; each ``reveal_type`` in ``reveal_types.py`` must give the type its ``# R:``
comment names. The mypy tests skip when mypy is not installed (``pip install -e ".[test]"``).
"""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

from sparsetorch import Tensor

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "typing"
FILES = ("sample_user_code.py", "bad_user_code.py", "reveal_types.py")
_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$")


@pytest.fixture(scope="module")
def mypy_report():
    """{file name: [(line, kind, message, code)]} from one mypy run with the project's config."""
    pytest.importorskip("mypy")
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
           "--follow-imports=silent", "--no-error-summary", "--show-error-codes",
           "--hide-error-context", "--no-pretty",
           "--cache-dir", str(ROOT / ".mypy_cache"), *(str(HERE / f) for f in FILES),
           str(ROOT / "sparsetorch" / "_tensor_api.py"), str(ROOT / "sparsetorch" / "_typing.py")]
    env = dict(os.environ, MYPY_FORCE_COLOR="0")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
                         check=False)
    assert out.returncode in (0, 1), out.stdout + out.stderr  # 2: mypy itself failed
    report = {}
    for line in out.stdout.splitlines():
        m = _LINE.match(line)
        assert m, f"unparsed mypy output: {line!r}"
        report.setdefault(pathlib.Path(m["path"]).name, []).append(
            (int(m["line"]), m["kind"], m["msg"], m["code"]))
    return report


def _marked(name, tag):
    """{line: text after '# <tag>: '} for the lines of tests/typing/<name> carrying the tag."""
    out = {}
    for i, line in enumerate((HERE / name).read_text().splitlines(), 1):
        if f"# {tag}: " in line:
            out[i] = line.split(f"# {tag}: ", 1)[1].strip()
    return out


def test_sample_user_code_type_checks(mypy_report):
    for name in ("sample_user_code.py", "_tensor_api.py", "_typing.py"):
        assert mypy_report.get(name, []) == [], name


def test_bad_user_code_is_flagged_line_by_line(mypy_report):
    want = _marked("bad_user_code.py", "E")
    assert len(want) >= 15
    got = {}
    for line, kind, msg, code in mypy_report.get("bad_user_code.py", []):
        if kind == "error":
            got.setdefault(line, set()).add(code)
    assert {ln: {c} for ln, c in want.items()} == got


def test_revealed_types(mypy_report):
    want = _marked("reveal_types.py", "R")
    got = {line: msg.split('Revealed type is "', 1)[1].rstrip('"')
           for line, kind, msg, _ in mypy_report.get("reveal_types.py", []) if "Revealed type" in msg}
    assert [e for e in mypy_report.get("reveal_types.py", []) if e[1] == "error"] == []
    # mypy versions differ in spelling builtins ("builtins.int" / "int"): compare without the prefixes
    def norm(t):
        return re.sub(r"\b(builtins|typing|collections\.abc)\.", "", t)
    assert {k: norm(v) for k, v in got.items()} == {k: norm(v) for k, v in want.items()}


def test_sample_user_code_runs():
    """The sample is a real program (torch code with sparsetorch's import): it trains and returns."""
    sys.path.insert(0, str(HERE))
    try:
        import sample_user_code
    finally:
        sys.path.remove(str(HERE))
    assert isinstance(sample_user_code.main(), float)


# ---- the declarations in _tensor_api.py follow Tensor as it is at run time (no mypy needed) ----

def _declared():
    tree = ast.parse((ROOT / "sparsetorch" / "_tensor_api.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorAPI")
    return {n.name if isinstance(n, ast.FunctionDef) else n.target.id for n in cls.body
            if isinstance(n, ast.FunctionDef) or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))}


_OBJECT = set(dir(object)) | {"__slots__", "__dict__", "__weakref__", "__module__", "__array_priority__",
                              "__annotations__", "__orig_bases__", "__parameters__"}


def test_tensor_api_declares_exactly_the_runtime_names():
    runtime = {n for n in dir(Tensor) if n not in _OBJECT and (not n.startswith("_") or n.startswith("__"))}
    declared = {n for n in _declared() if not n.startswith("_") or n.startswith("__")} - _OBJECT
    assert sorted(runtime - declared) == [], (
        "new Tensor methods: declare each in sparsetorch/_tensor_api.py (a signature, or `name: _Method`)")
    assert sorted(declared - runtime) == [], "declared in sparsetorch/_tensor_api.py but absent at run time"


def test_tensor_api_is_for_checkers_only():
    """Tensor's run-time class does not inherit TensorAPI, and importing sparsetorch never imports it."""
    import sparsetorch._tensor_api as api

    assert api.TensorAPI not in Tensor.__mro__ and Tensor.__mro__[-1] is object
    code = "import sys, sparsetorch; print('sparsetorch._tensor_api' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.stdout.strip() == "False", out.stderr
