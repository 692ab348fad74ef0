"""sparse/_runsum.py: coalesce by one sort of bit-packed keys gives the row-bucket kernel's bits."""

import numpy as np
import pytest

from sparsetorch import _jit
from sparsetorch._backend import CPU
from sparsetorch.sparse import _convert, _runsum
from sparsetorch.sparse._payload import COO


@pytest.fixture
def simd(request):
    """Force the packed-key path on (True) or off (False) for this test."""
    old = list(_runsum._SIMD)
    _runsum._SIMD[:] = [request.param]
    yield request.param
    _runsum._SIMD[:] = old


def _case(shape, nnz, dtype, seed):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, s, nnz) for s in shape]).astype(np.int64)
    kind = np.dtype(dtype).kind
    if kind == "c":
        v = rng.standard_normal(nnz) + 1j * rng.standard_normal(nnz)
    elif kind == "f":
        v = rng.standard_normal(nnz)
    else:
        v = rng.integers(0, 100, nnz)
    return idx, v.astype(dtype)


CASES = [((1000, 1000), 5000, np.float32), ((50, 60, 70), 20000, np.float64),
         ((300, 300), 200000, np.complex64), ((1, 1), 10, np.float32), ((4000, 3), 3000, np.int16),
         ((3000, 3000), 1 << 17, np.float32), ((5, 5), 1, np.int64), ((2000, 2000), 3000, np.uint16)]


@pytest.mark.parametrize(("shape", "nnz", "dtype"), CASES)
def test_packed_coalesce_has_the_row_bucket_bits(shape, nnz, dtype):
    pytest.importorskip("numba")
    if not _jit.ENABLED[0]:
        pytest.skip("numba switched off by SPARSETORCH_NO_NUMBA")
    idx, v = _case(shape, nnz, dtype, 0)
    old = list(_runsum._SIMD)
    try:
        _runsum._SIMD[:] = [True]
        got = _convert.coalesce(CPU, COO(idx, v, shape, False))
        direct = _runsum.coalesce_packed(CPU, idx, shape, v)
        _runsum._SIMD[:] = [False]
        want = _convert.coalesce(CPU, COO(idx, v, shape, False))
    finally:
        _runsum._SIMD[:] = old
    assert direct is not None
    np.testing.assert_array_equal(direct[0], want.indices)
    for g in (got, COO(direct[0], direct[1], shape, True)):
        assert g.coalesced and g.values.dtype == want.values.dtype
        np.testing.assert_array_equal(g.indices, want.indices)
        np.testing.assert_array_equal(g.values.view(np.uint8), want.values.view(np.uint8))
    # and it is the dense sum
    dense = np.zeros(shape, dtype=np.complex128 if v.dtype.kind == "c" else np.float64)
    np.add.at(dense, tuple(idx), v)
    out = np.zeros(shape, dtype=dense.dtype)
    out[tuple(got.indices)] = got.values
    if v.dtype.kind in "iu":
        np.testing.assert_array_equal(out.astype(v.dtype), dense.astype(v.dtype))
    else:
        np.testing.assert_allclose(out, dense, rtol=1e-4, atol=1e-4)


def test_runs_across_block_boundaries():
    """A long run of one index spanning several parallel blocks is summed once, in input order."""
    k = _runsum._kernels(CPU)
    if k is None:
        pytest.skip("numba missing or switched off")
    rng = np.random.default_rng(1)
    rows = np.sort(np.concatenate([np.full(500, 3), rng.integers(0, 50, 700), np.full(300, 49)]))
    vals = rng.standard_normal(rows.shape[0]).astype(np.float32)
    idx = np.stack([rows, np.zeros_like(rows)]).astype(np.int64)
    w = np.array([6, 0], dtype=np.int64)
    shift = 11
    keys = np.empty(rows.shape[0], np.int64)
    k.pack_keys(idx, w, shift, keys)
    keys.sort()
    want_i, want_v = k.run_sum(keys, shift, vals, w, 1)
    for nb in (2, 7, 64, 3000):
        got_i, got_v = k.run_sum(keys, shift, vals, w, nb)
        np.testing.assert_array_equal(got_i, want_i)
        np.testing.assert_array_equal(got_v, want_v)
    run = vals[rows == 3]
    seq = run[0]
    for x in run[1:]:  # sequential, in input order
        seq = np.float32(seq + x)
    assert want_v[list(want_i[0]).index(3)] == seq


@pytest.mark.parametrize("simd", [False], indirect=True)
def test_not_used_without_simd_sort_or_for_other_values(simd):
    idx, v = _case((100, 100), 500, np.float32, 2)
    assert _runsum.coalesce_packed(CPU, idx, (100, 100), v) is None
    _runsum._SIMD[:] = [True]
    assert _runsum.coalesce_packed(CPU, idx, (100, 100), v.astype(np.float16)) is None
    assert _runsum.coalesce_packed(CPU, idx, (100, 100), v.astype(bool)) is None
    assert _runsum.coalesce_packed(CPU, idx, (100, 100), np.ones((500, 2), np.float32)) is None
    assert _runsum.coalesce_packed(CPU, idx, (2 ** 40, 2 ** 40), v) is None  # 80 bits + position


@pytest.mark.parametrize("numba", [True, False])
@pytest.mark.parametrize(("nkeys", "n"), [(10, 1000), (1000, 10), (5, 1), (8192, 200000), (3, 100), (7, 0)])
def test_run_starts_is_where_sorted_keys_change(nkeys, n, numba):
    keys = np.sort(np.random.default_rng(3).integers(0, nkeys, n))
    want = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, np.int64)
    old = _jit.use_numba(numba and _jit.ENABLED[0])
    try:
        got = _runsum.run_starts(CPU, keys, nkeys)
    finally:
        _jit.use_numba(old)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_row_sum_of_coalesced_coo_matches_dense():
    import sparsetorch as st

    rng = np.random.default_rng(4)
    d = rng.standard_normal((64, 3000)).astype(np.float32) * (rng.random((64, 3000)) < 0.1)
    d[5] = 0  # an empty row
    s = st.from_numpy(d).to_sparse()
    r = s.sum(dim=1)
    assert r.layout is st.sparse_coo
    np.testing.assert_allclose(r.to_dense().numpy(), d.sum(1), rtol=1e-5, atol=1e-5)
    assert 5 not in r.indices()[0].tolist()
