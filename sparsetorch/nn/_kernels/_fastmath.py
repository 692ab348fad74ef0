"""``fexp(v)`` and ``flog1p01(z)`` for numba kernels: float32 versions that LLVM can vectorize.

numba calls libm's scalar ``expf`` / ``log1pf`` for ``math.exp`` / ``math.log1p`` (no SVML on
these machines), about 10 ns an element; torch's kernels use SIMD polynomials. These are the
classic range reduction + minimax polynomial (the Cephes ``expf`` / ``logf`` coefficients, about
1 ulp), written without calls or branches so a loop over them vectorizes. float64 arguments use
``math.exp`` / ``math.log1p``. Imported only by the kernel builders (numba stays a lazy import).

``flog1p01`` is ``log1p`` on ``[0, 1]`` only (all that ``log1p(exp(-|x|))`` needs).
"""

import math

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload

__all__ = ["ferfc", "fexp", "fexpm1", "flog1p01"]

F = np.float32

_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
_SQRT2M1 = 0.41421356237309503


@intrinsic
def _i32_as_f32(typingctx, i):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


def fexp(v):
    return math.exp(v)


def flog1p01(z):
    return math.log1p(z)


@overload(fexp, jit_options={"fastmath": {"contract"}})
def _fexp_impl(v):
    if isinstance(v, types.Float) and v.bitwidth == 32:
        def f32(v):
            x = v
            over = x > 88.72283
            under = x < -103.97208
            x = F(88.72283) if over else x
            x = F(-103.97208) if under else x
            k = np.floor(x * F(_LOG2E) + F(0.5))
            r = x - k * F(_LN2_HI) - k * F(_LN2_LO)
            z = r * r
            p = F(1.9875691500e-4)
            p = p * r + F(1.3981999507e-3)
            p = p * r + F(8.3334519073e-3)
            p = p * r + F(4.1665795894e-2)
            p = p * r + F(1.6666665459e-1)
            p = p * r + F(5.0000001201e-1)
            y = p * z + r + F(1.0)
            ki = np.int32(k)
            kh = ki >> np.int32(1)  # 2^k as two factors: each stays a normal float32
            y = y * _i32_as_f32((kh + np.int32(127)) << np.int32(23))
            y = y * _i32_as_f32((ki - kh + np.int32(127)) << np.int32(23))
            y = F(math.inf) if over else y
            return F(0.0) if under else y
        return f32
    return lambda v: math.exp(v)


@overload(flog1p01, jit_options={"fastmath": {"contract"}})
def _flog1p01_impl(z):
    if isinstance(z, types.Float) and z.bitwidth == 32:
        def f32(z):
            # 1 + z in [1, 2]: log1p(z) = e ln2 + log(1 + f), f = z (e = 0) or (z - 1) / 2 (e = 1),
            # f in [-0.293, 0.414]; f is exact in both cases (no 1 + z - 1 cancellation)
            big = z > F(_SQRT2M1)
            f = (z - F(1.0)) * F(0.5) if big else z
            e = F(1.0) if big else F(0.0)
            f2 = f * f
            p = F(7.0376836292e-2)
            p = p * f - F(1.1514610310e-1)
            p = p * f + F(1.1676998740e-1)
            p = p * f - F(1.2420140846e-1)
            p = p * f + F(1.4249322787e-1)
            p = p * f - F(1.6668057665e-1)
            p = p * f + F(2.0000714765e-1)
            p = p * f - F(2.4999993993e-1)
            p = p * f + F(3.3333331174e-1)
            y = p * f * f2 + e * F(_LN2_LO) - F(0.5) * f2
            return f + y + e * F(_LN2_HI)
        return f32
    return lambda z: math.log1p(z)


def ferfc(z):
    return math.erfc(z)


@overload(ferfc, jit_options={"fastmath": {"contract"}})
def _ferfc_impl(z):
    if isinstance(z, types.Float) and z.bitwidth == 32:
        def f32(z):
            # the Chebyshev-fitted erfc of Numerical Recipes (fractional error < 1.2e-7 on the
            # whole line), evaluated in float32 with the vectorizable fexp
            a = abs(z)
            t = F(1.0) / (F(1.0) + F(0.5) * a)
            p = F(0.17087277)
            p = p * t - F(0.82215223)
            p = p * t + F(1.48851587)
            p = p * t - F(1.13520398)
            p = p * t + F(0.27886807)
            p = p * t - F(0.18628806)
            p = p * t + F(0.09678418)
            p = p * t + F(0.37409196)
            p = p * t + F(1.00002368)
            p = p * t - F(1.26551223)
            r = t * fexp(p - a * a)
            return F(2.0) - r if z < F(0.0) else r
        return f32
    return lambda z: math.erfc(z)


def fexpm1(u):
    return math.expm1(u)


@overload(fexpm1, jit_options={"fastmath": {"contract"}})
def _fexpm1_impl(u):
    if isinstance(u, types.Float) and u.bitwidth == 32:
        def f32(u):
            # |u| < 0.5: the Taylor series to u^8 (truncation < 1e-8 relative); beyond, exp(u) - 1
            # loses nothing to cancellation
            p = F(1.0 / 40320.0)
            p = p * u + F(1.0 / 5040.0)
            p = p * u + F(1.0 / 720.0)
            p = p * u + F(1.0 / 120.0)
            p = p * u + F(1.0 / 24.0)
            p = p * u + F(1.0 / 6.0)
            p = p * u + F(0.5)
            small = u + u * u * p
            big = fexp(u) - F(1.0)
            return small if abs(u) < F(0.5) else big
        return f32
    return lambda u: math.expm1(u)
