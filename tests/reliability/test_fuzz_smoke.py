"""CI smoke run of the fuzz targets (tests/fuzz/): each runs a few seconds under atheris in its
own process and must end without a finding. The long runs are ``tests/fuzz/run.py --seconds 600``."""

import importlib.util
import os

import pytest

pytest.importorskip("atheris")

pytestmark = pytest.mark.fuzz  # opt-in: `python -m pytest -m fuzz` (.ci/run runs it)

FUZZ = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz")
_spec = importlib.util.spec_from_file_location("_sparsetorch_fuzz_run", os.path.join(FUZZ, "run.py"))
fuzz_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_run)


@pytest.mark.parametrize("target", fuzz_run.available())
def test_fuzz_target_smoke(target, tmp_path):
    r = fuzz_run.run_target(target, 3, str(tmp_path / "artifacts"))
    assert not r["findings"], f"{target}: {r['findings']}\n{r['log_tail']}"
    assert r["returncode"] == 0
    assert r["executions"] > 0, r
