"""The small-batch MLP hot paths of issue 14 (F.linear's lean path and its payload GEMM backward,
relu, the DLRM-style interaction) keep torch's values, gradients, node names and errors."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _pair(shape, dtype=np.float32, seed=0, grad=True):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x, t = st.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if grad:
        x.requires_grad_()
        t.requires_grad_()
    return x, t


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_linear_lean_path_values_grads_node(dt, transposed):
    x, tx = _pair((7, 5) if not transposed else (5, 7), dt, 1)
    w, tw = _pair((3, 5), dt, 2)
    b, tb = _pair((3,), dt, 3)
    if transposed:  # a non-contiguous input view
        x2, tx2 = x.t(), tx.t()
    else:
        x2, tx2 = x, tx
    y = st.nn.functional.linear(x2, w, b)
    ty = torch.nn.functional.linear(tx2, tw, tb)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "AddmmBackward0"
    assert y.dtype is getattr(st, np.dtype(dt).name)
    _close(y, ty)
    g = np.random.default_rng(4).standard_normal((7, 3)).astype(dt)
    y.backward(st.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.copy()))
    for p, q in ((x, tx), (w, tw), (b, tb)):
        _close(p.grad, q.grad)
        assert p.grad.dtype is p.dtype and tuple(p.grad.shape) == tuple(p.shape)


def test_linear_lean_path_double_backward_and_no_grad():
    x, tx = _pair((4, 3), np.float64, 1)
    w, tw = _pair((2, 3), np.float64, 2)
    b, tb = _pair((2,), np.float64, 3)
    outs = []
    for lib, xx, ww, bb in ((st, x, w, b), (torch, tx, tw, tb)):
        y = lib.nn.functional.linear(xx, ww, bb)
        (gx,) = lib.autograd.grad(y.pow(2).sum(), xx, create_graph=True)
        gx.sum().backward()
        outs.append((gx, ww.grad, bb.grad))
    for p, q in zip(*outs):
        _close(p, q, 1e-10)
    with st.no_grad():
        assert st.nn.functional.linear(x, w, b).grad_fn is None
    assert st.nn.functional.linear(x.detach(), w.detach(), b.detach()).grad_fn is None


def test_linear_lean_path_leaves_errors_and_other_cases_to_the_checked_path():
    x = st.randn(4, 3)
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        st.nn.functional.linear(x, st.randn(2, 4), st.randn(2))
    with pytest.raises(RuntimeError):
        st.nn.functional.linear(x, st.randn(2, 3), st.randn(3))
    # 3-D input, int64 / float16 inputs and a bias-free call keep their own paths
    y = st.nn.functional.linear(st.randn(2, 4, 3), st.randn(2, 3, requires_grad=True), st.randn(2))
    assert tuple(y.shape) == (2, 4, 2)
    h = st.nn.functional.linear(x.half(), st.randn(2, 3).half(), st.randn(2).half())
    assert h.dtype is st.float16
    nb = st.nn.functional.linear(x, st.randn(2, 3, requires_grad=True))
    assert type(nb.grad_fn).__name__ == "MmBackward0"
    with pytest.raises(RuntimeError):
        st.nn.functional.linear(x, st.randn(2, 3, dtype=st.float64), st.randn(2, dtype=st.float64))


def test_linear_bias_grad_of_a_broadcast_gradient():
    # the engine may hand the node an expanded (stride-0) gradient: the GEMV reads it as is
    x, tx = _pair((6, 3), seed=1)
    w, tw = _pair((2, 3), seed=2)
    b, tb = _pair((2,), seed=3)
    st.nn.functional.linear(x, w, b).sum().backward()
    torch.nn.functional.linear(tx, tw, tb).sum().backward()
    for p, q in ((x, tx), (w, tw), (b, tb)):
        _close(p.grad, q.grad)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (5,), (4, 6)])
def test_relu_lean_path_values_grads_node(dt, shape):
    x, tx = _pair(shape, dt, 5)
    for lib, xx in ((st, x), (torch, tx)):
        y = lib.nn.functional.relu(xx * 1)
        assert type(y.grad_fn).__name__ == "ReluBackward0"
        y.backward(lib.ones_like(y) * 3)
    assert x.grad.dtype is x.dtype and tuple(x.grad.shape) == shape
    _close(x.grad, tx.grad, 0)
    # nan propagates forward; torch.relu, x.relu() and the module agree
    v = st.tensor([float("nan"), -1.0, 2.0])
    assert np.isnan(st.nn.functional.relu(v)[0].item())
    np.testing.assert_array_equal(st.nn.ReLU()(v)[1:].numpy(), st.relu(v)[1:].numpy())
    # double backward through relu's formula (create_graph)
    x2 = st.tensor([1.5, -0.5, 2.0], dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(st.nn.functional.relu(x2).pow(2).sum(), x2, create_graph=True)
    g.sum().backward()
    np.testing.assert_array_equal(x2.grad.numpy(), [2.0, 0.0, 2.0])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("ids", [[3, 0, 2], [1, 1, 0, 1], []])
def test_index_select_lean_path_values_grads(dim, ids):
    x, tx = _pair((4, 5), np.float32, 6)
    i, ti = st.tensor(ids, dtype=st.int64), torch.tensor(ids, dtype=torch.int64)
    y, ty = x.index_select(dim, i), tx.index_select(dim, ti)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "IndexSelectBackward0"
    _close(y, ty, 0)
    g = np.random.default_rng(7).standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(st.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.copy()))
    _close(x.grad, tx.grad, 1e-6)  # repeated ids add up


def test_index_select_lean_path_errors():
    x = st.randn(3, 4)
    for bad in ([0, 4], [-1, 0]):
        with pytest.raises(IndexError, match="index out of range in self"):
            x.index_select(1, st.tensor(bad))
    with pytest.raises(IndexError):
        x.index_select(2, st.tensor([0]))
    y = x.index_select(1, st.tensor([1, 3], dtype=st.int32))  # int32 ids: the checked path
    np.testing.assert_array_equal(y.numpy(), x.numpy()[:, [1, 3]])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_cat_lean_path_values_grads(dim):
    xs = [_pair((3, 4), np.float32, 10 + i) for i in range(3)]
    for join in ("stack", "cat"):
        if join == "cat" and dim == 2:
            continue
        y = getattr(st, join)([a for a, _ in xs], dim=dim)
        ty = getattr(torch, join)([b for _, b in xs], dim=dim)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        assert y.is_contiguous() and tuple(y.shape) == tuple(ty.shape)
        _close(y, ty, 0)
        g = np.random.default_rng(8).standard_normal(tuple(ty.shape)).astype(np.float32)
        y.backward(st.from_numpy(g.copy()))
        ty.backward(torch.from_numpy(g.copy()))
    for a, b in xs:
        _close(a.grad, b.grad, 0)
    # mixed dtypes promote (the checked path); errors unchanged
    r = st.stack([st.ones(2), st.ones(2, dtype=st.float64)])
    assert r.dtype is st.float64
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        st.stack([st.ones(2), st.ones(3)])


def test_view_lean_paths_values_grads_and_view_links():
    x, tx = _pair((2, 1, 3), np.float32, 9)
    cases = [
        lambda m: m.reshape(2, -1), lambda m: m.transpose(0, 2), lambda m: m.transpose(-1, 1),
        lambda m: m.squeeze(1), lambda m: m.squeeze(-1), lambda m: m.unsqueeze(-1),
        lambda m: m.unsqueeze(0), lambda m: m.reshape(3, 2).t(),
    ]
    for f in cases:
        y, ty = f(x * 1), f(tx * 1)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        assert tuple(y.shape) == tuple(ty.shape) and y.stride() == ty.stride()
        _close(y, ty, 0)
        y.sum().backward()
        ty.sum().backward()
    _close(x.grad, tx.grad, 0)
    # views share memory and the version counter; in-place through a view rebases the base
    b = st.zeros(2, 3)
    v = b.transpose(0, 1)
    v[0, 1] = 5.0
    assert b[1, 0].item() == 5.0 and b._version == v._version == 1
    w = st.ones(2, 3, requires_grad=True)
    h = w * 2
    h.reshape(-1).mul_(3)
    assert type(h.grad_fn).__name__ == "CopySlices"
    h.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 6.0, np.float32))
    # torch's errors
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.reshape(-1, -1)
    with pytest.raises(RuntimeError, match="is invalid for input of size 6"):
        x.reshape(4, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.squeeze(3)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("n", [7, 20000])  # below and above the fused kernels' size
def test_bce_with_logits_lean_path(dt, reduction, n):
    x, tx = _pair((n,), dt, 11)
    lab = (np.random.default_rng(12).random(n) < 0.3).astype(dt)
    y, ty = st.from_numpy(lab.copy()), torch.from_numpy(lab.copy())
    r = st.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=reduction)
    tr = torch.nn.functional.binary_cross_entropy_with_logits(tx, ty, reduction=reduction)
    assert type(r.grad_fn).__name__ == type(tr.grad_fn).__name__
    assert r.dtype is x.dtype and tuple(r.shape) == tuple(tr.shape)
    _close(r, tr, 1e-5)
    r.sum().backward()
    tr.sum().backward()
    _close(x.grad, tx.grad, 1e-5)
    # the small-size mean is the value NumPy's mean gives (one add.reduce / n)
    if reduction == "mean" and n == 7:
        from sparsetorch.nn._kernels import pointwise as pk
        from sparsetorch._backend import CPU
        ref = pk.bce_logits(CPU, x.detach().numpy(), lab, None, None, "none").mean(dtype=dt)
        assert r.item() == float(ref)


def test_bce_with_logits_lean_path_leaves_other_cases():
    x = st.randn(4, requires_grad=True)
    with pytest.raises(ValueError, match="Target size"):
        st.nn.functional.binary_cross_entropy_with_logits(x, st.rand(5))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        st.nn.functional.binary_cross_entropy_with_logits(x, st.rand(4), reduction="avg")
    r = st.nn.functional.binary_cross_entropy_with_logits(x, st.rand(4, dtype=st.float64))
    assert r.dtype is st.float64  # promoted: the checked path
    r = st.nn.functional.binary_cross_entropy_with_logits(x, st.rand(4), pos_weight=st.ones(4))
    assert type(r.grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward0"


@pytest.mark.parametrize("op", ["mm", "bmm"])
def test_mm_bmm_plain_backward_on_payloads(op):
    # the DLRM interaction: T @ T^T (a transposed view as mat2), then both gradients
    shape = (4, 3) if op == "mm" else (2, 4, 3)
    x, tx = _pair(shape, np.float32, 13)
    f = (lambda lib, a: lib.mm(a, a.t())) if op == "mm" else (lambda lib, a: lib.bmm(a, a.transpose(1, 2)))
    y, ty = f(st, x), f(torch, tx)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = np.random.default_rng(14).standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(st.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.copy()))
    _close(x.grad, tx.grad, 1e-5)
    # create_graph: the formulas with ops (double backward)
    a = st.randn(*shape, dtype=st.float64, requires_grad=True)
    ta = torch.from_numpy(a.detach().numpy().copy()).requires_grad_()
    for lib, t in ((st, a), (torch, ta)):
        (gx,) = lib.autograd.grad(f(lib, t).pow(2).sum(), t, create_graph=True)
        gx.sum().backward()
    _close(a.grad, ta.grad, 1e-9)


def test_two_gradients_of_one_output_are_summed_on_the_payloads():
    # T feeds bmm twice (as itself and through transpose): its two gradients add up
    t, tt = _pair((3, 2, 4), np.float32, 15)
    for lib, a in ((st, t), (torch, tt)):
        b = a * 1
        lib.bmm(b, b.transpose(1, 2)).sum().backward()
    _close(t.grad, tt.grad, 1e-6)
    # 0-d gradients, float64, create_graph (the op, so double backward works)
    s = st.tensor(2.0, dtype=st.float64, requires_grad=True)
    ts = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    for lib, a in ((st, s), (torch, ts)):
        b = a * 3
        (g,) = lib.autograd.grad(b * b + b.exp(), a, create_graph=True)
        g.backward()
    _close(s.grad, ts.grad, 1e-12)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(16, 5, 16), (9, 3, 1), (8, 0, 4), (8, 4, 0)])
def test_bmm_small_transposed_batch(dt, shape):
    # bmm(T, T^T) and bmm(A, B^T) with a batch of small matrices: the small-matrix kernel
    a = np.random.default_rng(16).standard_normal(shape).astype(dt)
    c = np.random.default_rng(17).standard_normal(shape).astype(dt)
    for x, y in ((a, a), (a, c)):
        X, Y = st.from_numpy(x.copy()), st.from_numpy(y.copy())
        r = st.bmm(X, Y.transpose(1, 2))
        tr = torch.bmm(torch.from_numpy(x.copy()), torch.from_numpy(y.copy()).transpose(1, 2))
        assert r.dtype is X.dtype and r.is_contiguous() and tuple(r.shape) == tuple(tr.shape)
        _close(r, tr, 1e-5 if dt == np.float32 else 1e-12)
    # inf and nan stay as torch's (no fast-math assumption about them)
    a2 = a.copy()
    if a2.size:
        a2.reshape(-1)[0] = np.inf
        a2.reshape(-1)[-1] = np.nan
    r = st.bmm(st.from_numpy(a2.copy()), st.from_numpy(a2.copy()).transpose(1, 2)).numpy()
    t = torch.from_numpy(a2.copy())
    tr = torch.bmm(t, t.transpose(1, 2)).numpy()
    np.testing.assert_array_equal(np.isnan(r), np.isnan(tr))
    np.testing.assert_array_equal(np.isinf(r), np.isinf(tr))


def test_bmm_small_kernel_off_without_numba():
    from sparsetorch import _jit

    old = _jit.use_numba(False)
    try:
        t = st.randn(16, 5, 4)
        r = st.bmm(t, t.transpose(1, 2))
        np.testing.assert_allclose(r.numpy(), t.numpy() @ t.numpy().transpose(0, 2, 1), rtol=1e-5,
                                   atol=1e-5)
    finally:
        _jit.use_numba(old)


def test_squeeze_t_and_relu_nodes_are_torchs():
    """squeeze(), squeeze(int), squeeze(dims) and t() name their nodes as torch; ReLU's backward
    is torch's threshold_backward (an inf gradient stays out of zeroed places, NaN passes)."""
    for lib in (st, torch):
        x = lib.ones(2, 1, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        names = [type(f.grad_fn).__name__ for f in (x.squeeze(), x.squeeze(1), x.squeeze((1,)),
                                                   x.t(), v.t(), lib.t(x), x.transpose(0, 1))]
        assert names == ["SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "TBackward0",
                         "TBackward0", "TBackward0", "TransposeBackward0"]
        for dt in (lib.float32, lib.float64):
            y = lib.tensor([-1.0, 2.0, float("nan"), 0.0], dtype=dt, requires_grad=True)
            lib.relu(y).backward(lib.tensor([float("inf"), 1.0, 5.0, 7.0], dtype=dt))
            assert y.grad.tolist() == [0.0, 1.0, 5.0, 0.0]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_relu_backward_bit_mask_is_threshold_backward(dt):
    """ReluBackward0's payload path (a bit mask, issue 14) gives torch's threshold_backward bit for
    bit: a transposed (non-contiguous) incoming gradient, NaN/inf gradients in zeroed and kept
    places, -0.0 and NaN results, and a gradient that must not be written to."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 9)).astype(dt)
    a[0, :4] = [np.nan, -0.0, 0.0, np.inf]
    g = rng.standard_normal((9, 6)).astype(dt)
    g[:3, 0] = [np.inf, np.nan, -np.inf]
    g[5, 1] = np.nan
    got = []
    for lib in (st, torch):
        x = lib.from_numpy(a.copy()).requires_grad_()
        gl = lib.from_numpy(g.copy())
        lib.nn.functional.relu(x * 1).backward(gl.t())
        assert gl.numpy().tobytes() == g.tobytes()  # the caller's gradient is untouched
        got.append(x.grad.numpy())
    assert got[0].dtype == got[1].dtype
    assert got[0].tobytes() == got[1].tobytes()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("numba_on", [True, False])
def test_relu_backward_large_kernel_is_threshold_backward(dt, numba_on):
    """From 16384 elements ReluBackward0 runs one numba pass of selects (the bit mask with numba
    off, or for a non-contiguous gradient): both bit for bit torch's threshold_backward."""
    from sparsetorch import _jit

    rng = np.random.default_rng(9)
    a = rng.standard_normal((140, 120)).astype(dt)
    a.flat[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
    g = rng.standard_normal((140, 120)).astype(dt)
    g.flat[1:4] = [np.inf, np.nan, -np.inf]
    g.flat[7] = np.nan
    old = _jit.use_numba(numba_on)
    try:
        for transposed in (False, True):
            got = []
            for lib in (st, torch):
                x = lib.from_numpy(a.copy()).requires_grad_()
                gl = lib.from_numpy(g.copy())
                if transposed:
                    gl = lib.from_numpy(np.ascontiguousarray(g.T)).t()
                lib.nn.functional.relu(x * 1).backward(gl)
                got.append(x.grad.numpy())
            assert got[0].dtype == got[1].dtype
            assert got[0].tobytes() == got[1].tobytes()
    finally:
        _jit.use_numba(old)
