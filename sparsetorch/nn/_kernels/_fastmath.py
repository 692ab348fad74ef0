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

__all__ = ["ferfc", "fexp", "fexpm1", "fgelu", "fgelu_grad", "flog1p01", "fsig_mul", "fsigmoid", "rcp",
           "wide"]

F = np.float32

_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
_SQRT2M1 = 0.41421356237309503
_SHIFT = 12582912.0  # 1.5 * 2^23: adding it rounds to an integer held in the low mantissa bits
# exp(r) = 1 + r + r^2 P(r) on |r| <= ln2 / 2: P of degree 4 (fitted, relative error 3.6e-9,
# a tenth of a float32 ulp; the Cephes expf's P has degree 5, one fma more)
_EP = (4.9999988079e-01, 1.6666518152e-01, 4.1669510305e-02, 8.3689270541e-03, 1.3752686791e-03)


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (llvm.fma; float32 arguments)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@intrinsic
def _f32_as_i32(typingctx, f):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return sig, codegen


@intrinsic
def wide(typingctx):
    """Called first in a kernel: let LLVM vectorize its loops at 512 bits where the CPU has them
    (its tuning for AVX-512 CPUs prefers 256); a no-op elsewhere. Best effort: llvmlite checks
    function attributes against a list of known names, so the string attributes go in directly,
    and a change there leaves the kernel at its default width."""
    sig = types.none()

    def codegen(context, builder, signature, args):
        try:
            attrs = builder.function.attributes
            set.add(attrs, '"prefer-vector-width"="512"')
            set.add(attrs, '"min-legal-vector-width"="512"')
        except Exception:  # noqa: BLE001, S110 - an llvmlite change keeps the default width
            pass
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def rcp(typingctx, y):
    """``1 / y`` for a finite, nonzero float32 ``y`` (nan passes): the division flagged ``arcp ninf
    contract``, which LLVM turns into the reciprocal estimate and one fused Newton step in a
    vectorized loop (512 bits: ``vrcp14ps`` + two fma, about 2^-28 relative; 128/256-bit tails:
    ``vrcpps``, about 2^-23) instead of ``vdivps``. Scalar code keeps the division; float64
    divides exactly."""
    if not isinstance(y, types.Float):
        return None
    sig = y(y)
    fast = y.bitwidth == 32

    def codegen(context, builder, signature, args):
        one = ir.Constant(args[0].type, 1.0)
        return builder.fdiv(one, args[0], flags=("arcp", "ninf", "contract") if fast else ())

    return sig, codegen


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
            over = x > F(88.72283)  # float32 compares: float64 literals widen the vector
            under = x < F(-103.97208)
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


def _exp_poly(r):  # pure-Python twin of the float32 helper below (never called)
    return math.exp(r)


@overload(_exp_poly, jit_options={"fastmath": {"contract"}})
def _exp_poly_impl(r):
    """exp(r) on |r| <= ln2 / 2 (float32): 1 + r (1 + r P(r)), Horner all the way (6 fma; the
    form 1 + (r + r^2 P) costs one multiply and one add more)."""
    if isinstance(r, types.Float) and r.bitwidth == 32:
        e0, e1, e2, e3, e4 = (F(c) for c in _EP)

        def f32(r):
            p = _fma(e4, r, e3)
            p = _fma(p, r, e2)
            p = _fma(p, r, e1)
            p = _fma(p, r, e0)
            p = _fma(p, r, F(1.0))
            return _fma(p, r, F(1.0))
        return f32
    return None


def fsigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


@overload(fsigmoid, jit_options={"fastmath": {"contract"}})
def _fsigmoid_impl(v):
    if isinstance(v, types.Float) and v.bitwidth == 32:
        def f32(v):
            # z = exp(-|v|) in (0, 1]: 1 / (1 + z) for v >= 0, z / (1 + z) below. 1 + z is in
            # [1, 2]: the reciprocal estimate needs no special case, and one more Newton step
            # makes it good to float32 rounding on every vector width (the 128/256-bit tails get
            # a 12-bit estimate; 1 / 1 is then exactly 1). z is flushed to 0 below exp(-87)
            # (a normal float32 2^k down there: no denormal operands, which cost ~100 cycles
            # each); torch's is 0 below -88.7
            m = max(-abs(v), F(-87.0))  # nan stays nan
            kf = _fma(m, F(_LOG2E), F(_SHIFT))
            k = kf - F(_SHIFT)
            r = _fma(k, F(-_LN2_HI), m)
            r = _fma(k, F(-_LN2_LO), r)
            # z = y 2^k, -126 <= k <= 0: exp(m) >= exp(-87) is a normal float32, so 2^k goes
            # straight into y's exponent field (kf's bits are 0x4B400000 + k; << 23 drops the
            # 0x4B400000)
            z = _i32_as_f32(_f32_as_i32(_exp_poly(r)) + (_f32_as_i32(kf) << np.int32(23)))
            z = F(0.0) if v < F(-87.0) else z
            d = z + F(1.0)
            q = rcp(d)
            q = _fma(_fma(-d, q, F(1.0)), q, q)
            return z * q if v < F(0.0) else q
        return f32
    return lambda v: 1.0 / (1.0 + math.exp(-v))


def fsig_mul(g, v):
    return g / (1.0 + math.exp(-v))


@overload(fsig_mul, jit_options={"fastmath": {"contract"}})
def _fsig_mul_impl(g, v):
    """``g * sigmoid(v)``: float32 through ``fsigmoid``; float64 ``g / (1 + exp(-v))`` (libm)."""
    if isinstance(v, types.Float) and v.bitwidth == 32:
        return lambda g, v: g * fsigmoid(v)
    return lambda g, v: g / (1.0 + math.exp(-v))


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


# ---- gelu (erf form): 0.5 v erfc(-v / sqrt 2) and its derivative ----
# float32: Phi(-|v|) = c(t) exp(-v^2 / 2), t = 1 / (1 + P |v|), c = t Q(t) a degree-9 polynomial
# fitted (weighted Chebyshev, 2.1e-8 relative) to 0.5 erfcx(|v| / sqrt 2) on |v| <= 14.5, beyond
# which exp(-v^2 / 2) is below float32's smallest denormal. v^2 is split exactly (fma) and both
# halves enter the exponential, so the tail keeps its relative accuracy (a float32 a * a loses
# 1e-5 at v = -13). One division, no branch: the loop vectorizes. The pair is returned as
# (c 2^-64, E 2^64): E 2^64 >= 2^-99 is a normal float32 for every |v| <= 15, so 2^k is one
# exponent field (the magic-shift integer shifted into place) instead of two factors, and the
# 2^-64 is folded into Q's coefficients (exact); c E is the same product. 7.3M float32 forward,
# 1 thread: 4.2 -> 3.6-3.8 ms; max error 6.2 -> 5.3 ulp (derivative: 5.6, mean 0.26 -> 0.23).
_GP = 0.3535533845424652  # float32(0.5 / sqrt 2)
_GQ = (1.410331158e-01, 1.414102413e-01, 1.194850259e-01, 1.119660939e-01, -4.671056995e-02,
       2.058761315e-01, -3.290736264e-01, 2.098705623e-01, -5.962087257e-02, 5.763887740e-03)
_INV_SQRT_2PI = 0.3989422804014327
_INV_SQRT_2 = 0.7071067811865476


def _phi_tail(v):  # pure-Python twin of the float32 helper below (never called)
    return 0.5 * math.erfc(abs(v) * _INV_SQRT_2), 1.0, v


@overload(_phi_tail, jit_options={"fastmath": {"contract"}})
def _phi_tail_impl(v):
    if isinstance(v, types.Float) and v.bitwidth == 32:
        q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 = (F(c * 2.0 ** -64) for c in _GQ)

        def f32(v):
            # (c 2^-64, E 2^64, u), Phi(-|v|) = c * E, E = exp(-v^2 / 2); u = v clamped to
            # +-15, where c E and u E / sqrt(2 pi) are 0 in float32 (E 2^64 is not: the products
            # take u, not v); Q's fit ends at 14.5, its values to 15 only meet those zeros
            u = min(max(v, F(-15.0)), F(15.0))  # nan stays nan
            a = abs(u)
            t = rcp(_fma(F(_GP), a, F(1.0)))  # in [0.16, 1]: no special case
            q = _fma(q9, t, q8)
            q = _fma(q, t, q7)
            q = _fma(q, t, q6)
            q = _fma(q, t, q5)
            q = _fma(q, t, q4)
            q = _fma(q, t, q3)
            q = _fma(q, t, q2)
            q = _fma(q, t, q1)
            q = _fma(q, t, q0)
            s = a * a
            hi = F(-0.5) * s  # exp(hi + lo) = exp(-a^2 / 2) exactly up to the exp itself
            lo = F(-0.5) * _fma(a, a, -s)
            # kf's low mantissa bits hold k + 64, k = round(hi / ln 2) (hi >= -112.5)
            kf = _fma(hi, F(_LOG2E), F(_SHIFT + 64.0))
            k = kf - F(_SHIFT + 64.0)
            r = _fma(k, F(-_LN2_HI), hi)
            r = _fma(k, F(-_LN2_LO), r) + lo
            y = _exp_poly(r)
            # E 2^64 = y 2^(k + 64), -99 <= k + 64 <= 64, y in [0.7, 1.42]: a normal float32,
            # so 2^(k + 64) goes straight into y's exponent field (kf's bits are 0x4B400000 +
            # k + 64, and 0x4B400000 << 23 wraps to 0)
            e = _i32_as_f32(_f32_as_i32(y) + (_f32_as_i32(kf) << np.int32(23)))
            return t * q, e, u
        return f32
    return None


def fgelu(v):
    return 0.5 * v * math.erfc(-v * _INV_SQRT_2)


@overload(fgelu, jit_options={"fastmath": {"contract"}})
def _fgelu_impl(v):
    if isinstance(v, types.Float) and v.bitwidth == 32:
        def f32(v):
            # v Phi(v) = v - v Phi(-v) for v > 0, v Phi(-|v|) otherwise; + v * 0: nan at +-inf
            # (torch's float32 kernel), -0.0 kept
            c, e, u = _phi_tail(v)
            w = (u * e) * c  # c last: (c 2^-64) a normal factor, no denormal intermediate
            return (v - w if v > F(0.0) else w) + v * F(0.0)
        return f32
    return lambda v: 0.5 * v * math.erfc(-v * _INV_SQRT_2)  # float64: libm (torch: inf at inf)


def fgelu_grad(v):
    return 0.5 * math.erfc(-v * _INV_SQRT_2) + v * math.exp(-0.5 * v * v) * _INV_SQRT_2PI


@overload(fgelu_grad, jit_options={"fastmath": {"contract"}})
def _fgelu_grad_impl(v):
    if isinstance(v, types.Float) and v.bitwidth == 32:
        def f32(v):
            c, e, u = _phi_tail(v)
            h = c * e
            cdf = F(1.0) - h if v > F(0.0) else h
            # cdf + v pdf (nan at +-inf, as torch); v 2^-64 / sqrt(2 pi) underflows only where
            # v pdf is far below cdf's ulp
            return _fma(u * F(_INV_SQRT_2PI * 2.0 ** -64), e, cdf) + v * F(0.0)
        return f32
    return lambda v: (0.5 * math.erfc(-v * _INV_SQRT_2)
                      + v * math.exp(-0.5 * v * v) * _INV_SQRT_2PI)
