"""Warm start (issue 14, item 5): building an optimizer loads the kernels of the first training
steps from numba's cache and settles the collector once, so that step 0 is not where they are
paid. Each check runs in a fresh process (what is loaded is process state)."""

import subprocess
import sys
import textwrap

import pytest

from sparsetorch import _jit


def _run(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, check=False, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_optimizer_loads_step_kernels_and_settles_once():
    pytest.importorskip("numba")
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    # a first process puts the small-bmm and spmm row kernels in numba's cache
    _run("""
        import sparsetorch as st
        t = st.randn(16, 5, 8)
        st.bmm(t, t.transpose(1, 2))
        a = st.eye(64).to_sparse_csr()
        st.sparse.mm(a, st.randn(64, 8))
    """)
    out = _run("""
        import sparsetorch as st
        from sparsetorch.dense import _small_bmm
        from sparsetorch.optim import _warm
        emb = st.nn.EmbeddingBag(100, 8, mode="sum", sparse=True)  # loads numba
        before = len(_small_bmm.nt_kernel().overloads)
        st.optim.SGD(emb.parameters(), lr=0.1)
        after = len(_small_bmm.nt_kernel().overloads)
        settled = _warm._SETTLED[0]
        n = _warm.prepare(st.optim.SGD, {emb.weight.dtype.np})  # a second one loads nothing
        print(before, after, settled, n)
    """)
    assert out == ["0", "1", "True", "0"]


def test_dense_model_without_numba_imports_nothing():
    out = _run("""
        import sys
        import sparsetorch as st
        lin = st.nn.Linear(4, 2)
        st.optim.Adam(lin.parameters())
        from sparsetorch.optim import _warm
        print("numba" in sys.modules, _warm._SETTLED[0])
    """)
    assert out == ["False", "False"]


def test_a_process_with_sparse_tensors_loads_numba_at_the_optimizer():
    """A GCN's adjacency is sparse: its first epoch will call the sparse kernels, so numba
    starts and the spmm rows are warmed (loaded from the cache, when it has them) when the
    optimizer is built, not inside that epoch."""
    pytest.importorskip("numba")
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    out = _run("""
        import sys
        import sparsetorch as st
        from sparsetorch import _jit
        from sparsetorch.optim import _warm
        adj = st.eye(32).to_sparse()
        before = "numba" in sys.modules
        w = st.nn.Parameter(st.randn(32, 4))
        st.optim.Adam([w])
        warmed = {names for _, _, names in _jit._WARMED}
        print(before, "numba" in sys.modules, _warm._SPMM_ROWS in warmed, _warm._SETTLED[0])
    """)
    assert out == ["False", "True", "True", "True"]
