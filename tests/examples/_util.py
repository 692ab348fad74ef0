"""Running the scripts in examples/ from the tests: as a subprocess (the way users run them) or
imported as a module (to call their functions)."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def example_env():
    """The environment of a CI example run: quick mode, this checkout first on the path, a
    headless matplotlib, and one thread per kernel (parallel test jobs share few cores; thread
    counts change speed, never results)."""
    env = dict(os.environ)
    env.pop("SPARSETORCH_EXAMPLES_BACKEND", None)
    env.update(PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
               SPARSETORCH_EXAMPLES_QUICK="1", MPLBACKEND="Agg", NUMBA_NUM_THREADS="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def run_example(name, *args, cwd, env=None, timeout=600):
    """Runs ``examples/<name>.py *args`` in ``cwd``; returns its stdout (asserts it succeeded)."""
    r = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), *args], check=False,
                       cwd=cwd, env=env or example_env(), capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"{name}.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


PNG = b"\x89PNG\r\n\x1a\n"


def run_quick(name, tmp_path, *args, env=None):
    """``examples/<name>.py --out <tmp_path>/out *args`` run from the empty ``<tmp_path>/cwd``;
    asserts that it wrote its PNG and nothing outside ``--out``; returns its stdout."""
    pytest.importorskip("matplotlib")
    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    stdout = run_example(name, "--out", str(out), *args, cwd=cwd, env=env)
    assert list(cwd.iterdir()) == [], f"{name}.py wrote into the current directory"
    assert (out / f"{name}.png").read_bytes()[:8] == PNG
    return stdout


def summary_value(out, label):
    """The first number after ``label`` on a line of the printed summary."""
    m = re.search(rf"^\s*{re.escape(label)}\s+(-?[0-9.]+(?:e-?\d+)?)", out, re.MULTILINE)
    assert m, f"no {label!r} line in the output:\n{out[-2000:]}"
    return float(m.group(1))


def load_example(name):
    """``examples/<name>.py`` imported as the module ``<name>_example`` (its main() not run)."""
    mod_name = f"{name}_example"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    if str(EXAMPLES) not in sys.path:  # the examples import their shared examples/_common.py
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(mod_name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # classes defined there must pickle (DataLoader workers)
    spec.loader.exec_module(module)
    return module


def write_ratings_csv(tmp_path, with_titles):
    """A small MovieLens-format ratings.csv from a planted rank-2 model (and a movies.csv)."""
    import numpy as np

    rng = np.random.default_rng(1)
    users, movies = 60, 40
    u, v = rng.normal(size=(users, 2)), rng.normal(size=(movies, 2))
    rows = [(i + 1, 10 * (j + 1), float(np.clip(np.round(2 * (3 + u[i] @ v[j])) / 2, 0.5, 5)),
             1_000_000 + k) for k, (i, j) in enumerate(
                 (i, j) for i in range(users) for j in range(movies) if rng.random() < 0.6)]
    lines = ["userId,movieId,rating,timestamp"] + [f"{a},{b},{c},{d}" for a, b, c, d in rows]
    (tmp_path / "ratings.csv").write_text("\n".join(lines) + "\n")
    if with_titles:
        titles = ["movieId,title"] + [f"{10 * (j + 1)},Film number {j + 1}" for j in range(movies)]
        (tmp_path / "movies.csv").write_text("\n".join(titles) + "\n")
    return tmp_path / "ratings.csv", len(rows)
