"""cat/stack's fast path (issue 14): strided CPU tensors of one dtype join without the checked
path's lists; results, node names, edges, gradients and errors stay torch's."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("fname,dim", [("cat", 1), ("cat", -1), ("cat", 0), ("stack", 1),
                                       ("stack", -1), ("stack", 0), ("stack", -3)])
@pytest.mark.parametrize("as_tuple", [False, True])
def test_lean_join_matches_torch(fname, dim, as_tuple):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3) if fname == "stack" or dim == 0 else (4, 2)).astype(np.float32)
    if fname == "cat" and dim == 0:
        b = rng.standard_normal((2, 3)).astype(np.float32)
    gall = rng.standard_normal(64).astype(np.float32)
    got = []
    for lib in (st, torch):
        x = lib.from_numpy(a.copy()).requires_grad_()
        y = lib.from_numpy(b.copy())  # no grad: its edge is empty
        z = lib.from_numpy(a.copy()).t().contiguous().t()  # a non-contiguous input
        ts = [x, y, z] if fname == "stack" else [x, y]
        r = getattr(lib, fname)(tuple(ts) if as_tuple else ts, dim)
        edges = [type(n).__name__ if n is not None else None for n, _ in r.grad_fn.next_functions]
        r.backward(lib.from_numpy(gall[: r.numel()].reshape(tuple(r.shape)).copy()))
        got.append((r.detach().numpy().copy(), type(r.grad_fn).__name__, edges, x.grad.numpy()))
    (r1, n1, e1, g1), (r2, n2, e2, g2) = got
    assert r1.dtype == r2.dtype and r1.shape == r2.shape and r1.flags.c_contiguous
    np.testing.assert_array_equal(r1, r2)
    assert n1 == n2 and e1 == e2
    np.testing.assert_array_equal(g1, g2)


def test_lean_join_leaves_odd_calls_to_the_checked_path():
    x = st.ones(2, 3)
    # mixed dtypes promote; a legacy empty 1-D tensor is skipped; errors keep torch's words
    assert st.cat([x, st.ones(2, 1, dtype=st.float64)], 1).dtype == st.float64
    assert st.cat([st.ones(3), st.zeros(0)]).shape == (3,)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        st.cat([x, st.ones(3, 3)], 1)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        st.stack([x, st.ones(3, 2)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        st.stack([x, x], 3)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        st.cat([st.tensor(1.0), st.tensor(2.0)])
    out = st.empty(2, 6)
    assert st.cat([x, x], 1, out=out) is out
