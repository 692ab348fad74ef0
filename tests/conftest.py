import numpy as np
import pytest

import sparsetorch as st


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
