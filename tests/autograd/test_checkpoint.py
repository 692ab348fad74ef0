"""torch.utils.checkpoint: recomputation in backward, gradients, RNG, sparse inputs, parity."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd.graph import AccumulateGrad
from sparsetorch.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

BOTH = pytest.mark.parametrize("reentrant", [True, False])


def _mlp(seed=0):
    st.manual_seed(seed)
    return st.nn.Sequential(st.nn.Linear(6, 5), st.nn.Tanh(), st.nn.Linear(5, 4), st.nn.ReLU(),
                            st.nn.Linear(4, 3))


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


class Counted(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = st.nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.lin(x).sin()


@BOTH
def test_gradients_equal_to_plain_and_forward_runs_twice(reentrant):
    m = Counted()
    x = st.randn(3, 4, requires_grad=True)
    (m(x) * 3).sum().backward()
    want = [m.lin.weight.grad.numpy().copy(), m.lin.bias.grad.numpy().copy(), x.grad.numpy().copy()]
    m.zero_grad()
    x.grad = None
    m.calls = 0
    y = checkpoint(m, x, use_reentrant=reentrant)
    assert m.calls == 1
    (y * 3).sum().backward()
    assert m.calls == 2  # recomputed in backward
    got = [m.lin.weight.grad.numpy(), m.lin.bias.grad.numpy(), x.grad.numpy()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
        assert g.dtype == np.float32


@BOTH
def test_no_intermediate_activations_kept(reentrant):
    m = _mlp()
    x = st.randn(2, 6, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=reentrant)
    # the output's node leads straight to leaves: the graph of the layers inside is not kept
    for node, _ in y.grad_fn.next_functions:
        assert node is None or isinstance(node, AccumulateGrad)


@BOTH
def test_dropout_preserve_rng_state(reentrant):
    st.manual_seed(3)
    lin = st.nn.Linear(8, 8)
    drop = st.nn.Dropout(0.5)
    x = st.randn(4, 8, requires_grad=True)

    def f(t):
        return drop(lin(t))

    st.manual_seed(11)
    f(x).pow(2).sum().backward()
    want = (lin.weight.grad.numpy().copy(), x.grad.numpy().copy())
    lin.zero_grad()
    x.grad = None
    st.manual_seed(11)
    y = checkpoint(f, x, use_reentrant=reentrant)
    st.rand(5)  # the RNG moves on between forward and backward
    y.pow(2).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-6, atol=1e-7)


def test_without_preserve_rng_state_the_mask_differs():
    st.manual_seed(3)
    x = st.ones(64, 64, requires_grad=True)

    def f(t):
        return st.nn.functional.dropout(t, 0.5, True)

    y = checkpoint(f, x, use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    fwd_mask = y.detach().numpy() != 0
    bwd_mask = x.grad.numpy() != 0
    assert not np.array_equal(fwd_mask, bwd_mask)


def test_rng_state_outside_is_not_disturbed():
    x = st.randn(3, 3, requires_grad=True)
    y = checkpoint(lambda t: st.nn.functional.dropout(t, 0.3, True), x, use_reentrant=True)
    st.manual_seed(5)
    a = st.rand(3)
    st.manual_seed(5)
    y.sum().backward()
    b = st.rand(3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@BOTH
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_input_gradients(reentrant, layout):
    dense = np.array([[1.0, 0, 2], [0, 0, 3], [4, 5, 0], [0, 6, 0]], np.float32)
    w0 = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)

    def make():
        s = st.tensor(dense).to_sparse() if layout == "coo" else st.tensor(dense).to_sparse_csr()
        return s.requires_grad_(), st.tensor(w0, requires_grad=True)

    def f(s, w):
        return st.sparse.mm(s, w).tanh()

    s, w = make()
    f(s, w).sum().backward()
    want_s, want_w = s.grad.to_dense().numpy(), w.grad.numpy()
    s, w = make()
    y = checkpoint(f, s, w, use_reentrant=reentrant)
    y.sum().backward()
    assert s.grad.layout == s.layout  # masked sparse gradient, as without checkpointing
    np.testing.assert_allclose(s.grad.to_dense().numpy(), want_s, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w.grad.numpy(), want_w, rtol=1e-6, atol=1e-7)


def test_non_reentrant_reaches_parameters_when_input_has_no_grad():
    m = _mlp()
    x = st.randn(2, 6)  # no requires_grad: only the parameters learn
    checkpoint(m, x, use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_reentrant_input_without_grad_warns():
    m = _mlp()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(m, st.randn(2, 6), use_reentrant=True)
    assert not y.requires_grad


def test_non_reentrant_works_with_autograd_grad_and_kwargs():
    w = st.randn(3, 3, requires_grad=True)
    x = st.randn(2, 3, requires_grad=True)

    def f(a, scale=1.0):
        return (a @ w).exp() * scale

    gx, gw = st.autograd.grad(checkpoint(f, x, use_reentrant=False, scale=2.0).sum(), (x, w))
    hx, hw = st.autograd.grad(f(x, scale=2.0).sum(), (x, w))
    np.testing.assert_allclose(gx.numpy(), hx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.numpy(), hw.numpy(), rtol=1e-6)


def test_reentrant_refuses_autograd_grad_and_kwargs():
    x = st.randn(3, requires_grad=True)
    y = checkpoint(lambda t: t.sin(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        st.autograd.grad(y.sum(), x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t, x, use_reentrant=True, scale=2)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda t: t, x, use_reentrant=True, debug=True)


def test_missing_use_reentrant_warns_and_defaults_to_reentrant():
    x = st.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = checkpoint(lambda t: t.sin(), x)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([st.nn.ReLU()], 1, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(lambda t: t.sin(), x, use_reentrant=False)


def test_determinism_check_catches_a_different_recomputation():
    x = st.randn(4, requires_grad=True)
    calls = []

    def f(t):
        calls.append(1)
        return t[: len(calls) + 1] * 2  # a different shape the second time

    y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.sum().backward()


@BOTH
def test_checkpoint_sequential_gradients_and_counts(reentrant):
    m = _mlp()
    x = st.randn(3, 6, requires_grad=True)
    m(x).sum().backward()
    want = _grads(m, x)
    m.zero_grad()
    x.grad = None
    calls = [0] * 5
    for i, mod in enumerate(m):
        mod.register_forward_hook(lambda *_, i=i: calls.__setitem__(i, calls[i] + 1))
    y = checkpoint_sequential(m, 2, x, use_reentrant=reentrant)
    y.sum().backward()
    # 5 modules, 2 segments of 2: modules 0-1 are checkpointed (run twice), 2-4 run once
    assert calls == [2, 2, 1, 1, 1]
    for g, w in zip(_grads(m, x), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(m, 2, x, use_reentrant=reentrant, foo=1)


@BOTH
def test_parity_with_torch_small_mlp(reentrant):
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as tcheckpoint

    m = _mlp(1)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 4),
                             torch.nn.ReLU(), torch.nn.Linear(4, 3))
    with torch.no_grad():
        for p, q in zip(tm.parameters(), m.parameters()):
            p.copy_(torch.from_numpy(q.detach().numpy().copy()))
    x0 = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    x = st.tensor(x0, requires_grad=True)
    tx = torch.tensor(x0, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=reentrant)
    ty = tcheckpoint(tm, tx, use_reentrant=reentrant)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    (y ** 2).mean().backward()
    (ty ** 2).mean().backward()
    for p, q in zip(m.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_face():
    assert st.utils.checkpoint.checkpoint is checkpoint
    assert st.utils.checkpoint.checkpoint_sequential is checkpoint_sequential
