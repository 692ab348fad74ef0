"""The small-batch hot paths of issue 14 keep torch's semantics: float * bool mask on the binary
fast path, mm/bmm's lean fast path, stack's one-pass backward."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _pair(shape, dtype=np.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
def test_mul_float_by_bool_mask(dt):
    x, tx = _pair((4, 5), getattr(np, dt))
    m = np.arange(20).reshape(4, 5) % 3 == 0
    x.requires_grad_()
    tx.requires_grad_()
    y = x * st.from_numpy(m)
    ty = tx * torch.from_numpy(m)
    assert y.dtype is getattr(st, dt) and str(ty.dtype) == f"torch.{dt}"
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    # broadcasting mask and out=
    out = st.empty(4, 5, dtype=getattr(st, dt))
    r = st.mul(x.detach(), st.from_numpy(m[0]), out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), (tx.detach() * torch.from_numpy(m[0])).numpy())


def test_relu_backward_matches_torch():
    x, tx = _pair((3, 4))
    x.requires_grad_()
    tx.requires_grad_()
    x.relu().pow(2).sum().backward()
    tx.relu().pow(2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    b = st.ones(3, dtype=st.bfloat16) * st.tensor([True, False, True])  # bfloat16: the slow path
    assert b.dtype is st.bfloat16 and b.tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("op,sa,sb", [("mm", (3, 4), (4, 5)), ("bmm", (2, 3, 4), (2, 4, 5))])
def test_mm_bmm_fast_path_values_grads(op, sa, sb):
    a, ta = _pair(sa, seed=1)
    b, tb = _pair(sb, seed=2)
    for t in (a, b, ta, tb):
        t.requires_grad_()
    y = getattr(st, op)(a, b)
    ty = getattr(torch, op)(ta, tb)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op,sa,sb", [
    ("mm", (3, 4), (3, 4)), ("mm", (3, 4, 1), (4, 5)), ("mm", (3, 4), (4,)),
    ("bmm", (2, 3, 4), (3, 4, 5)), ("bmm", (2, 3, 4), (2, 3, 5)), ("bmm", (3, 4), (4, 5)),
])
def test_mm_bmm_shape_errors_match_torch(op, sa, sb):
    with pytest.raises(RuntimeError) as want:
        getattr(torch, op)(torch.zeros(sa), torch.zeros(sb))
    with pytest.raises(RuntimeError) as got:
        getattr(st, op)(st.zeros(sa), st.zeros(sb))
    assert str(got.value).startswith(str(want.value))  # (ours may add the got-dims)


def test_mm_dtype_mismatch_and_ints():
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        st.mm(st.zeros(2, 2), st.zeros(2, 2, dtype=st.float64))
    r = st.bmm(st.ones(1, 2, 2, dtype=st.int64), st.ones(1, 2, 2, dtype=st.int64))
    assert r.dtype is st.int64 and r.tolist() == [[[2, 2], [2, 2]]]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack_backward(dim):
    xs = [_pair((3, 4), seed=i) for i in range(4)]
    for x, tx in xs:
        x.requires_grad_()
        tx.requires_grad_()
    w, tw = _pair(st.stack([x for x, _ in xs], dim).shape, seed=9)
    y = st.stack([x for x, _ in xs], dim)
    ty = torch.stack([tx for _, tx in xs], dim)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    (y * w).sum().backward()
    (ty * tw).sum().backward()
    for x, tx in xs:
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_stack_backward_partial_and_double():
    a = st.randn(2, 3, requires_grad=True)
    b = st.randn(2, 3)  # no grad: its slice is not computed
    c = st.randn(2, 3, requires_grad=True)
    y = st.stack([a, b, c], 1)
    (g,) = st.autograd.grad((y * y).sum(), [c], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * c.detach().numpy(), rtol=1e-6)
    (gg,) = st.autograd.grad(g.sum(), [c])
    np.testing.assert_array_equal(gg.numpy(), np.full((2, 3), 2, np.float32))


def test_mm_with_parameter_operand():
    w = st.nn.Parameter(st.randn(4, 5))
    tw = torch.nn.Parameter(torch.from_numpy(w.detach().numpy().copy()))
    x, tx = _pair((3, 4), seed=3)
    y = x.mm(w)
    ty = tx.mm(tw)
    assert type(y) is st.Tensor and type(y.grad_fn).__name__ == "MmBackward0"
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_unary_fast_path_keeps_dtype_grad_fn_and_out(dt):
    x, tx = _pair((3, 4), getattr(np, dt), seed=4)
    for name in ("relu", "exp", "sigmoid", "neg"):
        y = getattr(st, name)(x.requires_grad_())
        ty = getattr(torch, name)(tx.requires_grad_())
        assert y.dtype is getattr(st, dt)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-3)
    out = st.empty(3, 4, dtype=getattr(st, dt))
    assert st.exp(x.detach(), out=out) is out
    assert st.exp(st.ones(2, dtype=st.bfloat16)).dtype is st.bfloat16
    assert st.exp(st.ones(2, dtype=st.int64)).dtype is st.float32  # the dtype rule's path


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_backward(dim):
    shapes = [(3, 4), (3, 4), (3, 4)]
    shapes = [tuple(2 + k if i == dim % 2 else s for i, s in enumerate(sh)) for k, sh in enumerate(shapes)]
    xs = [_pair(sh, seed=10 + k) for k, sh in enumerate(shapes)]
    xs[1][0].requires_grad_()  # only some inputs need a gradient
    xs[2][0].requires_grad_()
    xs[1][1].requires_grad_()
    xs[2][1].requires_grad_()
    y = st.cat([x for x, _ in xs], dim)
    ty = torch.cat([tx for _, tx in xs], dim)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    w, tw = _pair(tuple(y.shape), seed=20)
    (y * w).sum().backward()
    (ty * tw).sum().backward()
    assert xs[0][0].grad is None
    for x, tx in xs[1:]:
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_cat_backward_double_and_skipped_empty():
    a = st.randn(2, 3, requires_grad=True)
    c = st.randn(2, 2, requires_grad=True)
    y = st.cat([a, st.empty(0), c], 1)  # the legacy empty 1-D tensor is skipped
    (g,) = st.autograd.grad((y * y).sum(), [c], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * c.detach().numpy(), rtol=1e-6)
    (gg,) = st.autograd.grad(g.sum(), [c])
    np.testing.assert_array_equal(gg.numpy(), np.full((2, 2), 2, np.float32))


@pytest.mark.parametrize("expr", ["a - b", "b - a", "b - b", "a.sub(b)", "a.clone().sub_(b)",
                                  "L.sub(b, b)", "1.0 - b", "b - 1", "L.rsub(a, b)"])
def test_subtraction_with_a_bool_tensor_is_refused_as_torch(expr):
    for L in (st, torch):
        a, b = L.ones(2), L.tensor([True, False])
        with pytest.raises(RuntimeError, match=r"Subtraction, the `-` operator, with (a|two) bool"):
            eval(expr)
