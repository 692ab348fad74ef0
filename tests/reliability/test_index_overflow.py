"""Shapes whose row-major linear index overflows int64 (e.g. (2**33, 2**33)): every op that
packs indices into one key (row * ncols + col) detects it and falls back to a lexicographic path,
so two entries never collide. Compared with a dict of index tuples (the dense computation)."""

import numpy as np
import pytest

import sparsetorch as torch

N = 2 ** 33
# (1, 7) and (1 + 2**31, 7) have linear indices 2**64 apart: equal after int64 wraparound
A_IDX = [[1, 1 + 2 ** 31, 5, 1], [7, 7, N - 1, 7]]          # (1, 7) twice: uncoalesced
A_VAL = [1.0, 2.0, 3.0, 4.0]
B_IDX = [[1 + 2 ** 31, 5, 9], [7, N - 1, 0]]
B_VAL = [10.0, 20.0, 30.0]
# three sparse dims: 2**22 * 2**22 * 2**22 = 2**66 (the generic merge paths, not the 2-D kernels)
N3 = 2 ** 22
A3_IDX = [[0, 2 ** 20, 3, 0], [1, 1, 2, 1], [5, 5, N3 - 1, 5]]
B3_IDX = [[2 ** 20, 3, 7], [1, 2, 0], [5, N3 - 1, 0]]


def _d(idx, val):
    out = {}
    for k, v in zip(zip(*idx), val):
        out[k] = out.get(k, 0.0) + v
    return out


def _as_dict(t):
    t = t.coalesce()
    return dict(zip(map(tuple, t.indices().T.tolist()), t.values().tolist()))


def _pair(three):
    if three:
        shape = (N3, N3, N3)
        return (torch.sparse_coo_tensor(torch.tensor(A3_IDX), torch.tensor(A_VAL), shape),
                torch.sparse_coo_tensor(torch.tensor(B3_IDX), torch.tensor(B_VAL), shape),
                _d(A3_IDX, A_VAL), _d(B3_IDX, B_VAL))
    return (torch.sparse_coo_tensor(torch.tensor(A_IDX), torch.tensor(A_VAL), (N, N)),
            torch.sparse_coo_tensor(torch.tensor(B_IDX), torch.tensor(B_VAL), (N, N)),
            _d(A_IDX, A_VAL), _d(B_IDX, B_VAL))


@pytest.mark.parametrize("three", [False, True])
def test_coalesce(three):
    a, _, da, _ = _pair(three)
    c = a.coalesce()
    assert _as_dict(c) == da
    idx = c.indices().T.tolist()
    assert idx == sorted(idx)


@pytest.mark.parametrize("three", [False, True])
@pytest.mark.parametrize("beta", [1, -1])
def test_add_sub(three, beta):
    a, b, da, db = _pair(three)
    got = _as_dict(a + b if beta == 1 else a - b)
    want = {k: da.get(k, 0.0) + beta * db.get(k, 0.0) for k in set(da) | set(db)}
    assert got == want


@pytest.mark.parametrize("three", [False, True])
def test_mul_intersection(three):
    a, b, da, db = _pair(three)
    assert _as_dict(a * b) == {k: da[k] * db[k] for k in set(da) & set(db)}


@pytest.mark.parametrize("three", [False, True])
def test_sparse_mask(three):
    a, b, da, db = _pair(three)
    assert _as_dict(a.sparse_mask(b.coalesce())) == {k: da.get(k, 0.0) for k in db}


def test_is_coalesced_check_does_not_wrap():
    # sorted and unique lexicographically, but the wrapped linear keys are not increasing
    idx = torch.tensor([[1, 1 + 2 ** 31], [8, 7]])
    t = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0]), (N, N), is_coalesced=True,
                                check_invariants=True)
    assert t.is_coalesced()
    bad = torch.tensor([[1 + 2 ** 31, 1], [7, 8]])
    with pytest.raises(ValueError, match="sorted and unique"):
        torch.sparse_coo_tensor(bad, torch.tensor([1.0, 2.0]), (N, N), is_coalesced=True,
                                check_invariants=True)


def test_distributed_merge_of_runs():
    from sparsetorch.distributed import _sparse as DS
    from sparsetorch.sparse._payload import COO
    from sparsetorch._backend import CPU

    a = torch.tensor(A_IDX).numpy()
    b = torch.tensor(B_IDX).numpy()
    ra = _pair(False)[0].coalesce()
    rb = _pair(False)[1].coalesce()
    idx = np.concatenate([ra.indices().numpy(), rb.indices().numpy()], axis=1)
    val = np.concatenate([ra.values().numpy(), rb.values().numpy()])
    p = COO(idx, val, (N, N), False)
    out = DS._sum_runs(CPU, p, [ra._nnz(), rb._nnz()])
    got = dict(zip(map(tuple, out.indices.T.tolist()), out.values.tolist()))
    da, db = _d(a.tolist(), A_VAL), _d(b.tolist(), B_VAL)
    assert got == {k: da.get(k, 0.0) + db.get(k, 0.0) for k in set(da) | set(db)}


def test_joint_keys_order_and_decode():
    from sparsetorch._backend import CPU
    from sparsetorch.sparse import _convert as C

    rng = np.random.default_rng(0)
    i1 = rng.integers(0, 4, size=(2, 50)) * (2 ** 40)
    i2 = rng.integers(0, 4, size=(2, 30)) * (2 ** 40)
    (k1, k2), table = C.joint_keys(CPU, [i1, i2], (2 ** 42, 2 ** 42))
    assert table is not None
    assert (C.decode_keys(CPU, k1, None, table) == i1).all()
    assert (C.decode_keys(CPU, k2, None, table) == i2).all()
    cols = [tuple(c) for c in np.concatenate([i1, i2], axis=1).T]
    keys = np.concatenate([k1, k2])
    for x in range(len(cols)):
        for y in range(len(cols)):
            assert (cols[x] < cols[y]) == (keys[x] < keys[y])


def test_sparse_sum_over_a_dim_keeps_groups_apart():
    # summing the last dim groups entries by (row, col): those keys overflow int64 packed
    shape = (N, N, 3)
    idx = torch.tensor([[1, 1 + 2 ** 31, 1, 5], [7, 7, 7, N - 1], [0, 1, 2, 0]])
    t = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 4.0, 8.0]), shape)
    got = _as_dict(torch.sparse.sum(t, dim=2))
    assert got == {(1, 7): 5.0, (1 + 2 ** 31, 7): 2.0, (5, N - 1): 8.0}
    sm = torch.sparse.softmax(t, dim=2).coalesce()
    assert _as_dict(sm)[(1 + 2 ** 31, 7, 1)] == 1.0  # alone in its slice
