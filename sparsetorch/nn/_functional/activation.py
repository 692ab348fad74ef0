"""Activation functions of nn.functional.

The ones whose naive composite is unstable or slow (softplus, logsigmoid, elu, gelu, silu,
leaky_relu, hardtanh) are ``defop`` kernels with derivative formulas written with sparsetorch ops
(so double backward works); the rest forward to existing ops.
"""

import math
import warnings

from ... import _ops
from ..._backend import CPU, get_backend
from ..._device import CPU as CPU_DEVICE
from ..._dispatch import call, defop, record_if_grad, wrap
from ..._dtype import float32, float64
from ..._layout import strided
from ..._ops import relu_ as _relu_  # declared with relu (_variants.py)
from ..._ops._util import check_tensor
from ..._ops.pointwise import relu as _relu
from ..._ops.pointwise import sigmoid as _sigmoid
from ..._ops.pointwise import tanh as _tanh
from ..._ops.statistics import _log_softmax_op, _softmax_op, fused_softmax
from ..._tensor import Tensor
from ...autograd import profiler as _profiler
from ...autograd.grad_mode import is_grad_enabled
from .._kernels import pointwise as _pk

__all__ = [
    "celu",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "relu",
    "relu6",
    "relu_",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
]

S = (strided,)
_RELU_OP = _relu.op
_ZERO = {float32: CPU.xp.float32(0), float64: CPU.xp.float64(0)}
_maximum = CPU.xp.maximum
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _float_input(input, name):
    check_tensor(input, name)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"{name}(): not implemented for dtype {input.dtype.name}; convert with .float() first")
    return input


def _apply(op, input, params, inplace):
    r = call(op, (input,), params)
    if inplace:
        return input.copy_(r)
    return r


# ---- kernels + formulas ----
# Forward kernels and plain backwards run the fused kernels of nn/_kernels/pointwise.py (numba on
# large float32/float64 CPU arrays, the NumPy formulas otherwise); with create_graph the formulas
# below are sparsetorch ops (double backward).

def _plain(grad, input):
    """A plain backward (no create_graph) over float32/float64 strided tensors: the formula may
    run a fused kernel on the payloads."""
    return (not is_grad_enabled() and input.layout is strided and grad.layout is strided
            and input.dtype is grad.dtype and input.dtype.name in ("float32", "float64"))


def _fast_grad(kind, grad, input, a=0.0, b=0.0, c=0.0):
    g = _pk.activation_backward(get_backend(input.device), kind, grad._data, input._data, a, b, c)
    return wrap(g, input.dtype, input.device, strided)


def _leaky_backward(grad, input, negative_slope):
    if _plain(grad, input):
        return _fast_grad(_pk.LEAKY_RELU, grad, input, negative_slope)
    return grad * ((input > 0).to(grad.dtype) * (1 - negative_slope) + negative_slope)


_leaky_relu_op = defop(
    "leaky_relu", {S: lambda be, x, slope: _pk.activation(be, _pk.LEAKY_RELU, x, slope)},
    params=("negative_slope",), grads={"input": _leaky_backward})


def _elu_kernel(be, x, alpha, scale, input_scale):
    return _pk.activation(be, _pk.ELU, x, alpha, scale, input_scale)


def _elu_backward(grad, input, alpha, scale, input_scale):
    if _plain(grad, input):
        return _fast_grad(_pk.ELU, grad, input, alpha, scale, input_scale)
    pos = (input > 0).to(grad.dtype)
    negd = (input.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)
    return grad * (pos * scale + (1 - pos) * negd)


_elu_op = defop("elu", {S: _elu_kernel}, params=("alpha", "scale", "input_scale"),
                grads={"input": _elu_backward})


def _gelu_kernel(be, x, approximate):
    return _pk.activation(be, _pk.GELU_TANH if approximate == "tanh" else _pk.GELU, x)


def _gelu_backward(grad, input, approximate):
    if _plain(grad, input):
        return _fast_grad(_pk.GELU_TANH if approximate == "tanh" else _pk.GELU, grad, input)
    if approximate == "tanh":
        x2 = input * input
        t = ((input + 0.044715 * x2 * input) * _SQRT_2_PI).tanh()
        d = 0.5 * (1 + t) + 0.5 * input * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x2)
        return grad * d
    cdf = 0.5 * (1 + (input * _INV_SQRT_2).erf())
    pdf = (input * input * -0.5).exp() * _INV_SQRT_2PI
    return grad * (cdf + input * pdf)


_gelu_op = defop("gelu", {S: _gelu_kernel}, params=("approximate",),
                 grads={"input": _gelu_backward})


def _silu_backward(grad, input):
    if _plain(grad, input):
        return _fast_grad(_pk.SILU, grad, input)
    s = input.sigmoid()
    return grad * s * (1 + input * (1 - s))


_silu_op = defop("silu", {S: lambda be, x: _pk.activation(be, _pk.SILU, x)},
                 grads={"input": _silu_backward})


def _softplus_backward(grad, input, beta, threshold):
    if _plain(grad, input):
        g = _pk.softplus_backward(get_backend(input.device), grad._data, input._data, beta,
                                  threshold)
        return wrap(g, input.dtype, input.device, strided)
    bx = input * beta
    s = bx.sigmoid()
    over = (bx > threshold).to(grad.dtype)
    return grad * (s + over * (1 - s))


_softplus_op = defop("softplus", {S: _pk.softplus}, params=("beta", "threshold"),
                     grads={"input": _softplus_backward})


def _logsigmoid_backward(grad, input):
    if _plain(grad, input):
        g = _pk.logsigmoid_backward(get_backend(input.device), grad._data, input._data)
        return wrap(g, input.dtype, input.device, strided)
    return grad * (-input).sigmoid()


# named as torch's node (LogSigmoidBackward0)
_logsigmoid_op = defop("log_sigmoid", {S: _pk.logsigmoid}, grads={"input": _logsigmoid_backward})


def _mish_kernel(be, x):
    return x * be.xp.tanh(_pk.softplus(be, x, 1.0, 20.0))


def _mish_backward(grad, input):
    s = input.sigmoid()
    t = softplus(input).tanh()
    return grad * (t + input * s * (1 - t * t))


_mish_op = defop("mish", {S: _mish_kernel}, grads={"input": _mish_backward})


def _hardtanh_kernel(be, x, lo, hi):
    return be.xp.clip(x, lo, hi)


_hardtanh_op = defop(
    "hardtanh", {S: _hardtanh_kernel}, params=("min_val", "max_val"),
    grads={"input": lambda grad, input, min_val, max_val:
           grad * ((input > min_val) & (input < max_val)).to(grad.dtype)})


# ---- public functions ----

def relu(input, inplace=False):
    r"""relu(input, inplace=False) -> Tensor: ``max(0, x)`` elementwise."""
    if input.__class__ is Tensor and not inplace and input.device is CPU_DEVICE \
            and input.layout is strided and _profiler.ACTIVE is None:
        dt = input.dtype
        zero = _ZERO.get(dt)
        if zero is not None and input._data.ndim:  # float32/float64 CPU arrays (issue 14)
            t = wrap(_maximum(input._data, zero), dt, CPU_DEVICE, strided)
            if input._rg:
                record_if_grad(_RELU_OP, t, (input,))
            return t
    return _relu_(input) if inplace else _relu(input)


def relu_(input):
    """In-place :func:`relu`."""
    return _relu_(input)


def relu6(input, inplace=False):
    """``min(max(0, x), 6)`` elementwise."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    r"""``max(0, x) + negative_slope * min(0, x)`` elementwise."""
    _float_input(input, "leaky_relu")
    return _apply(_leaky_relu_op, input, (negative_slope,), inplace)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu_(input, negative_slope=0.01) -> Tensor

    In-place version of :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


def elu(input, alpha=1.0, inplace=False):
    r"""``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""
    _float_input(input, "elu")
    return _apply(_elu_op, input, (alpha, 1.0, 1.0), inplace)


def elu_(input, alpha=1.0):
    """elu_(input, alpha=1.0) -> Tensor

    In-place version of :func:`elu`."""
    return elu(input, alpha, True)


def selu(input, inplace=False):
    """Scaled ELU with the self-normalizing constants."""
    _float_input(input, "selu")
    return _apply(_elu_op, input, (1.6732632423543772848170429916717,
                                   1.0507009873554804934193349852946, 1.0), inplace)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _float_input(input, "celu")
    return _apply(_elu_op, input, (alpha, 1.0, 1.0 / alpha), inplace)


def gelu(input, approximate="none"):
    r"""Gaussian Error Linear Unit: ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh formula."""
    _float_input(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return call(_gelu_op, (input,), (approximate,))


def silu(input, inplace=False):
    r"""``x * sigmoid(x)`` (the swish function)."""
    _float_input(input, "silu")
    return _apply(_silu_op, input, (), inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _float_input(input, "mish")
    return _apply(_mish_op, input, (), inplace)


def sigmoid(input):
    """sigmoid(input) -> Tensor

    ``1 / (1 + exp(-x))`` elementwise; see :func:`sparsetorch.sigmoid`."""
    return _sigmoid(input)


def tanh(input):
    """tanh(input) -> Tensor

    Hyperbolic tangent elementwise; see :func:`sparsetorch.tanh`."""
    return _tanh(input)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """tanhshrink(input) -> Tensor

    ``x - tanh(x)`` elementwise."""
    return input - input.tanh()


def softplus(input, beta=1.0, threshold=20.0):
    r"""``1/beta * log(1 + exp(beta * x))``, linear where ``beta * x > threshold``."""
    _float_input(input, "softplus")
    return call(_softplus_op, (input,), (beta, threshold))


def logsigmoid(input):
    r"""``log(1 / (1 + exp(-x)))``, computed stably."""
    _float_input(input, "log_sigmoid")
    return call(_logsigmoid_op, (input,), ())


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]`` (gradient 1 strictly inside, 0 outside)."""
    _float_input(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(_hardtanh_op, input, (min_val, max_val), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh_(input, min_val=-1., max_val=1.) -> Tensor

    In-place version of :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, True)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold`` else ``value``."""
    r = _ops.where(input > threshold, input, value)
    return input.copy_(r) if inplace else r


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``input`` along dim."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {n}")
    a, b = input.split(n // 2, dim)
    return a * b.sigmoid()


def _softmax_dim(name, ndim):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


# ---- softmax / log_softmax: numba row and slab kernels (issue 14) ----
# The ops are sparsetorch.softmax / log_softmax (_ops/statistics.py: the fused kernels on
# float32/float64 C-contiguous CPU tensors, NumPy otherwise). For those tensors F.softmax calls
# the kernels itself and records the op's node (SoftmaxBackward0 / LogSoftmaxBackward0), without
# the dispatcher: ~2 us less per call (7.3 vs 9.3 us forward on (128, 10), bench_softmax.py).

_SM_DTYPES = (float32, float64)


def _fast_softmax(input, dim, dtype, log):
    """The kernels' result for a float32/float64 C-contiguous CPU tensor of at least one dim
    (after ``dtype``'s cast), or None (the ops' path)."""
    if input.__class__ is not Tensor or input.device is not CPU_DEVICE \
            or input.layout is not strided or _profiler.ACTIVE is not None \
            or dim.__class__ is not int:
        return None
    if dtype is not None:
        if dtype not in _SM_DTYPES:
            return None
        if dtype is not input.dtype:
            input = input.to(dtype)
    x = input._data
    nd = x.ndim
    f = fused_softmax(CPU, x)  # (the op's own test: float32/float64, C-contiguous, not empty)
    if f is None or not -nd <= dim < nd:
        return None
    if dim < 0:
        dim += nd
    t = wrap(f[0].softmax_rows(CPU, f[1], x, log, dim), input.dtype, CPU_DEVICE, strided)
    if input._rg:
        record_if_grad(_log_softmax_op if log else _softmax_op, t, (input,), (dim,))
    return t


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    r"""``exp(x_i) / sum_j exp(x_j)`` along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    r = _fast_softmax(input, dim, dtype, False)
    return _ops.softmax(input, dim, dtype=dtype) if r is None else r


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmin(input, dim=None, _stacklevel=3, dtype=None) -> Tensor

    ``softmax(-input, dim)``: rescales the slices along ``dim`` to lie in [0, 1] and sum to 1,
    the smallest entries getting the largest weights."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return _ops.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    r"""``log(softmax(x))`` along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    r = _fast_softmax(input, dim, dtype, True)
    return _ops.log_softmax(input, dim, dtype=dtype) if r is None else r
