import pytest

import sparsetorch as st


@pytest.fixture
def device():
    """The CUDA device the tests run on (skipped by the modules' marks when there is none)."""
    return st.device("cuda", 0)
