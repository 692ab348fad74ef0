"""Custom autograd.Function: ctx API, node naming, outputs, errors, and parity with torch."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import Function, gradcheck, gradgradcheck
from sparsetorch.autograd.function import FunctionCtx, once_differentiable


def _leaf(values, dtype=st.float64):
    return st.tensor(values, dtype=dtype, requires_grad=True)


def _np(t):
    return t.detach().numpy()


# The examples from the PyTorch docs ("Extending torch.autograd").

class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class LinearSetup(Function):
    """The newer style: forward without ctx, plus setup_context."""

    @staticmethod
    def forward(input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if bias is not None else None
        return grad_output.mm(weight), grad_output.t().mm(input), grad_bias


def _linear_inputs(bias=True):
    rng = np.random.default_rng(0)
    x = st.tensor(rng.standard_normal((4, 3)), dtype=st.float64, requires_grad=True)
    w = st.tensor(rng.standard_normal((2, 3)), dtype=st.float64, requires_grad=True)
    b = st.tensor(rng.standard_normal(2), dtype=st.float64, requires_grad=True) if bias else None
    return x, w, b


# ---- the classic examples ----

def test_linear_function_gradcheck():
    assert gradcheck(LinearFunction.apply, _linear_inputs())
    assert gradcheck(LinearFunction.apply, _linear_inputs(bias=False)[:2])


def test_linear_function_gradgradcheck():
    assert gradgradcheck(LinearFunction.apply, _linear_inputs())


def test_linear_function_grad_fn_name_and_edges():
    x, w, b = _linear_inputs()
    y = LinearFunction.apply(x, w, b)
    assert type(y.grad_fn).__name__ == "LinearFunctionBackward"
    assert y.grad_fn.name() == "LinearFunctionBackward"
    assert isinstance(y.grad_fn, FunctionCtx)
    assert y.grad_fn._forward_cls is LinearFunction
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 3
    assert repr(y.grad_fn).startswith("<LinearFunctionBackward object")


def test_linear_function_matches_torch():
    torch = pytest.importorskip("torch")

    class TorchLinear(torch.autograd.Function):
        forward = LinearFunction.forward
        backward = LinearFunction.backward

    xs, ws, bs = _linear_inputs()
    xt, wt, bt = (torch.tensor(_np(t), requires_grad=True) for t in (xs, ws, bs))
    ys = LinearFunction.apply(xs, ws, bs)
    yt = TorchLinear.apply(xt, wt, bt)
    np.testing.assert_allclose(_np(ys), yt.detach().numpy(), rtol=1e-12)
    (ys * ys).sum().backward()
    (yt * yt).sum().backward()
    for s, t in ((xs, xt), (ws, wt), (bs, bt)):
        np.testing.assert_allclose(_np(s.grad), t.grad.numpy(), rtol=1e-12)


def test_needs_input_grad_per_argument():
    x, w, _ = _linear_inputs()
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, k, c):
            seen["needs"] = ctx.needs_input_grad
            seen["grad_mode"] = st.is_grad_enabled()
            return a * k + c

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    Probe.apply(x, 2.0, w.detach()[:, :1].sum() + 0)
    assert seen == {"needs": (True, False, False), "grad_mode": False}


def test_mul_constant_with_non_tensor_argument():
    x = _leaf([1.0, 2.0])
    y = MulConstant.apply(x, 3.0)
    assert type(y.grad_fn).__name__ == "MulConstantBackward"
    assert len(y.grad_fn.next_functions) == 1  # non-tensor arguments get no edge, as in torch
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [3.0, 3.0])
    assert gradcheck(MulConstant.apply, (x, 3.0))


def test_setup_context_style_and_keyword_arguments():
    x, w, b = _linear_inputs()
    assert gradcheck(LinearSetup.apply, (x, w, b))
    y = LinearSetup.apply(x, weight=w)
    assert type(y.grad_fn).__name__ == "LinearSetupBackward"
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.ones((4, 2)) @ _np(w))


def test_keyword_arguments_old_style():
    x = _leaf([1.0, 2.0])
    y = MulConstant.apply(x, constant=2.0)
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


# ---- outputs ----

def test_multiple_outputs():
    class SplitScale(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    x = _leaf([1.0, 2.0])
    a, b = SplitScale.apply(x)
    assert a.grad_fn is b.grad_fn and a.output_nr == 0 and b.output_nr == 1
    (a.sum() + (b * b).sum()).backward()
    np.testing.assert_allclose(_np(x.grad), 2 + 3 * 2 * 3 * np.array([1.0, 2.0]))
    x.grad = None
    b.sum().backward()  # a unused: its grad is materialized as zeros
    np.testing.assert_allclose(_np(x.grad), [3.0, 3.0])


def test_mark_non_differentiable():
    got = {}

    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * mask, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            got["g_mask"] = _np(g_mask).copy()
            return g * (g_mask + 1)

    x = _leaf([-1.0, 2.0])
    y, mask = WithMask.apply(x)
    assert y.requires_grad and not mask.requires_grad and mask.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(got["g_mask"], [0.0, 0.0])
    np.testing.assert_allclose(_np(x.grad), [1.0, 1.0])


def test_set_materialize_grads_false_passes_none():
    got = {}

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            got["g2"] = g2
            out = None
            if g1 is not None:
                out = g1
            if g2 is not None:
                out = g2 * 2 if out is None else out + g2 * 2
            return out

    x = _leaf([1.0])
    p, _ = Two.apply(x)
    p.sum().backward()
    assert got["g2"] is None
    np.testing.assert_allclose(_np(x.grad), [1.0])


def test_non_tensor_and_integer_outputs_pass_through():
    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5, (x > 1)

        @staticmethod
        def backward(ctx, g, g_none, g_bool):
            assert g_none is None
            return g * 2

    x = _leaf([1.0, 2.0])
    y, five, flag = Mixed.apply(x)
    assert five == 5 and not flag.requires_grad and y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


def test_returning_an_input_gives_a_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = _leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and x.grad_fn is None and x.is_leaf
    assert type(y.grad_fn).__name__ == "IdentityBackward"
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [3.0, 3.0])


def test_no_recording_without_grad():
    x = _leaf([1.0])
    assert not MulConstant.apply(x.detach(), 2.0).requires_grad
    with st.no_grad():
        y = MulConstant.apply(x, 2.0)
    assert not y.requires_grad and y.grad_fn is None


# ---- saved tensors ----

class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_saved_tensors_are_the_inputs_and_double_backward_works():
    x = _leaf([1.0, -2.0])
    y = Square.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    (g,) = st.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = st.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(h), [2.0, 2.0])


def test_saved_output_has_the_node_as_grad_fn():
    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            assert type(result.grad_fn).__name__ == "ExpBackward"
            return grad_output * result

    x = _leaf([0.5, 1.0])
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_saved_tensor_modified_in_place_raises():
    x = _leaf([1.0, 2.0])
    a = x * 1
    y = Square.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = _leaf([1.0])
    y = Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_without_saved_tensors_second_backward_works():
    x = _leaf([1.0])
    y = MulConstant.apply(x, 2.0)
    y.sum().backward()
    y.sum().backward()  # torch only refuses when freed saved tensors are needed
    np.testing.assert_allclose(_np(x.grad), [4.0])


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        Bad.apply(_leaf([1.0]))


# ---- in-place Functions ----

class DoubleInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_rebases_history():
    x = _leaf([1.0, 2.0])
    a = x * 1
    v0 = a._version
    b = DoubleInPlace.apply(a)
    assert b is a and type(a.grad_fn).__name__ == "DoubleInPlaceBackward"
    assert a._version > v0
    np.testing.assert_allclose(_np(a), [2.0, 4.0])
    b.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])


def test_mark_dirty_on_leaf_raises():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        DoubleInPlace.apply(_leaf([1.0]))


def test_dirty_tensor_must_be_returned():
    class Forgot(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="marked as dirty"):
        Forgot.apply(_leaf([1.0]) * 1)


# ---- errors in backward ----

def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = _leaf([1.0])
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number "
                                           r"of gradients \(expected 2, got 1\)"):
        Bad.apply(x, x).sum().backward()


def test_extra_none_gradients_are_allowed():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    x = _leaf([1.0])
    Extra.apply(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [1.0])


def test_gradient_of_wrong_shape_raises():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return st.ones(5, dtype=st.float64)

    with pytest.raises(RuntimeError, match=r"BadShapeBackward returned an invalid gradient at "
                                           r"index 0 - got \[5\] but expected shape compatible "
                                           r"with \[3\]"):
        BadShape.apply(_leaf([1.0, 2.0, 3.0])).backward()


def test_broadcastable_gradient_is_summed_and_dtype_cast():
    class Loose(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return st.ones(2, 3, dtype=st.float64)  # broadcast of the (3,) input's shape

    x = st.tensor([1.0, 2.0, 3.0], requires_grad=True)  # float32
    Loose.apply(x).backward()
    assert x.grad.dtype is st.float32
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0, 2.0])


def test_gradient_for_non_tensor_input_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    msg = "position 2, but the corresponding forward input was not a Variable"
    with pytest.raises(RuntimeError, match=msg):
        Bad.apply(_leaf([1.0]), 2).sum().backward()


def test_non_tensor_gradient_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3.0

    with pytest.raises(RuntimeError, match="expected Variable or None"):
        Bad.apply(_leaf([1.0])).sum().backward()


def test_missing_forward_and_backward():
    class NoForward(Function):
        pass

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        NoForward.apply(_leaf([1.0]))
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp"):
        NoBackward.apply(_leaf([1.0])).sum().backward()


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not st.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = _leaf([3.0])
    y = Sq.apply(x)
    (g,) = st.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(_np(g), [6.0])
    # differentiating through it: the grad_output requires grad -> error on double backward
    y = Sq.apply(x)
    go = st.ones(1, dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(y, x, go, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_ctx_arbitrary_attributes_and_node_call():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.constant = k
            ctx.meta = "user data"  # may shadow engine-internal names without harm
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.constant, None

    x = _leaf([1.0, 2.0])
    y = Keep.apply(x, 4.0)
    assert y.grad_fn.constant == 4.0
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [4.0, 4.0])


def test_function_hooks_on_outputs():
    x = _leaf([1.0, 2.0])
    y = MulConstant.apply(x, 2.0)
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(_np(y.grad), [10.0, 10.0])
    np.testing.assert_allclose(_np(x.grad), [20.0, 20.0])


def test_legacy_call_raises():
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        MulConstant()(_leaf([1.0]), 2.0)


def test_variable_legacy_constructor():
    from sparsetorch.autograd import Variable

    x = st.ones(2)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and not x.requires_grad
    assert isinstance(x, Variable)
    assert not Variable(x).requires_grad


def test_second_output_hook_and_in_place():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, a, b):
            return a + 2 * b

    x = _leaf([1.0, 1.0])
    p, q = Two.apply(x)
    q.register_hook(lambda g: g * 10)
    q.sum().backward(retain_graph=True)
    np.testing.assert_allclose(_np(x.grad), [20.0, 20.0])
    x.grad = None
    p, q = Two.apply(x)
    q.mul_(3)  # q now comes from a single-output node: its output_nr must follow
    q.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [6.0, 6.0])


def test_in_place_on_view_output_is_forbidden():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = _leaf([1.0, 1.0])
    y = Identity.apply(x * 2)
    assert y._base is not None
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        y.mul_(2)
    z = Identity.apply(x * 2).clone()
    z.mul_(2)  # the documented fix
    z.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [12.0, 12.0])


def test_mark_dirty_on_a_view_rebases_the_base():
    x = _leaf([1.0, 1.0, 1.0, 1.0])
    b = x * 1
    DoubleInPlace.apply(b[1:3])
    np.testing.assert_allclose(_np(b), [1.0, 2.0, 2.0, 1.0])
    b.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [1.0, 2.0, 2.0, 1.0])
