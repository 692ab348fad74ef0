"""The recorder's per-op save plans and the engine's leaf accumulation (issue 14, item 2).

A node saves only what the formulas of its needed inputs read (one plan per op and tuple of
needed inputs, built once); a first gradient is taken over by the leaf without a copy unless
someone else holds it (a root gradient, another leaf, a view of another array).
"""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([[2.0, 1.0, -1.0], [3.0, -0.5, 2.0]], np.float32)


def _pair(lib, ra, rb):
    a = lib.tensor(A.copy(), requires_grad=ra)
    b = lib.tensor(B.copy(), requires_grad=rb)
    return a, b


@pytest.mark.parametrize("ra, rb", [(True, False), (False, True), (True, True)])
def test_mul_saves_only_what_the_needed_formulas_read(ra, rb):
    a, b = _pair(st, ra, rb)
    y = a * b
    node = y.grad_fn
    # d(a*b)/da reads b, d(a*b)/db reads a: one saved tensor per needed input
    assert len(node.saved) == int(ra) + int(rb)
    y.sum().backward()
    ta, tb = _pair(torch, ra, rb)
    (ta * tb).sum().backward()
    for s, t in ((a, ta), (b, tb)):
        if t.grad is None:
            assert s.grad is None
        else:
            np.testing.assert_array_equal(s.grad.numpy(), t.grad.numpy())


def test_plans_are_built_once_per_op_and_needs():
    a, b = _pair(st, True, False)
    op = (a * b).grad_fn.op
    plan = op.plans[(True, False)]
    for _ in range(3):
        assert (a * b).grad_fn.calls is plan[1]
    c, d = _pair(st, False, True)
    (c * d).sum().backward()
    assert (False, True) in op.plans
    np.testing.assert_array_equal(d.grad.numpy(), A)


def test_formula_reading_result_and_params():
    # sigmoid's formula reads its result; sum(dim, keepdim) reads its params
    xs = st.tensor(A.copy(), requires_grad=True)
    xt = torch.tensor(A.copy(), requires_grad=True)
    (xs.sigmoid().sum(1, keepdim=True) * st.tensor([[2.0], [3.0]])).sum().backward()
    (xt.sigmoid().sum(1, keepdim=True) * torch.tensor([[2.0], [3.0]])).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    assert xs.grad.dtype is st.float32


def test_saved_result_modified_in_place_still_raises():
    x = st.tensor(A.copy(), requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_pass_through_gradient_is_not_shared_between_leaves():
    # add hands the same incoming gradient to both inputs: one leaf takes it over, the other
    # gets its own copy, so accumulating into one never changes the other
    for lib in (st, torch):
        a, b = _pair(lib, True, True)
        (a + b).backward(lib.ones(2, 3))
        assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
        (a * 2 + b).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 3.0, np.float32))
        np.testing.assert_array_equal(b.grad.numpy(), np.full((2, 3), 2.0, np.float32))


def test_root_gradient_and_view_gradients_are_copied():
    g = st.ones(2, 3)
    a = st.tensor(A.copy(), requires_grad=True)
    a.backward(g)  # the leaf is the root: its grad must not be the caller's tensor
    assert not np.shares_memory(a.grad.numpy(), g.numpy())
    # a gradient that views another array (the view's backward reshapes) is copied on take-over
    x = st.tensor(A.reshape(-1).copy(), requires_grad=True)
    x.view(2, 3).backward(g)
    assert not np.shares_memory(x.grad.numpy(), g.numpy())
    x.view(2, 3).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(6, 2.0, np.float32))
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3), np.float32))


def test_chain_and_diamond_grads_match_torch():
    def run(lib):
        x = lib.tensor(A.copy(), requires_grad=True)
        w = lib.tensor(B.T.copy(), requires_grad=True)
        h = (x @ w).relu() * 0.5  # single-consumer chain
        z = h + h.exp()  # h feeds two nodes (a diamond)
        z.sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for s, t in zip(run(st), run(torch)):
        np.testing.assert_allclose(s, t, rtol=1e-5)


def test_implicit_gradient_of_a_complex_output_is_refused_as_torch():
    for lib in (st, torch):
        z = lib.tensor([1 + 2j], requires_grad=True)
        y = (z * z).sum()
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                               r"scalar outputs but got (sparse)?torch\.complex64"):
            y.backward()
        with pytest.raises(RuntimeError, match="only for real scalar outputs"):
            lib.autograd.grad(y, z)
        y.backward(lib.tensor(1 + 0j))
        assert complex(z.grad[0]) == 2 - 4j
