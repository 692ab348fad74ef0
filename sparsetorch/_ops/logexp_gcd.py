"""Pointwise and cumulative ops of torch's top level beyond ``pointwise.py``: logaddexp2,
logcumsumexp, gcd, lcm.

logaddexp2, gcd and lcm are binary ops declared with pointwise.binary (broadcasting, type
promotion, out=); logcumsumexp is one defop whose backward is a pair of adjoint ops, so its
derivatives of any order are available. Strided layout only: a sparse input gets the
dispatcher's clear NotImplementedError.
"""

import math

from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from .._variants import method
from . import pointwise as _pw
from ._reduce import quiet
from ._util import check_tensor, norm_dim, with_out

__all__ = ["gcd", "lcm", "logaddexp2", "logcumsumexp"]

S = (strided,)


# ---- logaddexp2, logcumsumexp, gcd, lcm ----

_LN2 = math.log(2.0)


def _floats_only(t, fname):
    if isinstance(t, Tensor) and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for '{t.dtype}': {fname} "
                                  f"takes floating-point input; convert it with .float() first")


_logaddexp2 = _pw.binary(
    "logaddexp2", lambda be, a, b: be.xp.logaddexp2(a, b),
    {"input": lambda grad, input, other: grad * ((input - other) * _LN2).sigmoid(),
     "other": lambda grad, input, other: grad * ((other - input) * _LN2).sigmoid()},
    _pw.TRUE_DIV, doc="Logarithm of the sum of exponentiations of the inputs in base-2.")


@method
def logaddexp2(input, other, *, out=None):
    """Logarithm of the sum of exponentiations of the inputs in base-2:
    ``log2(2**input + 2**other)``, computed stably."""
    _floats_only(input, "logaddexp2")
    _floats_only(other, "logaddexp2")
    return _logaddexp2(input, other, out=out)


def _logcumsumexp_kernel(be, x, dim):
    xp = be.xp
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind == "c":
        return _complex_scan(be, x, dim, False)
    return xp.logaddexp.accumulate(x, axis=dim)


def _complex_scan(be, a, dim, reverse):
    """Cumulative complex log-add-exp along ``dim`` (NumPy's logaddexp is real-only), as torch
    forms it: the term with the larger real part ``hi`` plus ``log1p(exp(lo - hi))``, so the first
    term is kept as given (no 2*pi wrap of its imaginary part), and an infinite real part wins."""
    xp = be.xp
    a = xp.moveaxis(a, dim, 0)
    out = xp.empty_like(a)
    n = a.shape[0]
    order = range(n - 1, -1, -1) if reverse else range(n)
    acc = None
    with quiet(be):  # log(0), inf - inf: the cases below pick the answer
        for k in order:
            v = a[k]
            if acc is None:
                acc = v.copy()
            else:
                first = acc.real >= v.real
                hi = xp.where(first, acc, v)
                lo = xp.where(first, v, acc)
                acc = xp.where(xp.isinf(hi.real) | xp.isnan(hi.real) | (lo.real == -xp.inf), hi,
                               hi + xp.log1p(xp.exp(lo - hi)))
            out[k] = acc
    return xp.moveaxis(out, 0, dim)


# The gradient pair: B(g, x, r)_i = sum_{j>=i} g_j exp(x_i - r_j) is logcumsumexp's backward;
# F(u, x, r)_j = sum_{i<=j} u_i exp(x_i - r_j) is its adjoint. Each is the other's derivative
# w.r.t. its first input, so derivatives of any order close over the pair. Both are computed in
# log space with the positive and negative parts of g apart, so nothing overflows.

def _signed_logsum(be, g, x, r, dim, reverse):
    xp = be.xp

    def part(w):
        with quiet(be):  # log(0) = -inf is intended
            lw = xp.log(w)
            if reverse:  # B: reverse cumulative over j of w_j exp(-r_j), times exp(x_i)
                a = xp.flip(xp.logaddexp.accumulate(xp.flip(lw - r, dim), axis=dim), dim) + x
            else:  # F: cumulative over i of w_i exp(x_i), times exp(-r_j)
                a = xp.logaddexp.accumulate(lw + x, axis=dim) - r
            return xp.exp(a)

    if g.ndim == 0:
        return g * xp.exp(x - r)
    if g.dtype.kind == "c" or x.dtype.kind == "c":  # complex: the log of g carries its sign
        with quiet(be):
            lg = xp.log(g.astype(xp.result_type(g, x, r)))
            if reverse:
                return xp.exp(_complex_scan(be, lg - r, dim, True) + x)
            return xp.exp(_complex_scan(be, lg + x, dim, False) - r)
    return part(xp.maximum(g, 0)) - part(xp.maximum(-g, 0))


_lcse_b_op = defop(
    "_logcumsumexp_backward",
    {S * 3: lambda be, g, x, r, dim: _signed_logsum(be, g, x, r, dim, True)},
    inputs=("input", "x", "r"), params=("dim",),
    grads={"input": lambda grad, x, r, dim: call(_lcse_f_op, (grad, x, r), (dim,)),
           "x": lambda grad, result: grad * result,
           "r": lambda grad, input, x, r, dim: -input * call(_lcse_f_op, (grad, x, r), (dim,))},
)
_lcse_f_op = defop(
    "_logcumsumexp_adjoint",
    {S * 3: lambda be, u, x, r, dim: _signed_logsum(be, u, x, r, dim, False)},
    inputs=("input", "x", "r"), params=("dim",),
    grads={"input": lambda grad, x, r, dim: call(_lcse_b_op, (grad, x, r), (dim,)),
           "x": lambda grad, input, x, r, dim: input * call(_lcse_b_op, (grad, x, r), (dim,)),
           "r": lambda grad, result: -grad * result},
)


def _logcumsumexp_backward(grad, input, result, dim):
    """d result_j / d input_i = exp(input_i - result_j) for j >= i."""
    return call(_lcse_b_op, (grad, input, result), (dim,))


_logcumsumexp_op = defop("logcumsumexp", {S: _logcumsumexp_kernel}, params=("dim",),
                         grads={"input": _logcumsumexp_backward})


@method
def logcumsumexp(input, dim, *, out=None):
    """Logarithm of the cumulative summation of the exponentiation of elements of ``input`` in
    the dimension ``dim``."""
    check_tensor(input, "logcumsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype}': convert the input with .float() first")
    d = norm_dim(dim, input.ndim, "logcumsumexp")
    return with_out(call(_logcumsumexp_op, (input,), (d,)), out, "logcumsumexp")


_gcd = _pw.binary("gcd", lambda be, a, b: be.xp.gcd(a, b), rule=_pw.PROMOTE)
_lcm = _pw.binary("lcm", lambda be, a, b: be.xp.lcm(a, b), rule=_pw.PROMOTE)


def _int_pair(input, other, fname):
    check_tensor(input, fname)
    check_tensor(other, fname, "other")
    for t in (input, other):
        dt = t.dtype
        if dt.is_floating_point or dt.is_complex or dt is D.bool:
            raise NotImplementedError(f"\"{fname}_cpu\" not implemented for '{dt}': {fname} takes "
                                      f"integer tensors; convert with .long() first")


@method(inplace=True)
def gcd(input, other, *, out=None):
    """Computes the element-wise greatest common divisor (GCD) of ``input`` and ``other``."""
    _int_pair(input, other, "gcd")
    return _gcd(input, other, out=out)


@method(inplace=True)
def lcm(input, other, *, out=None):
    """Computes the element-wise least common multiple (LCM) of ``input`` and ``other``."""
    _int_pair(input, other, "lcm")
    return _lcm(input, other, out=out)
