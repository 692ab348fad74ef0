"""set_num_threads covers the BLAS pools too (torch's setting covers its BLAS): a matmul on a
shared machine does not keep two BLAS threads spinning after the user asked for one."""

import numpy as np
import pytest

import sparsetorch as st

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads():
    np.ones((64, 64)) @ np.ones((64, 64))  # BLAS loaded
    return {i["internal_api"]: i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"}


def test_set_num_threads_sets_blas_pools():
    before = _blas_threads()
    n0 = st.get_num_threads()
    try:
        st.set_num_threads(1)
        assert st.get_num_threads() == 1
        assert set(_blas_threads().values()) <= {1}
        a = st.randn(300, 200)
        assert st.allclose(a @ a.T, st.from_numpy(a.numpy() @ a.numpy().T))
    finally:
        st.set_num_threads(n0)
        if before:
            threadpoolctl.threadpool_limits(limits=before)
