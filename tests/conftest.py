import numpy as np
import pytest

import sparsetorch as st


@pytest.fixture(autouse=True)
def _seed():
    st.manual_seed(0) if hasattr(st, "manual_seed") else None
    np.random.seed(0)
    yield
