"""CSR @ dense on the CPU's numba kernels (issue 14, the GCN-sized spmm): a row's stored entries
four at a time, the one-thread kernels (with and without a permutation of the values, as the
transposed product uses) equal to the parallel one bit for bit, and to SciPy up to rounding."""

import numpy as np
import pytest

from sparsetorch._backend import CPU
from sparsetorch.sparse import _spmm as K
from sparsetorch.sparse._payload import COO

scipy_sparse = pytest.importorskip("scipy.sparse")


def _pattern(m=300, n=200, seed=0):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 10, m)  # 0..9 entries: every remainder of the four-at-a-time loop
    crow = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    col = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lens]).astype(np.int64)
    return crow, col


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 3, 7, 16, 37, 64, 100])
def test_rows_kernels_match_parallel_and_scipy(dt, k):
    nb = K._nb(CPU, np.dtype(dt))
    if nb is None:
        pytest.skip("numba kernels off or missing")
    crow, col = _pattern()
    rng = np.random.default_rng(1)
    vals = rng.standard_normal(col.size).astype(dt)
    x = rng.standard_normal((200, k)).astype(dt)
    perm = rng.permutation(col.size)
    pv = np.empty_like(vals)
    pv[perm] = vals  # vals == pv[perm]: the permuted kernels must read through perm
    outs = []
    for run in (lambda o: nb.csr_mm_rows(crow, col, vals, x, o),
                lambda o: nb.csr_mm_rows_p(crow, col, perm, pv, x, o),
                lambda o: nb.csr_mm_par(crow, col, crow[:0], False, vals, x, o,
                                        np.array([0, 100, 300], np.int64)),
                lambda o: nb.csr_mm_par(crow, col, perm, True, pv, x, o,
                                        np.array([0, 7, 150, 300], np.int64)),
                # the float kernels: the row's sums in registers (_wgather.py), the same bits
                lambda o: nb.csr_f_rows(crow, col, vals, x, o),
                lambda o: nb.csr_f_rows_p(crow, col, perm, pv, x, o),
                lambda o: nb.csr_f_par(crow, col, crow[:0], False, vals, x, o,
                                       np.array([0, 100, 300], np.int64)),
                lambda o: nb.csr_f_par(crow, col, perm, True, pv, x, o,
                                       np.array([0, 7, 150, 300], np.int64))):
        o = np.full((300, k), np.nan, dt)  # every row written (empty rows as zeros)
        run(o)
        outs.append(o)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    ref = scipy_sparse.csr_matrix((vals.astype(np.float64), col, crow), shape=(300, 200)) @ x
    tol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(outs[0], ref, rtol=tol, atol=tol)


def test_spmm_one_thread_path_and_transpose():
    crow, col = _pattern(2000, 1500, seed=2)  # nnz * k above the small-product threshold
    rows = np.repeat(np.arange(2000), np.diff(crow))
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(col.size).astype(np.float32)
    p = COO(np.stack([rows, col]), vals, (2000, 1500), True)
    x = rng.standard_normal((1500, 16)).astype(np.float32)
    xt = rng.standard_normal((2000, 16)).astype(np.float32)
    a = scipy_sparse.csr_matrix((vals, col, crow), shape=(2000, 1500))
    np.testing.assert_allclose(K.spmm(CPU, p, x), a @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(K.spmm(CPU, p, xt, transpose=True), a.T @ xt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("coalesced", [True, False])
def test_transposed_pattern_kernel_matches_scipy(monkeypatch, coalesced):
    # csr_t_form's numba counting sort against SciPy's CSR -> CSC (the path without numba):
    # the same column pointers, rows and value order, empty rows and columns included, and
    # an uncoalesced COO (duplicates, rows out of order) through its row-sort permutation
    if K._nb(CPU, np.dtype(np.float32)) is None:
        pytest.skip("numba kernels off or missing")
    crow, col = _pattern(300, 200, seed=4)
    rows = np.repeat(np.arange(300), np.diff(crow))
    if not coalesced:
        rng = np.random.default_rng(5)
        dup = rng.integers(0, rows.size, 50)
        rows, col = np.concatenate([rows, rows[dup]]), np.concatenate([col, col[dup]])
        order = rng.permutation(rows.size)
        rows, col = rows[order], col[order]
    vals = np.arange(rows.size, dtype=np.float32)

    def forms():
        return K.csr_t_form(CPU, COO(np.stack([rows, col]), vals, (300, 250), coalesced))

    got = forms()
    monkeypatch.setattr(K._jit, "ENABLED", [False])  # SciPy's conversion
    want = forms()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert got[0].dtype == got[1].dtype == got[2].dtype == np.int64
