"""The backward engine, tensor hooks, retain_grad and grad modes (torch.autograd semantics)."""

import threading

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import autograd


def _leaf(values, dtype=st.float64):
    return st.tensor(values, dtype=dtype, requires_grad=True)


def _np(t):
    return t.detach().numpy()


# ---- graph traversal ----

def test_long_chain_needs_no_recursion():
    x = _leaf([1.0, 2.0])
    y = x
    for _ in range(10000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [1.0001 ** 10000] * 2, rtol=1e-10)


def test_diamond_accumulates_both_paths():
    x = _leaf([1.0, 2.0, 3.0])
    a = x * 2
    b = a.sin()
    c = a.cos()
    (b + c).sum().backward()
    xa = np.array([1.0, 2.0, 3.0]) * 2
    np.testing.assert_allclose(_np(x.grad), 2 * (np.cos(xa) - np.sin(xa)))


def test_same_tensor_used_twice():
    x = _leaf([3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [6.0])


def test_retain_graph_allows_second_backward():
    x = _leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = _np(x.grad).copy()
    y.backward()
    np.testing.assert_allclose(_np(x.grad), 2 * first)


def test_second_backward_without_retain_graph_raises():
    x = _leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_create_graph_double_backward():
    x = _leaf([1.0, 2.0, -3.0])
    y = (x ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(_np(g), 3 * np.array([1.0, 4.0, 9.0]))
    (g2,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(g2), 6 * np.array([1.0, 2.0, -3.0]))


def test_backward_create_graph_gives_differentiable_grad():
    x = _leaf([2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [12.0])


# ---- autograd.grad ----

def test_grad_does_not_touch_dot_grad():
    x = _leaf([1.0, 2.0])
    (g,) = autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(_np(g), [2.0, 4.0])
    assert x.grad is None
    assert not g.requires_grad


def test_grad_allow_unused_and_materialize():
    x = _leaf([1.0, 2.0])
    z = _leaf([5.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None
    np.testing.assert_allclose(_np(gx), [2.0, 2.0])
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_allclose(_np(gz), [0.0])


def test_grad_of_input_not_requiring_grad_raises():
    x = _leaf([1.0])
    c = st.tensor([1.0], dtype=st.float64)
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad((x * c).sum(), c)


def test_grad_wrt_intermediate():
    x = _leaf([1.0, 2.0])
    a = x * 3
    (ga,) = autograd.grad((a * a).sum(), a)
    np.testing.assert_allclose(_np(ga), 2 * np.array([3.0, 6.0]))


def test_grad_leaves_unexecuted_nodes_alive():
    # torch frees only what autograd.grad ran through
    x = _leaf([1.0, 2.0])
    a = x * x
    b = a.sin()
    autograd.grad(b.sum(), a)
    a.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 4.0])


def test_backward_inputs_restricts_accumulation():
    x = _leaf([1.0])
    w = _leaf([2.0])
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_allclose(_np(x.grad), [2.0])
    assert w.grad is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * w).sum().backward(inputs=[])


def test_non_scalar_needs_gradient():
    x = _leaf([1.0, 2.0])
    y = x * x
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        y.backward()
    y.backward(gradient=st.tensor([1.0, 0.5], dtype=st.float64))
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


def test_gradient_shape_mismatch():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(st.ones(3, dtype=st.float64))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        st.ones(2).sum().backward()


def test_accumulation_across_backward_calls():
    x = _leaf([1.0, 2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [3.0 + 2.0, 3.0 + 4.0])


def test_grad_is_not_aliased_to_root_gradient():
    x = _leaf([1.0, 2.0])
    g = st.tensor([1.0, 1.0], dtype=st.float64)
    (x + 0).backward(g)
    (x + 0).backward(g)
    np.testing.assert_allclose(_np(g), [1.0, 1.0])  # accumulation did not write into g
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


def test_broadcast_grad_is_reduced():
    x = _leaf([[1.0], [2.0]])  # (2, 1)
    b = _leaf([1.0, 2.0, 3.0])  # (3,)
    (x * b).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [[6.0], [6.0]])
    np.testing.assert_allclose(_np(b.grad), [3.0, 3.0, 3.0])


def test_float32_grads_stay_float32():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    (x * 2.5).sum().backward()
    assert x.grad.dtype is st.float32


def test_next_functions_and_accumulate_grad():
    x = _leaf([1.0])
    y = x * 2
    (node, nr), = [e for e in y.grad_fn.next_functions if e[0] is not None]
    assert type(node).__name__ == "AccumulateGrad"
    assert node.variable is x and nr == 0


# ---- hooks and retain_grad ----

def test_leaf_hook_changes_accumulated_grad_and_can_be_removed():
    x = _leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(_np(g).copy()) or g * 3)
    (x * 2).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [6.0, 6.0])
    np.testing.assert_allclose(seen[0], [2.0, 2.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


def test_nonleaf_hook_order_and_retain_grad():
    x = _leaf([1.0, 1.0, 1.0])
    y = x * 2
    order = []
    y.register_hook(lambda g: order.append("h1") or g * 10)
    y.retain_grad()
    y.register_hook(lambda g: order.append("h2"))
    y.sum().backward()
    assert order == ["h1", "h2"]
    np.testing.assert_allclose(_np(y.grad), [10.0] * 3)  # retained after all hooks
    np.testing.assert_allclose(_np(x.grad), [20.0] * 3)
    assert y.retains_grad and not x.retains_grad


def test_hook_on_tensor_without_grad_raises():
    msg = "cannot register a hook on a tensor that doesn't require gradient"
    with pytest.raises(RuntimeError, match=msg):
        st.ones(2).register_hook(lambda g: g)


def test_hook_handle_context_manager():
    x = _leaf([1.0])
    y = x * 1
    with y.register_hook(lambda g: g * 5) as handle:  # removed on exit
        assert handle is not None
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [1.0])


def test_hook_sees_grad_in_autograd_grad():
    x = _leaf([1.0, 1.0])
    x.register_hook(lambda g: g * 5)
    (g,) = autograd.grad((x * 2).sum(), x)
    np.testing.assert_allclose(_np(g), [10.0, 10.0])


def test_retain_grad_accumulates_and_is_noop_on_leaf():
    x = _leaf([1.0, 1.0])
    x.retain_grad()
    assert not x.retains_grad
    y = x * 2
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    (y * 3).sum().backward()
    np.testing.assert_allclose(_np(y.grad), [4.0, 4.0])
    z = st.ones(2) * 2
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        z.retain_grad()


def test_nonleaf_grad_not_retained_by_default():
    x = _leaf([1.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None


def test_node_hooks():
    x = _leaf([1.0, 2.0])
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.sum().backward()
    assert calls == ["pre", "post"]


# ---- in-place and version counters ----

def test_saved_tensor_modified_in_place_raises():
    x = _leaf([1.0, 2.0])
    a = x * 2
    b = a.sin()
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_leaf_in_place_raises():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with st.no_grad():
        x.add_(1)  # allowed: e.g. a parameter update
    np.testing.assert_allclose(_np(x), [2.0, 3.0])


def test_in_place_on_nonleaf_is_differentiated():
    x = _leaf([1.0, 2.0])
    y = x * 1
    y.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [3.0, 3.0])


# ---- grad modes ----

def test_no_grad_results_do_not_require_grad():
    x = _leaf([1.0])
    with st.no_grad():
        y = x * 2
        assert not st.is_grad_enabled()
    assert st.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_enable_grad_inside_no_grad():
    x = _leaf([1.0])
    with st.no_grad():
        with st.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad


def test_set_grad_enabled_forms():
    st.set_grad_enabled(False)
    try:
        assert not st.is_grad_enabled()
    finally:
        st.set_grad_enabled(True)
    with st.set_grad_enabled(False):
        assert not st.is_grad_enabled()
    assert st.is_grad_enabled()

    @st.set_grad_enabled(False)
    def f():
        return st.is_grad_enabled()

    assert st.is_grad_enabled()  # decorating does not change the mode
    assert f() is False and st.is_grad_enabled()
    with pytest.raises(TypeError):
        st.set_grad_enabled(1)


@pytest.mark.parametrize("deco", ["bare", "called"])
def test_no_grad_and_enable_grad_decorators(deco):
    def apply(mode, fn):
        return mode(fn) if deco == "bare" else mode()(fn)

    f = apply(st.no_grad, lambda: st.is_grad_enabled())
    assert f() is False and st.is_grad_enabled()
    g = apply(st.enable_grad, lambda: st.is_grad_enabled())
    with st.no_grad():
        assert g() is True
        assert not st.is_grad_enabled()


def test_decorator_keeps_metadata():
    @st.no_grad()
    def documented(a):
        """Doc."""
        return a

    assert documented.__name__ == "documented" and documented.__doc__ == "Doc."


def test_inference_mode():
    x = _leaf([1.0])
    with st.inference_mode():
        assert not (x * 2).requires_grad
    with st.no_grad():
        with st.inference_mode(False):
            assert st.is_grad_enabled()  # as in torch: grad mode is set to ``not mode``

    @st.inference_mode
    def f():
        return st.is_grad_enabled()

    assert f() is False


def test_generator_decorated_mode_holds_only_while_running():
    @st.no_grad()
    def gen():
        for _ in range(2):
            got = yield st.is_grad_enabled()
            assert got == "ping"
        return "done"

    g = gen()
    assert next(g) is False
    assert st.is_grad_enabled()  # suspended: the caller's mode
    assert g.send("ping") is False
    with pytest.raises(StopIteration) as stop:
        g.send("ping")
    assert stop.value.value == "done"


def test_generator_throw_and_close():
    @st.no_grad
    def gen():
        try:
            yield 1
        except ValueError:
            yield st.is_grad_enabled()

    g = gen()
    next(g)
    assert g.throw(ValueError("x")) is False
    g.close()
    assert st.is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(ZeroDivisionError):
        with st.no_grad():
            1 / 0
    assert st.is_grad_enabled()


def test_context_manager_instance_is_reentrant():
    ctx = st.no_grad()
    with ctx:
        with st.enable_grad():
            with ctx:
                assert not st.is_grad_enabled()
            assert st.is_grad_enabled()
        assert not st.is_grad_enabled()
    assert st.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}
    ready = threading.Event()
    done = threading.Event()

    def worker():
        seen["start"] = st.is_grad_enabled()
        with st.no_grad():
            ready.set()
            done.wait(5)
            seen["inside"] = st.is_grad_enabled()

    t = threading.Thread(target=worker)
    with st.no_grad():
        t.start()
        ready.wait(5)
        assert not st.is_grad_enabled()
    assert st.is_grad_enabled()  # the worker's no_grad does not leak here
    done.set()
    t.join()
    assert seen == {"start": True, "inside": False}


# ---- parity with torch ----

def test_matches_torch_on_a_small_graph():
    torch = pytest.importorskip("torch")
    vals = [0.3, -1.2, 2.0]
    xs = _leaf(vals)
    xt = torch.tensor(vals, dtype=torch.float64, requires_grad=True)

    def f(m, x):
        a = x * x
        b = a.sin() + x.exp() / (1 + a)
        return (b * a).sum()

    f(st, xs).backward()
    f(torch, xt).backward()
    np.testing.assert_allclose(_np(xs.grad), xt.grad.numpy(), rtol=1e-12)
    (gs,) = autograd.grad(f(st, xs), xs, create_graph=True)
    (gt,) = torch.autograd.grad(f(torch, xt), xt, create_graph=True)
    (hs,) = autograd.grad(gs.sum(), xs)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(_np(hs), ht.numpy(), rtol=1e-10)


def test_retain_grad_and_hooks_across_in_place():
    # as torch: retain_grad follows the tensor to its new version; earlier hooks see the old one
    x = _leaf([1.0, 1.0])
    y = x * 1
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(_np(g).copy()))
    y.mul_(2)
    (y * 3).sum().backward()
    np.testing.assert_allclose(_np(y.grad), [3.0, 3.0])
    np.testing.assert_allclose(seen[0], [6.0, 6.0])
