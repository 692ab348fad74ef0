"""Elementwise ops: unary math, binary arithmetic with broadcasting, comparisons, logic.

Each op is one ``defop`` declaration (kernels per layout, derivative per input, zero-preserving
trait). dtype rules follow torch: ``float`` ops turn integer input into the default float dtype,
``same`` ops keep the input dtype, comparisons and predicates give bool.
"""

import math

from .. import _dispatch
from .. import _dtype as D
from .._backend import CPU, writeable
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, defop, record_if_grad
from .._layout import strided
from .._tensor import Tensor
from .._variants import declare, method
from ..dense import _par_pointwise as _par
from ..autograd.grad_mode import GRAD_ENABLED
from ..autograd import profiler as _profiler
from ..autograd._tape import OpNode as _OpNode, SavedResult as _SavedResult
from ..dense import _threshold_bwd as _TB
from . import sparse_elementwise as _sp
from .sparse_values import dense_result_error, values_kernels
from ._util import check_tensor, check_tensor_or_number, is_scalar, with_out

S = (strided,)
SS = (strided, strided)
_grad_enabled = GRAD_ENABLED.get
_SCALAR_TYPES = _dispatch.SCALAR_TYPES
_ND = CPU.xp.ndarray  # (a NumPy array result: no scalar-type lookup)
_BF16 = D.bfloat16
_BOOL = D.bool
_new = object.__new__
_call_dense1 = _dispatch._call_dense1
_np_less_equal, _np_and = CPU.xp.less_equal, CPU.xp.bitwise_and
_I32, _I64 = CPU.xp.int32, CPU.xp.int64
_np_empty = CPU.xp.empty

# dtype rules
SAME, FLOAT, BOOL, REAL = "same", "float", "bool", "real"


def _unary_dtype(rule, dt, name):
    if rule is SAME:
        return dt
    if rule is REAL:  # abs/angle of complex input are real
        return dt.to_real() if dt.is_complex else (dt if rule is REAL and name == "abs" else _unary_dtype(FLOAT, dt, name))
    if rule is BOOL:
        return D.bool
    if dt.is_floating_point or dt.is_complex:
        return dt
    return D.get_default_dtype()


class Unary:
    """A declared unary op with its dtype rule; calling it runs the op."""

    __slots__ = ("op", "rule", "__name__", "__dict__", "int_ok", "fast")

    def __init__(self, op, rule, doc, int_ok=True):
        self.op = op
        self.rule = rule
        self.__name__ = op.name
        self.__doc__ = doc
        self.int_ok = int_ok
        self.fast = rule is SAME or rule is FLOAT  # a floating input keeps its dtype

    def __call__(self, input, *, out=None):
        # fast path: a strided floating tensor under a dtype-keeping rule goes straight to the
        # one-input kernel call (what ``call`` picks for it); profiling: via call
        if input.__class__ is Tensor and self.fast and out is None and input.layout is strided \
                and input.dtype.is_floating_point and _profiler.ACTIVE is None:
            return _call_dense1(self.op, input, (), input.dtype)
        check_tensor(input, self.__name__)
        dt = _unary_dtype(self.rule, input.dtype, self.__name__)
        if not self.int_ok and not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(
                f"{self.__name__}(): not implemented for dtype {input.dtype.name}; "
                "convert with .float() first"
            )
        compute = dt if self.rule is not BOOL and self.rule is not REAL else None
        r = call(self.op, (input,), (), dt, compute)
        return with_out(r, out, self.__name__) if out is not None else r


def unary(name, fn, grad=None, rule=SAME, zero_preserving=None, doc=None, int_ok=True, holomorphic=True, *,
          method=False, inplace=False):
    """Declare a unary elementwise op: ``fn(be, x)`` is its strided kernel. ``method=True``: also
    ``x.name()``; ``inplace=True``: also ``name_`` and ``x.name_()`` (and ``x.name()``): see
    ``_variants.py``.

    A zero-preserving op also works on COO and CSR: it maps over the stored values
    (``sparse_values.py``); the others raise on sparse input with the ``.to_dense()`` hint.
    """
    kernels = {S: fn}
    if zero_preserving:  # the sparse entries map the op itself (``u``, bound below) over the values
        kernels.update(values_kernels(lambda v: u(v), linear=name in _LINEAR))
    op = defop(name, kernels, grads={"input": grad} if grad else None,
               zero_preserving=zero_preserving, holomorphic=holomorphic)
    u = Unary(op, rule, doc or f"Elementwise ``{name}`` of ``input``.", int_ok)
    u.__doc__ = f"{name}(input, *, out=None) -> Tensor\n\n{u.__doc__} " + (
        "Works on COO and CSR tensors (on the stored values: it maps 0 to 0)." if zero_preserving
        else f"Strided only: {name} does not map 0 to 0 (sparse input raises NotImplementedError).")
    return declare(u, name, inplace, method or bool(inplace))


# f(a + b) == f(a) + f(b): these map the duplicates of an uncoalesced COO without coalescing
_LINEAR = frozenset(("neg", "deg2rad", "rad2deg", "conj", "conj_physical"))


def _zeros_grad(grad):
    return grad * 0


def _not_differentiable(name):
    def formula(grad):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")

    return formula


# ---- unary: sign-like and rounding (keep dtype) ----

abs = unary("abs", lambda be, x: be.xp.abs(x), lambda grad, input: grad * input.sgn(), REAL, True,
            inplace=True)
absolute = method(abs, "absolute", inplace=True)
neg = unary("neg", lambda be, x: be.xp.negative(x), lambda grad: -grad, SAME, True, inplace=True)
negative = method(neg, "negative", inplace=True)
def _sign_kernel(be, x):
    if x.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                                  "Please use torch.sgn instead.")
    return be.xp.sign(x)


sign = unary("sign", _sign_kernel, _zeros_grad, SAME, True, inplace=True)
sgn = unary("sgn", lambda be, x: be.xp.sign(x), lambda grad, input, result: _sgn_grad(grad, input, result),
            SAME, True, holomorphic=False, inplace=True)
square = unary("square", lambda be, x: be.xp.square(x), lambda grad, input: grad * 2 * input, SAME, True,
               inplace=True)


def _relu_grad(grad, result):
    """torch's threshold_backward: 0 where ``result <= 0``, else ``grad`` (an inf gradient stays
    out of the zeroed places; a NaN result passes its gradient). In a plain backward over
    float32/float64 CPU payloads of one shape, a bit mask on the payloads (issue 14): ``where``
    on a random sign pattern branches per element (128 x 64: ~40 us against ~4)."""
    dt = grad.dtype
    if (dt is D.float32 or dt is D.float64) and result.dtype is dt and not _grad_enabled() \
            and grad.layout is strided and result.layout is strided \
            and grad.device is CPU_DEVICE and result.device is CPU_DEVICE \
            and _profiler.ACTIVE is None and grad._data.shape == result._data.shape != ():
        ity = _I32 if dt is D.float32 else _I64
        # 0 where result <= 0 (True - 1), all bits set elsewhere (NaN compares False: kept)
        m = _np_less_equal(result._data, 0).astype(ity)
        m -= 1
        _np_and(m, grad._data.view(ity), out=m)
        return _dispatch.wrap(m.view(dt.np), dt, CPU_DEVICE, strided)
    if grad.layout is strided and result.layout is strided:
        return where(result <= 0, 0.0, grad)
    return grad * (result > 0)  # sparse: the stored pattern (relu maps 0 to 0)


relu = unary("relu", lambda be, x: be.xp.maximum(x, 0), _relu_grad, SAME, True, inplace=True)


def _relu_apply(node, grad_outputs):
    """ReluBackward0 in a plain backward of float32/float64 CPU payloads: the bit mask of
    ``_relu_grad`` on the saved result's payload, without the saved result's tensor and the
    formula's argument list (issue 14). Otherwise the formula runs (graph building, profiling)."""
    grad = grad_outputs[0]
    saved = node.saved
    if node._released or grad is None or grad.__class__ is not Tensor or len(saved) != 1 \
            or saved[0].__class__ is not _SavedResult or _grad_enabled() or _profiler.ACTIVE is not None:
        return _OpNode.apply(node, grad_outputs)
    s = saved[0]
    dt = grad.dtype
    g = grad._data
    if (dt is not D.float32 and dt is not D.float64) or s.dtype is not dt or grad.layout is not strided \
            or s.layout is not strided or grad.device is not CPU_DEVICE or s.device is not CPU_DEVICE \
            or g.shape != s.data.shape or g.shape == () or s.vc[0] != s.version:
        return _OpNode.apply(node, grad_outputs)  # (a modified result: the formula's error)
    r = s.data
    if r.size >= _TB.MIN_SIZE and r.flags.c_contiguous and g.flags.c_contiguous:
        k = _TB.kernel()  # one vectorized pass of selects (numba)
        if k is not None:
            out = _np_empty(r.shape, r.dtype)
            k(r.reshape(-1), g.reshape(-1), out.reshape(-1), dt.np.type(0))
            return [_dispatch.wrap(out, dt, CPU_DEVICE, strided)]
    ity = _I32 if dt is D.float32 else _I64
    m = _np_less_equal(r, 0).astype(ity)
    m -= 1
    _np_and(m, g.view(ity), out=m)
    return [_dispatch.wrap(m.view(dt.np), dt, CPU_DEVICE, strided)]


relu.op.node_cls = type(relu.op.node_cls.__name__, (relu.op.node_cls,),
                        {"__slots__": (), "apply": _relu_apply})
ceil = unary("ceil", lambda be, x: be.xp.ceil(x), _zeros_grad, SAME, True, inplace=True)
floor = unary("floor", lambda be, x: be.xp.floor(x), _zeros_grad, SAME, True, inplace=True)
trunc = unary("trunc", lambda be, x: be.xp.trunc(x), _zeros_grad, SAME, True, inplace=True)
fix = method(trunc, "fix", inplace=True)
frac = unary("frac", lambda be, x: x - be.xp.trunc(x), lambda grad: grad, SAME, True, int_ok=False,
             inplace=True)

# ---- unary: transcendental (integers compute in the default float dtype) ----

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)

sqrt = unary("sqrt", lambda be, x: be.xp.sqrt(x), lambda grad, result: grad / (2 * result), FLOAT, True,
             inplace=True)
rsqrt = unary("rsqrt", lambda be, x: 1 / be.xp.sqrt(x),
              lambda grad, result: grad * (-0.5) * result * result * result, FLOAT, False,
              inplace=True)
exp = unary("exp", lambda be, x: be.xp.exp(x), lambda grad, result: grad * result, FLOAT, False,
            inplace=True)
exp2 = unary("exp2", lambda be, x: be.xp.exp2(x), lambda grad, result: grad * result * _LN2, FLOAT, False,
             inplace=True)
expm1 = unary("expm1", lambda be, x: be.xp.expm1(x), lambda grad, result: grad * (result + 1), FLOAT, True,
              inplace=True)
log = unary("log", lambda be, x: be.xp.log(x), lambda grad, input: grad / input, FLOAT, False,
            inplace=True)
log2 = unary("log2", lambda be, x: be.xp.log2(x), lambda grad, input: grad / (input * _LN2), FLOAT, False,
             inplace=True)
log10 = unary("log10", lambda be, x: be.xp.log10(x), lambda grad, input: grad / (input * _LN10), FLOAT, False,
              inplace=True)
log1p = unary("log1p", lambda be, x: be.xp.log1p(x), lambda grad, input: grad / (input + 1), FLOAT, True,
              inplace=True)
sin = unary("sin", lambda be, x: be.xp.sin(x), lambda grad, input: grad * input.cos(), FLOAT, True,
            inplace=True)
cos = unary("cos", lambda be, x: be.xp.cos(x), lambda grad, input: -grad * input.sin(), FLOAT, False,
            inplace=True)
tan = unary("tan", lambda be, x: be.xp.tan(x), lambda grad, result: grad * (1 + result * result), FLOAT, True,
            inplace=True)
asin = unary("asin", lambda be, x: be.xp.arcsin(x),
             lambda grad, input: grad / (1 - input * input).sqrt(), FLOAT, True, inplace=True)
acos = unary("acos", lambda be, x: be.xp.arccos(x),
             lambda grad, input: -grad / (1 - input * input).sqrt(), FLOAT, False, inplace=True)
atan = unary("atan", lambda be, x: be.xp.arctan(x), lambda grad, input: grad / (1 + input * input), FLOAT, True,
             inplace=True)
sinh = unary("sinh", lambda be, x: be.xp.sinh(x), lambda grad, input: grad * input.cosh(), FLOAT, True,
             inplace=True)
cosh = unary("cosh", lambda be, x: be.xp.cosh(x), lambda grad, input: grad * input.sinh(), FLOAT, False,
             inplace=True)
tanh = unary("tanh", lambda be, x: be.xp.tanh(x), lambda grad, result: grad * (1 - result * result), FLOAT, True,
             inplace=True)
asinh = unary("asinh", lambda be, x: be.xp.arcsinh(x),
              lambda grad, input: grad / (input * input + 1).sqrt(), FLOAT, True, inplace=True)
acosh = unary("acosh", lambda be, x: be.xp.arccosh(x),
              lambda grad, input: grad / (input * input - 1).sqrt(), FLOAT, False, inplace=True)
atanh = unary("atanh", lambda be, x: be.xp.arctanh(x), lambda grad, input: grad / (1 - input * input), FLOAT, True,
              inplace=True)
arcsin = method(asin, "arcsin", inplace=True)
arccos = method(acos, "arccos", inplace=True)
arctan = method(atan, "arctan", inplace=True)
arcsinh = method(asinh, "arcsinh", inplace=True)
arccosh = method(acosh, "arccosh", inplace=True)
arctanh = method(atanh, "arctanh", inplace=True)
def _sigmoid_kernel(be, x):
    if x.dtype.kind == "c":
        return 1 / (1 + be.xp.exp(-x))
    if be.name == "cpu" and x.size >= 1 << 14:  # one fused numba loop for large arrays (kernel
        from ..nn._kernels import pointwise as fused  # floor; imported when first needed)

        return fused.sigmoid(be, x)
    return be.special.expit(x)


sigmoid = unary("sigmoid", _sigmoid_kernel, lambda grad, result: grad * result * (1 - result), FLOAT, False,
                inplace=True)
reciprocal = unary("reciprocal", lambda be, x: 1 / x, lambda grad, result: -grad * result * result, FLOAT, False,
                   inplace=True)
erf = unary("erf", lambda be, x: be.special.erf(x),
            lambda grad, input: grad * _2_SQRTPI * (-(input * input)).exp(), FLOAT, True,
            inplace=True)
erfc = unary("erfc", lambda be, x: be.special.erfc(x),
             lambda grad, input: -grad * _2_SQRTPI * (-(input * input)).exp(), FLOAT, False,
             inplace=True)
erfinv = unary("erfinv", lambda be, x: be.special.erfinv(x),
               lambda grad, result: grad * (math.sqrt(math.pi) / 2) * (result * result).exp(), FLOAT, True,
               inplace=True)
lgamma = unary("lgamma", lambda be, x: be.special.gammaln(x),
               lambda grad, input: grad * digamma(input), FLOAT, False, inplace=True)
digamma = unary("digamma", lambda be, x: be.special.digamma(x),
                lambda grad, input: grad * polygamma(1, input), FLOAT, False, inplace=True)
deg2rad = unary("deg2rad", lambda be, x: be.xp.deg2rad(x), lambda grad: grad * (math.pi / 180), FLOAT, True,
                inplace=True)
rad2deg = unary("rad2deg", lambda be, x: be.xp.rad2deg(x), lambda grad: grad * (180 / math.pi), FLOAT, True,
                inplace=True)
sinc = unary("sinc", lambda be, x: be.xp.sinc(x), lambda grad, input: grad * _sinc_grad(input), FLOAT, False,
             inplace=True)


def _sinc_grad(x):
    px = x * math.pi
    safe = where(x == 0, 1.0, x)
    d = (px.cos() * math.pi * safe - (safe * math.pi).sin()) / (safe * safe * math.pi)
    return where(x == 0, 0.0, d)


# ---- unary: predicates (bool results, never differentiable) ----

isnan = unary("isnan", lambda be, x: be.xp.isnan(x), None, BOOL, True, method=True)
isinf = unary("isinf", lambda be, x: be.xp.isinf(x), None, BOOL, True, method=True)
isfinite = unary("isfinite", lambda be, x: be.xp.isfinite(x), None, BOOL, False, method=True)
isposinf = unary("isposinf", lambda be, x: be.xp.isposinf(x), None, BOOL, True, method=True)
isneginf = unary("isneginf", lambda be, x: be.xp.isneginf(x), None, BOOL, True, method=True)
isreal = unary("isreal", lambda be, x: be.xp.isreal(x), None, BOOL, False, method=True)
signbit = unary("signbit", lambda be, x: be.xp.signbit(x), None, BOOL, True, method=True)
logical_not = unary("logical_not", lambda be, x: be.xp.logical_not(x), None, BOOL, False,
                    inplace=True)


def _bitwise_not_kernel(be, x):
    if x.dtype.kind == "c" or D.is_float_np(x.dtype):
        raise RuntimeError("bitwise_not(): only integer and bool tensors are supported")
    return be.xp.invert(x)


bitwise_not = unary("bitwise_not", _bitwise_not_kernel, None, SAME, False, inplace=True)


@method
def conj(input):
    """Complex conjugate; real tensors are returned as they are (as torch's lazy conj). COO and
    CSR: of the stored values."""
    check_tensor(input, "conj")
    return _conj(input) if input.dtype.is_complex else input


_conj = unary("conj", lambda be, x: be.xp.conj(x), lambda grad: grad.conj(), SAME, True)


@method(inplace=True)
def conj_physical(input, *, out=None):
    """conj_physical(input, *, out=None) -> Tensor

    The complex conjugate, computed (torch's ``ConjPhysicalBackward0``); a non-complex ``input``
    is returned as it is. COO and CSR: of the stored values."""
    check_tensor(input, "conj_physical")
    r = _conj_physical(input) if input.dtype.is_complex else input
    return with_out(r, out, "conj_physical") if out is not None else r


_conj_physical = unary("conj_physical", lambda be, x: be.xp.conj(x), lambda grad: grad.conj_physical(),
                       SAME, True)
angle = unary("angle", lambda be, x: be.xp.angle(x) if x.dtype.kind == "c" else be.xp.where(x < 0, be.xp.pi, 0.0).astype(x.dtype),
              lambda grad, input: _angle_grad(grad, input), REAL, True,
              method=True)  # angle(0) == 0


# torch's formulas for the non-holomorphic complex ops (gradients are dL/dz*)

def _sgn_grad(grad, input, result):
    if not input.dtype.is_complex:
        return grad * 0
    a = input.abs()
    g = (grad - result * result * grad.conj()) / (2 * where(a == 0, 1.0, a))
    return where(a == 0, 0.0, g)


def _angle_grad(grad, input):
    if not input.dtype.is_complex:
        return grad * 0
    a2 = input.real * input.real + input.imag * input.imag
    return where(a2 == 0, 0.0, grad * input * 1j / where(a2 == 0, 1.0, a2))


# ---- unary with parameters ----

_polygamma_op = defop(
    "polygamma", {S: lambda be, x, n: be.special.polygamma(be.xp.asarray(n), x)}, params=("n",),
    grads={"input": lambda grad, input, n: grad * polygamma(n + 1, input)}, zero_preserving=False,
)


def polygamma(n, input, *, out=None):
    """polygamma(n, input, *, out=None) -> Tensor

    The ``n``-th derivative of the digamma function of ``input``, elementwise (floating result).
    Strided only: polygamma does not map 0 to 0 (sparse input raises NotImplementedError)."""
    check_tensor(input, "polygamma")
    dt = _unary_dtype(FLOAT, input.dtype, "polygamma")
    return with_out(call(_polygamma_op, (input,), (int(n),), dt, dt), out, "polygamma")


def _round_kernel(be, x, decimals):
    if decimals and x.dtype == _BF16.np:  # x * 10**d in float32, one rounding at the end (torch)
        return be.xp.round(x.astype(be.xp.float32), decimals).astype(x.dtype)
    return be.xp.round(x, decimals)


_round_op = defop(
    "round", {S: _round_kernel,
              **values_kernels(lambda v, decimals: round(v, decimals=decimals))},
    params=("decimals",), grads={"input": lambda grad: grad * 0}, zero_preserving=True,
)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    """round(input, *, decimals=0, out=None) -> Tensor

    ``input`` rounded to ``decimals`` decimal places, halves to even (as torch). Works on COO and
    CSR tensors (on the stored values); its gradient is zero."""
    check_tensor(input, "round")
    return with_out(call(_round_op, (input,), (decimals,)), out, "round")


method(round, inplace=True)  # torch.round_, x.round(*, decimals=0), x.round_(*, decimals=0)


def _clamp_sparse_check(x, lo, hi):
    if (lo is not None and lo > 0) or (hi is not None and hi < 0):
        raise dense_result_error(
            "clamp", f"clamp(min={lo}, max={hi}) maps the implicit zeros to a nonzero value (0 is "
            "outside [min, max])", "x.to_dense().clamp(...)")


_clamp_op = defop(
    "clamp", {S: lambda be, x, lo, hi: be.xp.clip(x, lo, hi),
              **values_kernels(lambda v, lo, hi: clamp(v, lo, hi), check=_clamp_sparse_check)},
    params=("lo", "hi"),
    grads={"input": lambda grad, input, lo, hi: grad * _in_range(input, lo, hi)},
    node_name="ClampBackward1",  # torch's clamp(Scalar? min, Scalar? max) overload
)


def _in_range(x, lo, hi):
    if lo is None:
        return x <= hi
    if hi is None:
        return x >= lo
    return (x >= lo).logical_and(x <= hi)


@method(inplace=True)
def clamp(input, min=None, max=None, *, out=None):  # noqa: A002 - torch's names
    """clamp(input, min=None, max=None, *, out=None) -> Tensor

    ``input`` clamped into ``[min, max]`` (numbers or tensors; ``clip`` is an alias). Sparse COO/CSR
    input works when 0 lies in ``[min, max]`` (the implicit zeros stay zero), else it raises."""
    check_tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = input
        if min is not None:
            r = maximum(r, min)
        if max is not None:
            r = minimum(r, max)
        return with_out(r, out, "clamp")
    dt = input.dtype
    if (isinstance(min, float) or isinstance(max, float)) and not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    return with_out(call(_clamp_op, (input,), (min, max), dt, dt), out, "clamp")


clip = method(clamp, "clip", inplace=True)


@method(inplace=True)
def clamp_min(input, min):  # noqa: A002
    """clamp_min(input, min) -> Tensor

    ``clamp(input, min=min)``."""
    return clamp(input, min=min)


@method(inplace=True)
def clamp_max(input, max):  # noqa: A002
    """clamp_max(input, max) -> Tensor

    ``clamp(input, max=max)``."""
    return clamp(input, max=max)


_nan_to_num_op = defop(
    "nan_to_num",
    {S: lambda be, x, nan, posinf, neginf: be.xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
     **values_kernels(lambda v, nan, posinf, neginf: nan_to_num(v, nan, posinf, neginf))},
    params=("nan", "posinf", "neginf"),
    grads={"input": lambda grad, input: grad * input.isfinite()}, zero_preserving=True,
)


@method(inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) -> Tensor

    ``input`` with NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (the dtype's
    largest / lowest finite values by default). Works on COO and CSR tensors (stored values)."""
    check_tensor(input, "nan_to_num")
    return with_out(call(_nan_to_num_op, (input,), (nan, posinf, neginf)), out, "nan_to_num")


_logit_op = defop(
    "logit",
    {S: lambda be, x, eps: be.special.logit(x if eps is None else be.xp.clip(x, eps, 1 - eps))},
    params=("eps",),
    grads={"input": lambda grad, input, eps: _logit_grad(grad, input, eps)},
)


def _logit_grad(grad, x, eps):
    g = grad / (x * (1 - x))
    if eps is None:
        return g
    return where((x < eps).logical_or(x > 1 - eps), 0.0, g)


@method(inplace=True)
def logit(input, eps=None, *, out=None):
    """logit(input, eps=None, *, out=None) -> Tensor

    ``log(p / (1 - p))`` of ``input`` elementwise, ``input`` first clamped to ``[eps, 1 - eps]``
    when ``eps`` is given. Strided only (logit(0) is -inf, so a sparse result would be dense)."""
    check_tensor(input, "logit")
    dt = _unary_dtype(FLOAT, input.dtype, "logit")
    return with_out(call(_logit_op, (input,), (eps,), dt, dt), out, "logit")


# ---- binary arithmetic ----

PROMOTE, TRUE_DIV, COMPARE, LOGICAL, BITWISE = "promote", "true_div", "compare", "logical", "bitwise"


def _fast_inplace(ufunc_name):
    """The in-place forms of ``add``/``sub``/``mul``/``div`` (``@method(inplace=_fast_inplace(...))``):
    ``x.op_(other)`` writes straight into ``x`` with ``ufunc(x, other, out=x)`` when no graph is
    recorded and dtypes already agree (optimizer updates, ``+=`` on buffers); anything else,
    including every error case, takes the generic derived path."""
    cpu_ufunc = getattr(CPU.xp, ufunc_name)
    return lambda generic: _fast_op_(generic, cpu_ufunc, ufunc_name)


def _fast_op_(generic, cpu_ufunc, ufunc_name):
    name = generic.__name__

    def op_(self, other, **kwargs):
        plain = not kwargs or all(v is None or (k == "alpha" and v == 1) for k, v in kwargs.items())
        if (plain and self.__class__ is Tensor and self.layout is strided
                and self.dtype.is_floating_point and _profiler.ACTIVE is None):
            oc = other.__class__
            if oc is Tensor:
                ok = other.layout is strided and other.dtype is self.dtype and other.device is self.device
                b = other._data if ok else None
                rg = other._rg
            else:
                ok = oc is float or oc is int
                b = other
                rg = False
            if ok and not ((self._rg or rg) and _grad_enabled()):
                a = self._data
                try:
                    if self.device is CPU_DEVICE:
                        cpu_ufunc(a, b, out=a)
                    elif not writeable(a):  # CuPy has no read-only flag: generic path raises
                        return generic(self, other, **kwargs)
                    else:
                        getattr(_dispatch.get_backend(self.device).xp, ufunc_name)(a, b, out=a)
                except (ValueError, TypeError):
                    # a read-only view or a shape that does not fit: the generic path explains
                    return generic(self, other, **kwargs)
                _dispatch.bump_version(self)
                return self
        return generic(self, other, **kwargs)

    op_.__name__ = op_.__qualname__ = name
    op_.__doc__ = generic.__doc__
    return op_


def make_binary(op, rule, doc, ufunc_name=None):
    """The public function of a binary op with torch's promotion rule.

    Its fast path (two strided tensors of the same floating dtype on one device) skips promotion
    and the generic dispatcher, and on the CPU calls the NumPy ufunc directly (PERF-NOTES.md
    spike 1). A plain function, not a callable object: that saves ~60 ns per tiny op.
    """
    kernel = op.strided
    fast = rule in (PROMOTE, TRUE_DIV, COMPARE)  # a same-float-dtype result rule is trivial
    cpu_ufunc = getattr(CPU.xp, ufunc_name) if ufunc_name else None
    # from this many elements add/sub/mul/div may run on the thread policy's count (issue 14)
    par_min = _par.MIN_SIZE if ufunc_name in _par.OPS else 1 << 62
    compare = rule is COMPARE
    name = op.name
    bool_ok = name == "mul"  # a bool tensor operand promotes to the float dtype unchanged

    def fn(input, other, out=None):
        if input.__class__ is Tensor and fast and _profiler.ACTIVE is None:  # profiling: via call
            dt = input.dtype
            oc = other.__class__
            if dt.is_floating_point and input.layout is strided:
                if oc is Tensor:
                    odt = other.dtype
                    # float * bool mask (relu's backward): NumPy keeps the float dtype, as torch
                    ok = (odt is dt or (odt is _BOOL and bool_ok and dt is not _BF16)) \
                        and other.layout is strided and input.device is other.device
                    b = other._data
                    other_rg = other._rg
                else:  # a Python number never changes a floating dtype (torch's wrapped numbers)
                    # (bfloat16 with a Python number: NumPy answers float32; the slow path casts)
                    ok = (oc is float or oc is int) and dt is not _BF16
                    b = other
                    other_rg = False
                if ok:
                    dev = input.device
                    try:
                        if dev is CPU_DEVICE and cpu_ufunc is not None:
                            a = input._data
                            if a.size < par_min or (data := _par.binary(ufunc_name, a, b)) is None:
                                data = cpu_ufunc(a, b)
                        else:
                            data = kernel(_dispatch.get_backend(dev), input._data, b)
                    except (ValueError, TypeError) as e:
                        raise _dispatch.kernel_error(op, (input, other), e) from None
                    if data.__class__ is not _ND and data.__class__ in _SCALAR_TYPES:
                        data = _dispatch.get_backend(dev).xp.asarray(data)
                    t = _new(Tensor)
                    t._data = data
                    t.dtype = D.bool if compare else dt
                    t.device = dev
                    t.layout = strided
                    t._rg = False
                    t.grad_fn = None
                    t._vc = None
                    t._extra = None
                    if input._rg or other_rg:  # (record never records a comparison's bool)
                        record_if_grad(op, t, (input, other), ())
                    if out is not None:
                        return with_out(t, out, name)
                    return t
        return _binary_slow(op, rule, input, other, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.op = op
    fn.rule = rule
    return fn


def _binary_slow(op, rule, input, other, out):
    name = op.name
    check_tensor_or_number(input, name, "input")
    check_tensor_or_number(other, name, "other")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): at least one of 'input' and 'other' must be a Tensor")
    if name == "sub":
        _check_bool_sub(input, other)
    dt = D.result_type(input, other)
    if rule is TRUE_DIV and not (dt.is_floating_point or dt.is_complex):
        dt = D.get_default_dtype()
    if rule is BITWISE and (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}(): only integer and bool tensors are supported, got {dt.name}")
    out_dt = D.bool if rule is COMPARE or rule is LOGICAL else dt
    if dt is _BF16:  # torch rounds a number to bfloat16, but keeps mul/div's second one in float
        input = _bf16_number(input)
        if name != "mul" and name != "div":
            other = _bf16_number(other)
    if rule is LOGICAL:
        r = call(op, (input, other), (), D.bool, None)
    else:
        r = call(op, (_scalar_as(input, dt), _scalar_as(other, dt)), (), out_dt, dt)
    return with_out(r, out, name) if out is not None else r


def _bf16_number(x):
    if isinstance(x, Tensor) or isinstance(x, complex):
        return x
    return float(_BF16.np.type(D.float32.np.type(x)))


def _scalar_as(x, dt):
    """A Python scalar operand, converted to the compute dtype's kind (NumPy keeps it weak)."""
    if isinstance(x, Tensor):
        return x
    if dt is D.bool:
        return bool(x)
    if dt.is_complex:
        return complex(x)
    if dt.is_floating_point:
        return float(x)
    if isinstance(x, float):
        return x
    return int(x)


def binary(name, fn, grads=None, rule=PROMOTE, zero_preserving=None, doc=None, sparse=None, *,
           method=False, inplace=False, node_name=None):
    """Declare a binary op. ``fn`` is the strided kernel, or the name of a ``be.xp`` ufunc;
    ``sparse``: a function giving the kernel-table entries for sparse operands
    (``sparse_elementwise.py``), merged into the declaration. ``method`` / ``inplace``: its
    Tensor method and in-place variant, as for :func:`unary`. ``node_name``: as for ``defop``."""
    ufunc_name = None
    if isinstance(fn, str):
        ufunc_name = fn
        fn = _ufunc_kernel(fn)
    kernels = {SS: fn}
    if sparse is not None:
        kernels.update(sparse())
    op = defop(name, kernels, inputs=("input", "other"), grads=grads,
               zero_preserving=zero_preserving, node_name=node_name)
    fn = make_binary(op, rule, doc or f"Elementwise ``{name}`` of ``input`` and ``other`` (broadcasting).",
                     ufunc_name)
    return declare(fn, name, inplace, method or bool(inplace))


def _ufunc_kernel(name):
    def kernel(be, a, b):
        return getattr(be.xp, name)(a, b)

    kernel.__name__ = name
    return kernel


_add = binary("add", "add",
              {"input": lambda grad: grad, "other": lambda grad: grad}, zero_preserving=True,
              sparse=lambda: _sp.add_kernels(1))
_sub = binary("sub", "subtract",
              {"input": lambda grad: grad, "other": lambda grad: -grad}, zero_preserving=True,
              sparse=lambda: _sp.add_kernels(-1))
mul = binary("mul", "multiply",
             {"input": lambda grad, other: grad * other, "other": lambda grad, input: grad * input},
             zero_preserving=True, sparse=lambda: _sp.mul_kernels(),
             doc="Elementwise product of ``input`` and ``other`` (broadcasting). A COO or CSR "
                 "operand keeps the result sparse (sparse * strided, sparse * sparse, "
                 "sparse * number).", inplace=_fast_inplace("multiply"))
multiply = method(mul, "multiply", inplace=True)
_div = binary("div", "true_divide",
              {"input": lambda grad, other: grad / other,
               "other": lambda grad, input, other: -grad * input / (other * other)}, TRUE_DIV,
              sparse=lambda: _sp.div_kernels())
true_divide = method(_div, "true_divide", inplace=True)


def _floor_div_kernel(be, a, b):
    return be.xp.floor_divide(a, b)


_floor_divide = binary("floor_divide", _floor_div_kernel,
                       {"input": _zeros_grad, "other": _zeros_grad})
_trunc_divide = binary("trunc_divide", lambda be, a, b: be.xp.trunc(be.xp.true_divide(a, b)).astype(
    be.xp.result_type(a, b)), {"input": _zeros_grad, "other": _zeros_grad})
remainder = binary("remainder", lambda be, a, b: be.xp.remainder(a, b),
                   {"input": lambda grad: grad,
                    "other": lambda grad, input, other: -grad * floor_divide(input, other)},
                    inplace=True)
fmod = binary("fmod", lambda be, a, b: be.xp.fmod(a, b),
              {"input": lambda grad: grad,
               "other": lambda grad, input, other: -grad * _trunc_divide(input, other)},
               inplace=True)
_POW_GRADS = {
    "input": lambda grad, input, other: grad * other * input ** (other - 1),
    "other": lambda grad, result, input: grad * result * where(input == 0, 0.0, input).log(),
}
# torch's overloads, by node: tensor ** tensor (PowBackward1), number ** tensor (PowBackward2);
# tensor ** number is ``_pow_scalar`` (PowBackward0)
_pow = binary("pow", lambda be, a, b: be.xp.power(a, b), _POW_GRADS, node_name="PowBackward1")
_pow_base = binary("pow", lambda be, a, b: be.xp.power(a, b), _POW_GRADS, node_name="PowBackward2")
maximum = binary("maximum", "maximum",
                 {"input": lambda grad, input, other: grad * _max_mask(input, other),
                  "other": lambda grad, input, other: grad * _max_mask(other, input)}, method=True)
minimum = binary("minimum", "minimum",
                 {"input": lambda grad, input, other: grad * _max_mask(other, input),
                  "other": lambda grad, input, other: grad * _max_mask(input, other)}, method=True)
fmax = binary("fmax", lambda be, a, b: be.xp.fmax(a, b),
              {"input": lambda grad, input, other: grad * _max_mask(input, other),
               "other": lambda grad, input, other: grad * _max_mask(other, input)}, method=True)
fmin = binary("fmin", lambda be, a, b: be.xp.fmin(a, b),
              {"input": lambda grad, input, other: grad * _max_mask(other, input),
               "other": lambda grad, input, other: grad * _max_mask(input, other)}, method=True)
atan2 = binary("atan2", lambda be, a, b: be.xp.arctan2(a, b),
               {"input": lambda grad, input, other: grad * other / (input * input + other * other),
                "other": lambda grad, input, other: -grad * input / (input * input + other * other)},
               TRUE_DIV, inplace=True)
arctan2 = method(atan2, "arctan2")
hypot = binary("hypot", lambda be, a, b: be.xp.hypot(a, b),
               {"input": lambda grad, input, result: grad * input / result,
                "other": lambda grad, other, result: grad * other / result}, TRUE_DIV, inplace=True)
def _xlogy_kernel(be, a, b):
    # scipy's xlogy has no float32 loop for (array, Python float): keep the array's dtype
    r = be.special.xlogy(a, b)
    ref = a if hasattr(a, "dtype") else b
    return r if r.dtype == ref.dtype else r.astype(ref.dtype)


xlogy = binary("xlogy", _xlogy_kernel,
               {"input": lambda grad, input, other: grad * where(input == 0, 0.0, other.log()),
                "other": lambda grad, input, other: grad * input / other}, TRUE_DIV, inplace=True)
def _logaddexp_kernel(be, a, b):
    xp = be.xp
    if xp.result_type(a, b).kind != "c":
        return xp.logaddexp(a, b)
    first = xp.real(a) >= xp.real(b)  # complex: factor out the term of larger real part
    big, small = xp.where(first, a, b), xp.where(first, b, a)
    return big + xp.log1p(xp.exp(small - big))


logaddexp = binary("logaddexp", _logaddexp_kernel,
                   {"input": lambda grad, input, other: grad * (input - other).sigmoid(),
                    "other": lambda grad, input, other: grad * (other - input).sigmoid()}, TRUE_DIV,
                    method=True)
copysign = binary("copysign", lambda be, a, b: be.xp.copysign(a, b),
                  {"input": lambda grad, input, result: grad * where(input == 0, 0.0, result / where(input == 0, 1.0, input)),
                   "other": _zeros_grad}, TRUE_DIV, inplace=True)
heaviside = binary("heaviside", lambda be, a, b: be.xp.heaviside(a, b),
                   {"input": _not_differentiable("heaviside"), "other": _not_differentiable("heaviside")})


def _max_mask(a, b):
    """1 where a > b, 0.5 where equal (torch splits the gradient of a tie), 0 elsewhere."""
    return (a > b) + (a == b) * 0.5


# ---- comparisons and logic (bool results) ----

eq = binary("eq", "equal", rule=COMPARE, inplace=True)
ne = binary("ne", "not_equal", rule=COMPARE, inplace=True)
lt = binary("lt", "less", rule=COMPARE, inplace=True)
le = binary("le", "less_equal", rule=COMPARE, inplace=True)
gt = binary("gt", "greater", rule=COMPARE, inplace=True)
ge = binary("ge", "greater_equal", rule=COMPARE, inplace=True)
greater = method(gt, "greater")
less = method(lt, "less")
greater_equal = method(ge, "greater_equal")
less_equal = method(le, "less_equal")
not_equal = method(ne, "not_equal")
logical_and = binary("logical_and", lambda be, a, b: be.xp.logical_and(a, b), rule=LOGICAL,
                     inplace=True)
logical_or = binary("logical_or", lambda be, a, b: be.xp.logical_or(a, b), rule=LOGICAL,
                    inplace=True)
logical_xor = binary("logical_xor", lambda be, a, b: be.xp.logical_xor(a, b), rule=LOGICAL,
                     inplace=True)
bitwise_and = binary("bitwise_and", lambda be, a, b: be.xp.bitwise_and(a, b), rule=BITWISE,
                     inplace=True)
bitwise_or = binary("bitwise_or", lambda be, a, b: be.xp.bitwise_or(a, b), rule=BITWISE,
                    inplace=True)
bitwise_xor = binary("bitwise_xor", lambda be, a, b: be.xp.bitwise_xor(a, b), rule=BITWISE,
                     inplace=True)


# ---- public binary functions with torch's extra arguments ----

@method(inplace=_fast_inplace("add"))
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion. COO and CSR: sparse +
    sparse stays sparse (CSR + CSR is CSR, else COO), sparse + strided is strided; a sparse tensor
    plus a nonzero number raises NotImplementedError (the result would be dense)."""
    if alpha != 1 and _bf16_alpha(input, other):  # torch: alpha in bfloat16, a + alpha * b in float
        r = _add(_float32(input), mul(other.float(), _bf16_number(alpha))).to(_BF16)
        return r if out is None else with_out(r, out, "add")
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _add(input, other, out=out)


def _check_bool_sub(input, other):
    """torch refuses a bool tensor on either side of a subtraction."""
    a = isinstance(input, Tensor) and input.dtype is D.bool
    b = isinstance(other, Tensor) and other.dtype is D.bool
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )


@method(inplace=_fast_inplace("subtract"))
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` with broadcasting and type promotion; COO and CSR operands as
    :func:`add`."""
    _check_bool_sub(input, other)
    if alpha != 1 and _bf16_alpha(input, other):  # as add
        r = _sub(_float32(input), mul(other.float(), _bf16_number(alpha))).to(_BF16)
        return r if out is None else with_out(r, out, "sub")
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _sub(input, other, out=out)


def _bf16_alpha(input, other):
    return isinstance(other, Tensor) and isinstance(input, Tensor) and D.result_type(input, other) is _BF16


def _float32(x):
    return x.float() if isinstance(x, Tensor) else x


subtract = method(sub, "subtract", inplace=True)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (the reflected ``-``)."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    if input.layout is not strided:  # scalar - sparse: raises unless 0 (never densifies silently)
        return _sub(other, input if alpha == 1 else mul(input, alpha))
    return sub(_as_tensor_like(other, input), input, alpha=alpha)


def _as_tensor_like(x, like):
    from .creation import scalar_tensor

    return scalar_tensor(x, like)


@method(inplace=_fast_inplace("true_divide"))
def div(input, other, *, rounding_mode=None, out=None):
    """True division, or rounded with ``rounding_mode`` in (None, 'trunc', 'floor'). A COO or
    CSR ``input`` divided by a number or a strided tensor stays sparse; dividing by a sparse
    tensor raises NotImplementedError (its implicit zeros)."""
    if rounding_mode is None:
        return _div(input, other, out=out)
    if rounding_mode == "floor":
        return _floor_divide(input, other, out=out)
    if rounding_mode == "trunc":
        return _trunc_divide(input, other, out=out)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


divide = method(div, "divide", inplace=True)


@method(inplace=True)
def floor_divide(input, other, *, out=None):
    """floor_divide(input, other, *, out=None) -> Tensor

    ``input / other`` rounded down (``div(input, other, rounding_mode='floor')``), with type
    promotion and broadcasting. Strided tensors only."""
    return _floor_divide(input, other, out=out)


def rdiv(input, other):
    if input.dtype is _BF16 and not isinstance(other, Tensor):  # torch: reciprocal() * other
        return mul(reciprocal(input), other)
    return _div(_as_tensor_like(other, input), input)


def rfloordiv(input, other):
    return _floor_divide(_as_tensor_like(other, input), input)


def rremainder(input, other):
    return remainder(_as_tensor_like(other, input), input)


def _pow_sparse_check(x, exponent):
    e = exponent.real if isinstance(exponent, complex) and exponent.imag == 0 else exponent  # complex x ** 2
    if isinstance(e, complex) or not e > 0:
        raise dense_result_error(
            "pow", f"0 ** {exponent} is not 0 (only a positive exponent keeps the implicit zeros "
            "zero)", f"x.to_dense().pow({exponent})")


_pow_scalar = defop(
    "pow", {S: lambda be, x, e: be.xp.power(x, e),
            **values_kernels(lambda v, e: pow(v, e), check=_pow_sparse_check)},
    params=("exponent",),
    grads={"input": lambda grad, input, exponent: _pow_scalar_grad(grad, input, exponent)},
)


def _pow_scalar_grad(grad, input, exponent):
    if exponent == 0:
        return grad * 0
    if exponent == 1:
        return grad
    if exponent == 2:
        return grad * 2 * input
    return grad * exponent * input ** (exponent - 1)


@method(inplace=True)
def pow(input, exponent, *, out=None):  # noqa: A001 - torch's name
    """``input ** exponent`` (either may be a Python number)."""
    if isinstance(input, Tensor) and is_scalar(exponent) and not isinstance(exponent, bool):
        dt = D.result_type(input, exponent)
        if not (dt.is_floating_point or dt.is_complex) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        r = call(_pow_scalar, (input,), (_scalar_as(exponent, dt),), dt, dt)
        return with_out(r, out, "pow")
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return _pow_base(_as_tensor_like(input, exponent), exponent, out=out)
    return _pow(input, exponent, out=out)


def rpow(input, other):
    """``other ** input`` for a Python number ``other``."""
    return _pow_base(_as_tensor_like(other, input), input)


@method
def float_power(input, exponent, *, out=None):
    """``pow`` computed in float64 (complex128 for complex input)."""
    dt = D.complex128 if (getattr(input, "dtype", None) or D.float64).is_complex else D.float64
    input = input.to(dt) if isinstance(input, Tensor) else input
    exponent = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return pow(input, exponent, out=out)


# ---- where and composites ----

_where_op = defop(
    "where", {(strided,) * 3: lambda be, c, a, b: be.xp.where(c, a, b)},
    inputs=("condition", "input", "other"),
    grads={"input": lambda grad, condition: where(condition, grad, 0.0),
           "other": lambda grad, condition: where(condition, 0.0, grad)},
)


def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (broadcasting)."""
    if input is None and other is None:  # nonzero (the indexing family, above this one)
        check_tensor(condition, "nonzero")
        return condition.nonzero(as_tuple=True)
    check_tensor(condition, "where", "condition")
    if condition.dtype is not D.bool:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name}"
        )
    check_tensor_or_number(input, "where", "input")
    check_tensor_or_number(other, "where", "other")
    dt = D.result_type(input, other)
    r = call(_where_op, (condition, _scalar_as(input, dt), _scalar_as(other, dt)), (), dt, None)
    return with_out(r, out, "where")


@method(inplace=True)
def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``."""
    return with_out(input + weight * (end - input), out, "lerp")


@method(inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    return with_out(input + value * tensor1 * tensor2, out, "addcmul")


@method(inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``."""
    return with_out(input + value * tensor1 / tensor2, out, "addcdiv")


_isclose_op = defop(
    "isclose",
    {SS: lambda be, a, b, rtol, atol, equal_nan: be.xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)},
    inputs=("input", "other"), params=("rtol", "atol", "equal_nan"),
)


@method
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (bool tensor)."""
    check_tensor(input, "isclose")
    check_tensor(other, "isclose", "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.scalar_name} did not match {other.dtype.scalar_name} "
                           "(isclose/allclose compare tensors of one dtype: convert one with .to())")
    return call(_isclose_op, (input, other), (rtol, atol, equal_nan), D.bool, None)


@method
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@method
def equal(input, other):
    """True if both tensors have the same shape and elements."""
    check_tensor(input, "equal")
    check_tensor(other, "equal", "other")
    return tuple(input.shape) == tuple(other.shape) and bool(eq(input, other).all().item())


def _public_names(namespace, exclude):
    """Public op names of a module: declared ops and functions defined by op modules."""
    out = []
    for n, v in namespace.items():
        if n.startswith("_") or n in exclude:
            continue
        if isinstance(v, Unary) or getattr(v, "__module__", "").startswith("sparsetorch._ops"):
            if callable(v) and not isinstance(v, type):
                out.append(n)
    return out


__all__ = _public_names(globals(), {"unary", "binary", "make_binary", "call", "defop", "record", "wrap",
                                    "check_tensor", "check_tensor_or_number",
                                    "is_scalar", "with_out", "dense_result_error", "values_kernels"})
