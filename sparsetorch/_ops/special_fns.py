"""Elementwise special functions behind ``torch.special`` (Bessel, normal CDF, gamma family).

Each is one ``defop`` through ``pointwise.unary``/``binary``, with its kernel in ``be.special``
(scipy.special on the CPU) and torch's derivative formulas. Only the names torch also has at the
top level (``i0``, ``igamma``, ``igammac``, ``mvlgamma``) are exported from here; the rest are
reached through ``sparsetorch.special``. As torch, integer inputs compute in the default float
dtype; the Bessel functions of ``torch.special`` (``bessel_j0`` ...) are not differentiable.
"""

import math

from .. import _dtype as D
from .._tensor import Tensor
from .._variants import method
from ._util import check_tensor, with_out
from .pointwise import FLOAT, TRUE_DIV, binary, lgamma, sgn, unary, where

_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


def _not_implemented(name):
    """torch's message for an input whose derivative it does not implement."""
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return formula


def _like(r, a, b):
    """``r`` in the dtype of the array operand: scipy computes in float64 when an operand is a
    Python number or an integer degree, and the binary fast path labels the payload as is."""
    dt = a.dtype if hasattr(a, "dtype") else b.dtype
    return r if r.dtype == dt else r.astype(dt)


def _safe(x):
    """``x`` with zeros replaced by 1, so a formula's 0/0 branch stays finite under ``where``."""
    return where(x == 0, 1.0, x)


# ---- normal distribution and error functions ----

entr = unary("entr", lambda be, x: be.special.entr(x),
             lambda grad, input: -grad * (input.log() + 1), FLOAT, True,
             "Entropy ``-x * ln(x)`` elementwise (0 at 0, -inf for negative ``x``).")
ndtr = unary("ndtr", lambda be, x: be.special.ndtr(x),
             lambda grad, input: grad * ((input * input) * -0.5).exp() / _SQRT_2PI, FLOAT, False,
             "The area under the standard Gaussian density from -inf to ``input``.")
ndtri = unary("ndtri", lambda be, x: be.special.ndtri(x),
              lambda grad, result: grad * _SQRT_2PI * ((result * result) * 0.5).exp(), FLOAT, False,
              "The inverse of :func:`ndtr`: the ``input`` quantile of the standard Gaussian.")
# d/dx log ndtr(x) = pdf(x) / ndtr(x), formed as exp(log pdf - log ndtr) so it stays finite far
# in the left tail, where both pdf and ndtr underflow
log_ndtr = unary("log_ndtr", lambda be, x: be.special.log_ndtr(x),
                 lambda grad, input, result: grad * ((input * input) * -0.5 - _LOG_SQRT_2PI - result).exp(),
                 FLOAT, False, "The log of the area under the standard Gaussian density up to ``input``.")
erfcx = unary("erfcx", lambda be, x: be.special.erfcx(x),
              lambda grad, input, result: grad * (2 * input * result - _2_SQRTPI), FLOAT, False,
              "The scaled complementary error function ``exp(x**2) * erfc(x)``.")

# ---- modified Bessel functions of the first kind (differentiable, as torch) ----

i0 = unary("i0", lambda be, x: be.special.i0(x), lambda grad, input: grad * i1(input), FLOAT, False,
           "The zeroth order modified Bessel function of the first kind.", inplace=True)
i0e = unary("i0e", lambda be, x: be.special.i0e(x),
            lambda grad, input, result: grad * (i1e(input) - sgn(input) * result), FLOAT, False,
            "The exponentially scaled zeroth order modified Bessel function ``exp(-|x|) * i0(x)``.")


def _i1_backward(grad, input, result):
    # i1'(x) = i0(x) - i1(x)/x, whose limit at 0 is 1/2
    return grad * where(input == 0, 0.5, i0(input) - result / _safe(input))


def _i1e_backward(grad, input, result):
    # (exp(-|x|) i1)' = i0e - i1e/x - sign(x) i1e, whose limit at 0 is 1/2
    return grad * where(input == 0, 0.5, i0e(input) - result / _safe(input) - sgn(input) * result)


i1 = unary("i1", lambda be, x: be.special.i1(x), _i1_backward, FLOAT, True,
           "The first order modified Bessel function of the first kind.")
i1e = unary("i1e", lambda be, x: be.special.i1e(x), _i1e_backward, FLOAT, True,
            "The exponentially scaled first order modified Bessel function ``exp(-|x|) * i1(x)``.")

# ---- Bessel and Airy functions (no derivative in torch) ----

bessel_j0 = unary("bessel_j0", lambda be, x: be.special.j0(x), None, FLOAT, False,
                  "The Bessel function of the first kind of order 0.")
bessel_j1 = unary("bessel_j1", lambda be, x: be.special.j1(x), None, FLOAT, True,
                  "The Bessel function of the first kind of order 1.")
bessel_y0 = unary("bessel_y0", lambda be, x: be.special.y0(x), None, FLOAT, False,
                  "The Bessel function of the second kind of order 0.")
bessel_y1 = unary("bessel_y1", lambda be, x: be.special.y1(x), None, FLOAT, False,
                  "The Bessel function of the second kind of order 1.")
modified_bessel_i0 = unary("modified_bessel_i0", lambda be, x: be.special.i0(x), None, FLOAT, False,
                           "The modified Bessel function of the first kind of order 0.")
modified_bessel_i1 = unary("modified_bessel_i1", lambda be, x: be.special.i1(x), None, FLOAT, True,
                           "The modified Bessel function of the first kind of order 1.")
modified_bessel_k0 = unary("modified_bessel_k0", lambda be, x: be.special.k0(x), None, FLOAT, False,
                           "The modified Bessel function of the second kind of order 0.")
modified_bessel_k1 = unary("modified_bessel_k1", lambda be, x: be.special.k1(x), None, FLOAT, False,
                           "The modified Bessel function of the second kind of order 1.")
scaled_modified_bessel_k0 = unary(
    "scaled_modified_bessel_k0", lambda be, x: be.special.k0e(x), None, FLOAT, False,
    "The exponentially scaled modified Bessel function of the second kind of order 0.")
scaled_modified_bessel_k1 = unary(
    "scaled_modified_bessel_k1", lambda be, x: be.special.k1e(x), None, FLOAT, False,
    "The exponentially scaled modified Bessel function of the second kind of order 1.")
spherical_bessel_j0 = unary("spherical_bessel_j0", lambda be, x: be.special.spherical_jn(0, x), None,
                            FLOAT, False, "The spherical Bessel function of the first kind of order 0.")
airy_ai = unary("airy_ai", lambda be, x: be.special.airy(x)[0], None, FLOAT, False,
                "The Airy function ``Ai(input)``.")

# ---- binary: xlog1py, Hurwitz zeta, regularized incomplete gamma ----

xlog1py = binary(
    "xlog1py", lambda be, a, b: _like(be.special.xlog1py(a, b), a, b),
    {"input": lambda grad, input, other: grad * where(input == 0, 0.0, other.log1p()),
     "other": lambda grad, input, other: grad * input / (other + 1)}, TRUE_DIV,
    doc="``input * log1p(other)``, 0 where ``input`` is 0 (even if ``other`` is nan or -1).")
zeta = binary(
    "zeta", lambda be, a, b: _like(be.special.zeta(a, b), a, b),
    {"input": _not_implemented("zeta"),
     "other": lambda grad, input, other: grad * -input * zeta(input + 1.0, other)}, TRUE_DIV,
    doc="The Hurwitz zeta function ``sum_k (k + other) ** -input``.")


def _gammainc_other_backward(grad, input, other):
    # d/dx P(a, x) = x**(a-1) exp(-x) / Gamma(a), formed in log space against overflow
    return grad * ((input - 1) * other.log() - other - lgamma(input)).exp()


_igamma = binary(
    "igamma", lambda be, a, b: be.special.gammainc(a, b),
    {"input": _not_implemented("igamma: input"), "other": _gammainc_other_backward}, TRUE_DIV,
    doc="The regularized lower incomplete gamma function ``P(input, other)``.")
_igammac = binary(
    "igammac", lambda be, a, b: be.special.gammaincc(a, b),
    {"input": _not_implemented("igammac: input"),
     "other": lambda grad, input, other: -_gammainc_other_backward(grad, input, other)}, TRUE_DIV,
    doc="The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``.")


def _both_tensors(name, input, other):
    # unlike most binary ops, torch's igamma/igammac take no Python numbers
    for arg, x in (("input", input), ("other", other)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}; "
                            "wrap numbers with torch.tensor(...)")


@method
def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma function ``P(input, other)``; differentiable in
    ``other`` only (as torch)."""
    _both_tensors("igamma", input, other)
    return _igamma(input, other, out=out)


@method
def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``;
    differentiable in ``other`` only (as torch)."""
    _both_tensors("igammac", input, other)
    return _igammac(input, other, out=out)


# ---- multivariate log-gamma (composite: lgamma gives the derivative) ----

@method
def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``, elementwise:
    ``p (p - 1) / 4 * log(pi) + sum_{i=0}^{p-1} lgamma(input - i / 2)``."""
    check_tensor(input, "mvlgamma")
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"mvlgamma(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("mvlgamma(): p has to be greater than or equal to 1, got "
                           f"p={p}; pass a positive dimension")
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    r = lgamma(x)
    for i in range(1, p):
        r = r + lgamma(x - i / 2)
    r = r + (p * (p - 1) / 4) * math.log(math.pi)
    return with_out(r, out, "mvlgamma")


# ---- orthogonal polynomials of degree n (no derivative in torch) ----

def _degree(be, n):
    """torch truncates a non-integer degree; integer degrees take scipy's exact recurrences."""
    return be.xp.trunc(be.xp.asarray(n)).astype("int64")


def _polynomial(name, evaluate, shift=False):
    def kernel(be, x, n):
        k = _degree(be, n)
        if shift:  # the shifted polynomials live on [0, 1]: P*_n(x) = P_n(2x - 1)
            x = 2 * x - 1
        return _like(be.xp.where(k < 0, 0, evaluate(be.special, be.xp.maximum(k, 0), x)), x, n)

    return binary(name, kernel, None, TRUE_DIV,
                  doc=f"The {name.replace('_', ' ')} of degree ``n`` at ``input`` (``n < 0`` gives 0).")


def _chebyshev_v(sp, k, x):  # V_n = U_n - U_{n-1}, with U_{-1} = 0
    return sp.eval_chebyu(k, x) - sp.eval_chebyu(k - 1, x) * (k > 0)


def _chebyshev_w(sp, k, x):  # W_n = U_n + U_{n-1}
    return sp.eval_chebyu(k, x) + sp.eval_chebyu(k - 1, x) * (k > 0)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", lambda sp, k, x: sp.eval_chebyt(k, x))
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", lambda sp, k, x: sp.eval_chebyu(k, x))
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", _chebyshev_v)
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", _chebyshev_w)
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t",
                                             lambda sp, k, x: sp.eval_chebyt(k, x), True)
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u",
                                             lambda sp, k, x: sp.eval_chebyu(k, x), True)
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", _chebyshev_v, True)
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", _chebyshev_w, True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda sp, k, x: sp.eval_hermite(k, x))
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda sp, k, x: sp.eval_hermitenorm(k, x))
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", lambda sp, k, x: sp.eval_laguerre(k, x))
legendre_polynomial_p = _polynomial("legendre_polynomial_p", lambda sp, k, x: sp.eval_legendre(k, x))


__all__ = ["i0", "igamma", "igammac", "mvlgamma"]
