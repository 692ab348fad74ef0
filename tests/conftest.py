import os
import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

import sparsetorch as st

# Opt-in markers: a plain `python -m pytest` deselects these tests (CI runs them: .ci/run). A test
# runs when `-m` names its marker (`-m "slow or fuzz"`), when its file is named on the command line,
# or, for soak, when SPARSETORCH_SOAK_SECONDS is set.
OPT_IN = {"slow": None, "fuzz": None, "soak": "SPARSETORCH_SOAK_SECONDS"}
_DESELECTED = pytest.StashKey()


@pytest.fixture(autouse=True)
def _seed():
    st.manual_seed(0) if hasattr(st, "manual_seed") else None
    np.random.seed(0)
    yield


def pytest_configure(config):
    # `python -m pytest -m cuda` selects the device tests (tests/gpu); see docs/gpu.md
    config.addinivalue_line(
        "markers", "cuda: runs on a CUDA device (a GPU, or the fake backend under "
        "SPARSETORCH_FAKE_CUDA=<n>); skipped when sparsetorch.cuda.is_available() is False")
    # `python -m pytest -m soak` (or SPARSETORCH_SOAK_SECONDS=<s>) runs the opt-in soak test
    config.addinivalue_line(
        "markers", "soak: opt-in long mixed-training run (tests/reliability/test_soak.py); "
        "length from SPARSETORCH_SOAK_SECONDS")


def _named_files(config):
    """The test files named on the command line (`pytest tests/x.py` or `tests/x.py::test_y`)."""
    files = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        if path.suffix == ".py":
            files.add(path.resolve())
    return files


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    markexpr = config.getoption("markexpr") or ""
    named = _named_files(config)
    keep, drop, counts = [], [], Counter()
    for item in items:
        off = [m for m, env in OPT_IN.items()
               if item.get_closest_marker(m) is not None
               and not re.search(rf"\b{m}\b", markexpr)
               and not (env and env in os.environ)]
        if off and Path(item.path).resolve() not in named:
            drop.append(item)
            counts[off[0]] += 1
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    config.stash[_DESELECTED] = counts


def pytest_terminal_summary(terminalreporter, config):
    """One line per skip reason (pytest's -rs prints one per test location: hundreds without a
    GPU or torch), and what the opt-in markers left out."""
    tr = terminalreporter
    chars = config.option.reportchars or ""
    reasons, files = Counter(), defaultdict(set)
    for rep in tr.stats.get("skipped", []):
        if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3:
            path, _, reason = rep.longrepr
            reason = reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
            reasons[reason] += 1
            files[reason].add(path)
    if reasons and not set(chars) & set("saA"):
        tr.write_sep("-", "skipped, one line per reason (-rs lists every test)")
        for reason, n in reasons.most_common():
            where = f"{len(files[reason])} files" if len(files[reason]) > 1 else next(iter(
                files[reason])).rsplit("tests/", 1)[-1]
            tr.write_line(f"SKIPPED {n} ({where}): {reason}")
    counts = config.stash.get(_DESELECTED, None)
    if counts:
        which = ", ".join(f"{n} {m}" for m, n in counts.items())
        expr = " or ".join(counts)
        tr.write_line(f"opt-in tests not run: {which} (run them with -m \"{expr}\"; .ci/run does)")
