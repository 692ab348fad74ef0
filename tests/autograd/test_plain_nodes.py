"""The plain-backward node paths of issue 14 (AddmmBackward0, ReluBackward0 and
BinaryCrossEntropyWithLogitsBackward0 computing on payloads in one call) keep torch's values,
the formulas' values under create_graph, in-place checks, retain_graph and hooks."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _mlp(lib, a, w1, b1, w2, b2, y, rg_input):
    x = lib.from_numpy(a.copy()).requires_grad_(rg_input)
    ps = [lib.from_numpy(v.copy()).requires_grad_() for v in (w1, b1, w2, b2)]
    h = lib.nn.functional.relu(lib.nn.functional.linear(x, ps[0], ps[1]))
    logit = lib.nn.functional.linear(h, ps[2], ps[3]).squeeze(1)
    loss = lib.nn.functional.binary_cross_entropy_with_logits(logit, lib.from_numpy(y))
    return x, ps, loss


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("rg_input", [False, True])
def test_plain_nodes_match_torch_and_formulas(dt, rg_input):
    rng = np.random.default_rng(3)
    arrs = [rng.standard_normal(s).astype(dt) for s in ((9, 5), (7, 5), (7,), (1, 7), (1,))]
    y = (rng.random(9) < 0.4).astype(dt)
    grads = {}
    for name, lib, cg in (("st", st, False), ("st_cg", st, True), ("torch", torch, False)):
        x, ps, loss = _mlp(lib, *arrs, y, rg_input)
        names = []
        f = loss.grad_fn
        while f is not None:
            names.append(type(f).__name__)
            f = next((n for n, _ in f.next_functions if n is not None and "Accumulate" not in
                      type(n).__name__), None)
        loss.backward(create_graph=cg)
        grads[name] = ([p.grad.detach().numpy() for p in ps]
                       + ([x.grad.detach().numpy()] if rg_input else []), names)
    assert grads["st"][1][:4] == grads["torch"][1][:4]  # (torch then adds TBackward0 of w1)
    for a, b, c in zip(grads["st"][0], grads["st_cg"][0], grads["torch"][0]):
        assert a.dtype == c.dtype == dt
        tol = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_plain_nodes_keep_inplace_checks_retain_graph_and_hooks():
    x = st.randn(6, 4, requires_grad=True)
    w = st.randn(3, 4, requires_grad=True)
    b = st.randn(3, requires_grad=True)
    y = st.nn.functional.linear(x, w, b)
    with st.no_grad():
        w.mul_(2)  # AddmmBackward0 saved w: its version moved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    r = st.nn.functional.relu(x * 1)
    r.add_(1)  # ReluBackward0 saved its result
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()
    # retain_graph: twice the gradient; without it, the second run raises
    x.grad = None
    seen = []
    out = st.nn.functional.linear(st.nn.functional.relu(x), w, b)
    out.grad_fn.register_hook(lambda gi, go: seen.append(len(gi)))
    loss = st.nn.functional.binary_cross_entropy_with_logits(out, st.ones(6, 3))
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1.numpy(), rtol=1e-6)
    assert seen == [3, 3]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["bmm_tt", "bmm", "mm_t", "mm"])
def test_mm_bmm_plain_node_layout_and_values(dt, kind):
    """MmBackward0/BmmBackward0's plain path: mat2's gradient in mat2's memory order when mat2 is
    a transposed view (the transpose's backward then gives a contiguous array); values as torch's
    and as the create_graph formulas'."""
    rng = np.random.default_rng(7)
    shape = (6, 5, 4) if kind.startswith("bmm") else (5, 4)
    a = rng.standard_normal(shape).astype(dt)
    b = rng.standard_normal(shape[:-2] + (4, 3)).astype(dt)
    g = rng.standard_normal(shape[:-2] + ((5, 5) if kind.endswith("t") else (5, 3))).astype(dt)
    got = {}
    for name, lib, cg in (("st", st, False), ("st_cg", st, True), ("torch", torch, False)):
        x = lib.from_numpy(a.copy()).requires_grad_()
        y = lib.from_numpy(b.copy()).requires_grad_()
        f = lib.bmm if kind.startswith("bmm") else lib.mm
        other = x.transpose(-1, -2) if kind.endswith("t") else y
        z = f(x, other)
        assert type(z.grad_fn).__name__ == ("BmmBackward0" if f is lib.bmm else "MmBackward0")
        z.backward(lib.from_numpy(g.copy()), create_graph=cg)
        got[name] = [t.grad.detach().numpy() for t in ((x,) if kind.endswith("t") else (x, y))]
    tol = 1e-5 if dt == np.float32 else 1e-12
    for p, q, r in zip(got["st"], got["st_cg"], got["torch"]):
        assert p.dtype == r.dtype == dt and p.flags.c_contiguous
        np.testing.assert_allclose(p, r, rtol=tol, atol=tol)
        np.testing.assert_allclose(p, q, rtol=tol, atol=tol)
    if kind.endswith("t"):  # the node's own output for mat2 views the memory order of a C array
        x = st.from_numpy(a.copy()).requires_grad_()
        z = (st.bmm if kind.startswith("bmm") else st.mm)(x, x.transpose(-1, -2))
        with st.no_grad():
            gi, gm = z.grad_fn.apply([st.from_numpy(g.copy())])
        assert gi._data.flags.c_contiguous and gm._data.swapaxes(-1, -2).flags.c_contiguous
        np.testing.assert_allclose(gm.numpy(), np.swapaxes(a, -1, -2) @ g, rtol=tol, atol=tol)
