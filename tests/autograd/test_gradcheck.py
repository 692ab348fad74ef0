"""gradcheck / gradgradcheck: passing ops, caught bugs, warnings, both import spellings."""

import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import autograd
from sparsetorch.autograd import Function
from sparsetorch.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck


def _x(values=(0.3, -1.1, 2.0), dtype=st.float64):
    return st.tensor(list(values), dtype=dtype, requires_grad=True)


class WrongSquare(Function):
    """d/dx x**2 deliberately wrong (3x instead of 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * g


# ---- passing checks ----

@pytest.mark.parametrize("fn", [
    lambda x: x.sin(),
    lambda x: (x * x).exp(),
    lambda x: x ** 3 - 2 * x,
    lambda x: x / (1 + x * x),
    lambda x: (x * 2).sum(),
], ids=["sin", "exp-sq", "poly", "rational", "sum"])
def test_passes_on_correct_ops(fn):
    assert gradcheck(fn, (_x(),))
    assert gradcheck(fn, _x())  # a single tensor instead of a tuple


def test_two_inputs_broadcast_and_matrix_ops():
    rng = np.random.default_rng(1)
    a = st.tensor(rng.standard_normal((3, 4)), dtype=st.float64, requires_grad=True)
    b = st.tensor(rng.standard_normal((4, 2)), dtype=st.float64, requires_grad=True)
    c = st.tensor(rng.standard_normal(2), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda a, b, c: a.mm(b) * c, (a, b, c))


def test_mixed_tensor_and_non_tensor_inputs():
    x = _x()
    y = st.tensor([1.0, 2.0, 3.0], dtype=st.float64)  # does not require grad
    assert gradcheck(lambda a, k, b: a * k + b, (x, 2.0, y))


def test_multiple_outputs():
    assert gradcheck(lambda x, y: (x * y, x.sin(), y * 3), (_x(), _x((1.0, 2.0, 0.5))))


def test_zero_dim_and_empty_inputs():
    assert gradcheck(lambda t: t * t, (st.tensor(1.5, dtype=st.float64, requires_grad=True),))
    empty = st.zeros(0, dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda t: t * 2, (empty,))


def test_fast_mode():
    assert gradcheck(lambda x: x.sin() * x, (_x(),), fast_mode=True)
    assert not gradcheck(WrongSquare.apply, (_x(),), fast_mode=True, raise_exception=False)
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(WrongSquare.apply, (_x(),), fast_mode=True)


# ---- caught bugs ----

def test_wrong_backward_raises_with_both_jacobians():
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, (_x(),))
    msg = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert "numerical:" in msg and "analytical:" in msg
    assert isinstance(info.value, RuntimeError)


def test_wrong_backward_returns_false_without_raise():
    assert gradcheck(WrongSquare.apply, (_x(),), raise_exception=False) is False


def test_tolerances_decide():
    class Off(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2.01

    assert not gradcheck(Off.apply, (_x(),), raise_exception=False)
    assert gradcheck(Off.apply, (_x(),), atol=0.0, rtol=1e-2)


def test_non_differentiable_output_must_have_zero_numerical_gradient():
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda x: x.detach() * 2, (_x(),))
    assert gradcheck(lambda x: (x * 0).detach(), (_x(),))


def test_nondeterministic_backward_is_caught():
    calls = [0]

    class Flaky(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            return g * (2 + 1e-9 * calls[0])

    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(Flaky.apply, (_x(),))
    assert gradcheck(Flaky.apply, (_x(),), nondet_tol=1e-6)


def test_undefined_grad_check():
    class Leaky(Function):
        """Right Jacobian, but a nonzero gradient for an all-zero grad_output."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if bool((g == 0).all()):
                return st.ones_like(g)
            return g * 2

    with pytest.raises(GradcheckError, match="undefined or zero"):
        gradcheck(Leaky.apply, (_x(),))
    assert gradcheck(Leaky.apply, (_x(),), check_undefined_grad=False)


def test_gradient_of_wrong_dtype_with_check_grad_dtypes():
    class Float32Grad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).float()

    # the Function node casts gradients back to the input's dtype, so this passes either way
    assert gradcheck(Float32Grad.apply, (_x(),), check_grad_dtypes=True, atol=1e-5)


# ---- complex inputs ----

class ScaleComplex(Function):
    """z -> c * z; torch's convention gives grad_input = grad * conj(c)."""

    c = complex(0.5, -2.0)

    @staticmethod
    def forward(ctx, z):
        return z * ScaleComplex.c

    @staticmethod
    def backward(ctx, g):
        return g * ScaleComplex.c.conjugate()


class ScaleComplexNoConj(ScaleComplex):
    @staticmethod
    def backward(ctx, g):
        return g * ScaleComplex.c


def test_complex_convention():
    z = st.tensor([1 + 2j, -0.5 + 0.1j], dtype=st.complex128, requires_grad=True)
    assert gradcheck(ScaleComplex.apply, (z,))
    assert not gradcheck(ScaleComplexNoConj.apply, (z,), raise_exception=False)


# ---- input validation ----

def test_warns_on_single_precision_inputs():
    x = _x(dtype=st.float32)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_no_warning_for_float64():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda t: t * 2, (_x(),))


def test_needs_an_input_requiring_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (st.ones(2, dtype=st.float64),))


def test_inputs_are_restored():
    x = _x()
    before = x.detach().numpy().copy()
    gradcheck(lambda t: t.sin(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


# ---- gradgradcheck ----

@pytest.mark.parametrize("fn", [
    lambda x: x ** 3,
    lambda x: x.sin() * x,
    lambda x: x.exp() / (1 + x * x),
], ids=["cube", "xsin", "rational"])
def test_gradgradcheck_passes(fn):
    assert gradgradcheck(fn, (_x(),))


def test_gradgradcheck_two_inputs_and_given_grad_outputs():
    x, y = _x(), _x((2.0, 0.5, -1.0))
    assert gradgradcheck(lambda a, b: a * b * a, (x, y))
    go = st.tensor([1.0, -2.0, 0.5], dtype=st.float64, requires_grad=True)
    assert gradgradcheck(lambda a, b: a * b * a, (x, y), (go,))


def test_gradgradcheck_catches_non_differentiable_backward():
    class DetachedBackward(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x.detach() * g  # first derivative right, second one lost

    x = _x()
    assert gradcheck(DetachedBackward.apply, (x,))
    assert not gradgradcheck(DetachedBackward.apply, (x,), raise_exception=False)
    with pytest.raises(GradcheckError):
        gradgradcheck(DetachedBackward.apply, (x,))


# ---- spellings ----

def test_both_spellings():
    import sparsetorch.autograd.gradcheck as gc_module_or_fn

    assert autograd.gradcheck is gradcheck  # the function, as torch.autograd.gradcheck
    assert autograd.gradcheck(lambda t: t * 2, (_x(),))
    assert autograd.gradcheck.gradcheck(lambda t: t * 2, (_x(),))
    assert autograd.gradcheck.GradcheckError is GradcheckError
    assert autograd.gradgradcheck is gradgradcheck
    assert callable(gc_module_or_fn)
    assert st.autograd.gradgradcheck(lambda t: t * t, (_x(),))


def test_matches_torch_verdicts():
    torch = pytest.importorskip("torch")

    class TorchWrong(torch.autograd.Function):
        forward = WrongSquare.forward
        backward = WrongSquare.backward

    xt = torch.tensor([0.3, -1.1, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(TorchWrong.apply, (xt,), raise_exception=False) is False
    assert gradcheck(WrongSquare.apply, (_x(),), raise_exception=False) is False
    assert torch.autograd.gradcheck(lambda t: t.sin(), (xt,)) is True
    assert gradcheck(lambda t: t.sin(), (_x(),)) is True
