"""torch's CPU sampling transforms, on the host: the raw mt19937 stream of a
:class:`~sparsetorch._generator.Generator` in, NumPy arrays out, bit for bit what torch 2.13 gives.

Each function follows the ATen kernel it mirrors (``DistributionsHelper.h``,
``TransformationHelper.h``, ``native/cpu/DistributionTemplates.h``): which raw draw it takes (32-bit
``random()`` or 64-bit ``random64()``), how it turns it into a number and in which precision. Math
that NumPy computes differently from the C library (``log``, ``log1p``, ``exp``, ``tan`` in float64)
calls the C library: numba loops for large arrays, ``math`` element by element otherwise; ``sqrt``,
``sin`` and ``cos`` agree and stay vectorised. Values come out in torch's element order for a
contiguous tensor (``random.py`` reorders for non-contiguous ones).
"""

import math

import numpy as np  # host-side sampling: the generator's raw words are NumPy arrays

from .. import _dtype as D
from .. import _jit

__all__ = [
    "bernoulli_scalar",
    "bernoulli_tensor",
    "cauchy",
    "exponential",
    "geometric",
    "log_normal",
    "multinomial",
    "normal",
    "poisson",
    "random_from_to",
    "random_full_64",
    "random_int",
    "randperm",
    "uniform",
]

f32, f64, u64 = np.float32, np.float64, np.uint64
_M24, _M53 = u64((1 << 24) - 1), u64((1 << 53) - 1)
_REDUCED = (D.float16, D.bfloat16)


def _numba_on():
    """The numba loops run unless switched off (``_jit.use_numba(False)`` or
    ``SPARSETORCH_NO_NUMBA=1``); each one has a NumPy path giving the same bits."""
    return _jit.ENABLED[0]


_LIBM = [None]
_LIBM_MIN = 4096  # below this many elements ``frompyfunc`` beats a call into numba


def _build_libm():
    """numba loops calling the C library's ``log``/``log1p``/``exp``/``tan`` (the same
    functions ``math`` calls, so the same bits), 15-25x faster than ``frompyfunc``."""
    try:
        from numba import njit
    except ImportError:
        return {}

    @njit(cache=True)
    def log(x, out):
        for i in range(x.shape[0]):
            out[i] = math.log(x[i])

    @njit(cache=True)
    def log1p(x, out):
        for i in range(x.shape[0]):
            out[i] = math.log1p(x[i])

    @njit(cache=True)
    def exp(x, out):
        for i in range(x.shape[0]):
            out[i] = math.exp(x[i])

    @njit(cache=True)
    def tan(x, out):
        for i in range(x.shape[0]):
            out[i] = math.tan(x[i])

    return {"log": log, "log1p": log1p, "exp": exp, "tan": tan}


def _libm(fn, x):
    """``fn`` (a ``math`` function: the C library's) over a float64 array."""
    if x.size == 0:
        return x.astype(f64)
    if x.size >= _LIBM_MIN and _numba_on():
        if _LIBM[0] is None:
            _LIBM[0] = _build_libm()
        kernel = _LIBM[0].get(fn.__name__)
        if kernel is not None:
            flat = np.ascontiguousarray(x, f64).reshape(-1)
            out = np.empty_like(flat)
            kernel(flat, out)
            return out.reshape(x.shape)
    return np.frompyfunc(fn, 1, 1)(x).astype(f64)


def _u24(g, n):
    """``uniform_real_distribution<float>(0, 1)``: 24 bits of ``random()`` times 2**-24."""
    return (g.random32(n) & _M24).astype(f32) * f32(2.0**-24)


def _u53(g, n):
    """``uniform_real_distribution<double>(0, 1)``: 53 bits of ``random64()`` times 2**-53."""
    return (g.random64(n) & _M53).astype(f64) * f64(2.0**-53)


def _fma32(a, b, c):
    """A fused multiply-add of float32 operands (the product is exact in float64)."""
    return (a.astype(f64) * f64(b) + f64(c)).astype(f32)


def _fma64(a, b, c):
    """A fused multiply-add in float64: Dekker's exact product and Knuth's two-sum, rounded once
    more at the end (equal to a true fma except in extraordinarily rare ties)."""
    a = np.asarray(a, f64)
    p = a * b
    split = f64(134217729.0)  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = f64(b) * split
    bh = bh - (bh - f64(b))
    e = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _size(shape):
    return math.prod(shape)


def _complex_pair(shape, dt):
    """Complex dtypes draw as their real view: ``(..., 2)`` numbers of the real dtype."""
    return tuple(shape) + (2,), dt.to_real()


# ---- uniform ----


def uniform(g, shape, dt, lo=0.0, hi=1.0):
    """``uniform_(lo, hi)``: float64 from 53 bits, the other floats from 24 bits in float32; a
    value that rounds to ``hi`` becomes ``lo`` (torch's ``uniform_kernel``)."""
    if dt.is_complex:
        s, real = _complex_pair(shape, dt)
        return uniform(g, s, real, lo, hi).view(dt.np).reshape(shape)
    n = _size(shape)
    if dt is D.float64:
        out = _u53(g, n)
        if not (lo == 0.0 and hi == 1.0):
            out = _fma64(out, f64(hi) - f64(lo), f64(lo))
        top, bottom = f64(hi), f64(lo)
    else:
        flo, fhi = f32(lo), f32(hi)
        x = _u24(g, n)
        if not (flo == 0 and fhi == 1):
            x = _fma32(x, fhi - flo, flo)
        out = x.astype(dt.np)
        top, bottom = np.asarray(hi).astype(dt.np), np.asarray(lo).astype(dt.np)
    out[out == top] = bottom
    return out.reshape(shape)


# ---- normal ----


def _log256(x):
    """The AVX2 ``log256_ps`` of ``avx_mathfun.h``, float32 operation for operation (the
    multiply-adds fused as the compiler fuses them)."""
    x = np.maximum(x, np.array(0x00800000, np.int32).view(f32))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(f32) + f32(1)
    x = ((bits & ~0x7F800000) | np.array(0.5, f32).view(np.int32)).view(f32)
    mask = x < f32(0.707106781186547524)
    tmp = np.where(mask, x, f32(0))
    x = x - f32(1)
    e = e - mask.astype(f32)
    x = x + tmp
    z = x * x
    y = np.full_like(x, f32(7.0376836292e-2))
    for p in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fma32(y, x, f32(p))
    y = y * x
    y = _fma32(y, z, e * f32(-2.12194440e-4))
    y = _fma32(z, f32(-0.5), y)
    return _fma32(e, f32(0.693359375), x + y)


def _sincos256(x):
    """The AVX2 ``sincos256_ps`` of ``avx_mathfun.h`` for ``x >= 0``, in float32."""
    j = (x * f32(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(f32)
    x = _fma32(y, f32(-0.78515625), x)
    x = _fma32(y, f32(-2.4187564849853515625e-4), x)
    x = _fma32(y, f32(-3.77489497744594108e-8), x)
    sin_neg = (j & 4) != 0
    cos_neg = (~(j - 2) & 4) != 0
    poly = (j & 2) == 0
    z = x * x
    yc = _fma32(np.full_like(z, f32(2.443315711809948e-5)), z, f32(-1.388731625493765e-3))
    yc = _fma32(yc, z, f32(4.166664568298827e-2)) * z
    yc = _fma32(yc, z, -(z * f32(0.5))) + f32(1)
    ys = _fma32(np.full_like(z, f32(-1.9515295891e-4)), z, f32(8.3321608736e-3))
    ys = _fma32(ys, z, f32(-1.6666654611e-1)) * z
    ys = _fma32(ys, x, x)
    s, c = np.where(poly, ys, yc), np.where(poly, yc, ys)
    return np.where(sin_neg, -s, s), np.where(cos_neg, -c, c)


def _fill16_float(u, mean, std):
    """``NormalFill16<float>`` (AVX2) over blocks of 16 uniforms: Box-Muller on pairs (j, j+8)."""
    d = u.reshape(-1, 16)
    r = np.sqrt(f32(-2) * _log256(f32(1) - d[:, :8]))
    s, c = _sincos256(f32(2 * math.pi) * d[:, 8:])
    m, sd = f32(mean), f32(std)
    return np.concatenate([_fma32(r * c, sd, m), _fma32(r * s, sd, m)], 1).reshape(-1)


def _fill16_double(u, mean, std):
    """``NormalFill16<double>`` (scalar, C library ``log``/``cos``/``sin``, ``std::fma``)."""
    d = u.reshape(-1, 16)
    r = np.sqrt(-2.0 * _libm(math.log, 1.0 - d[:, :8]))
    th = (2.0 * math.pi) * d[:, 8:]
    out = np.concatenate([r * np.cos(th), r * np.sin(th)], 1)
    if not (std == 1.0 and mean == 0.0):
        out = _fma64(out, f64(std), f64(mean))
    return out.reshape(-1)


_FILL16 = [None]


def _build_fill16():
    """The pair loop of ``_fill16_float`` compiled by numba: the same float32 operations and
    emulated fused multiply-adds per Box-Muller pair (no calls, so LLVM vectorises it)."""
    try:
        from numba import njit
    except ImportError:
        return False

    @njit(cache=True)
    def pairs(mant, expo, u2, oc, osn, mean, std):
        f4, f8 = np.float32, np.float64
        two_pi = f4(2 * math.pi)
        for p in range(mant.shape[0]):
            # log256_ps of 1 - u1, from its mantissa in [0.5, 1) and exponent + 1
            xm0 = mant[p]
            small = xm0 < f4(0.707106781186547524)
            e = expo[p] - (f4(1) if small else f4(0))
            xm = (xm0 - f4(1)) + (xm0 if small else f4(0))
            z = xm * xm
            xd = f8(xm)
            y = f4(7.0376836292e-2)
            y = f4(f8(y) * xd + f8(f4(-1.1514610310e-1)))
            y = f4(f8(y) * xd + f8(f4(1.1676998740e-1)))
            y = f4(f8(y) * xd + f8(f4(-1.2420140846e-1)))
            y = f4(f8(y) * xd + f8(f4(1.4249322787e-1)))
            y = f4(f8(y) * xd + f8(f4(-1.6668057665e-1)))
            y = f4(f8(y) * xd + f8(f4(2.0000714765e-1)))
            y = f4(f8(y) * xd + f8(f4(-2.4999993993e-1)))
            y = f4(f8(y) * xd + f8(f4(3.3333331174e-1)))
            y = y * xm
            y = f4(f8(y) * f8(z) + f8(e * f4(-2.12194440e-4)))
            y = f4(f8(z) * f8(f4(-0.5)) + f8(y))
            lg = f4(f8(e) * f8(f4(0.693359375)) + f8(xm + y))
            r = np.sqrt(f4(-2) * lg)
            # sincos256_ps of 2 pi u2
            t = two_pi * u2[p]
            q = np.int32(t * f4(1.27323954473516))
            q = (q + 1) & ~1
            yq = f8(f4(q))
            t = f4(yq * f8(f4(-0.78515625)) + f8(t))
            t = f4(yq * f8(f4(-2.4187564849853515625e-4)) + f8(t))
            t = f4(yq * f8(f4(-3.77489497744594108e-8)) + f8(t))
            zz = t * t
            zd = f8(zz)
            yc = f4(f8(f4(2.443315711809948e-5)) * zd + f8(f4(-1.388731625493765e-3)))
            yc = f4(f8(yc) * zd + f8(f4(4.166664568298827e-2))) * zz
            yc = f4(f8(yc) * zd + f8(-(zz * f4(0.5)))) + f4(1)
            ys = f4(f8(f4(-1.9515295891e-4)) * zd + f8(f4(8.3321608736e-3)))
            ys = f4(f8(ys) * zd + f8(f4(-1.6666654611e-1))) * zz
            ys = f4(f8(ys) * f8(t) + f8(t))
            swap = (q & 2) != 0
            sn = yc if swap else ys
            cs = ys if swap else yc
            sn = -sn if (q & 4) != 0 else sn
            cs = -cs if ((~(q - 2)) & 4) != 0 else cs
            oc[p] = f4(f8(r * cs) * f8(std) + f8(mean))
            osn[p] = f4(f8(r * sn) * f8(std) + f8(mean))

    return pairs


def _fill16_fast(u, mean, std):
    """``_fill16_float`` through the numba pair loop when it is on and ``u`` is large."""
    if u.size < 4096 or not _numba_on():
        return _chunked(_fill16_float, u, mean, std)
    if _FILL16[0] is None:
        _FILL16[0] = _build_fill16()
    if not _FILL16[0]:
        return _chunked(_fill16_float, u, mean, std)
    d = u.reshape(-1, 16)
    bits = np.ascontiguousarray(f32(1) - d[:, :8]).reshape(-1).view(np.int32)
    mant = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(f32)
    expo = ((bits >> 23) - 126).astype(f32)
    u2 = np.ascontiguousarray(d[:, 8:]).reshape(-1)
    oc, osn = np.empty_like(mant), np.empty_like(mant)
    _FILL16[0](mant, expo, u2, oc, osn, f32(mean), f32(std))
    out = np.empty_like(d)
    out[:, :8] = oc.reshape(-1, 8)
    out[:, 8:] = osn.reshape(-1, 8)
    return out.reshape(-1)


_CHUNK = 4096 * 16  # Box-Muller blocks per NumPy pass: temporaries stay in cache (2x faster)


def _chunked(fill, u, mean, std):
    if u.size <= _CHUNK:
        return fill(u, mean, std)
    out = np.empty_like(u)
    for i in range(0, u.size, _CHUNK):
        out[i:i + _CHUNK] = fill(u[i:i + _CHUNK], mean, std)
    return out


def _normal_fill(g, n, dt, mean, std):
    """torch's ``normal_fill``: the path of contiguous tensors with 16 or more elements."""
    if dt is D.float64:
        draw = _u53

        def fill(u, mean, std):
            return _chunked(_fill16_double, u, mean, std)
    else:
        draw, fill = _u24, _fill16_fast
    if dt in _REDUCED:  # blocks of 16 draws, then 16 more for the tail (a float buffer)
        full = n // 16 * 16
        out = np.empty(n, f32)
        out[:full] = fill(draw(g, full), mean, std)
        if n % 16:
            out[n - 16:] = fill(draw(g, 16), mean, std)
        return out.astype(dt.np)
    out = draw(g, n)  # all uniforms first, then a second 16 for the overlapping tail block
    out[: n // 16 * 16] = fill(out[: n // 16 * 16], mean, std)
    if n % 16:
        out[n - 16:] = fill(draw(g, 16), mean, std)
    return out


def normal_double_samples(g, n):
    """``n`` draws of ``normal_distribution<double>(0, 1)``: Box-Muller pairs (cos first, the sin
    cached on the generator for the next call)."""
    out = np.empty(n, f64)
    start = 0
    if n and g._next_double is not None:
        out[0], g._next_double, start = g._next_double, None, 1
    k = n - start
    if k:
        pairs = (k + 1) // 2
        u = _u53(g, 2 * pairs)
        r = np.sqrt(-2.0 * _libm(math.log1p, -u[1::2]))
        th = (2.0 * math.pi) * u[0::2]
        both = np.empty(2 * pairs, f64)
        both[0::2], both[1::2] = r * np.cos(th), r * np.sin(th)
        out[start:] = both[:k]
        if k % 2:
            g._next_double = float(both[-1])
    return out


def normal(g, shape, dt, mean=0.0, std=1.0, contiguous=True):
    """``normal_(mean, std)``: the vectorised 16-wide Box-Muller for contiguous tensors of 16 or
    more elements, the scalar double Box-Muller (with its cached sample) otherwise."""
    if dt.is_complex:
        s, real = _complex_pair(shape, dt)
        out = normal(g, s, real, mean, std / math.sqrt(2), contiguous)
        return out.view(dt.np).reshape(shape)
    n = _size(shape)
    if n >= 16 and contiguous:
        return _normal_fill(g, n, dt, mean, std).reshape(shape)
    z = normal_double_samples(g, n)  # then ``z * std + mean``, fused as the compiler fuses it
    return _from64(_fma64(z, f64(std), f64(mean)), dt).reshape(shape)


# ---- integers ----


def _cast_int64(v, dt):
    if dt is D.bool:
        return v != 0
    return v.astype(dt.np)


def random_from_to(g, shape, dt, span, base):
    """``random_(from, to)`` / ``randint``: ``(word % span) + from``, with 64-bit words when
    ``span >= 2**28`` and 32-bit words below."""
    n = _size(shape)
    words = g.random64(n) if span >= 1 << 28 else g.random32(n)
    v = (words % u64(span)).view(np.int64) + np.int64(base)
    return _cast_int64(v, dt).reshape(shape)


def random_full_64(g, shape, dt):
    """``random_(-2**63, None)`` on int64 (and float64/float32/bfloat16): a whole 64-bit word."""
    return _cast_int64(g.random64(_size(shape)).view(np.int64), dt).reshape(shape)


def random_int(g, shape, dt):
    """``random_()``: ``[0, 2**digits]`` for floats, ``[0, max]`` for integers."""
    n = _size(shape)
    if dt is D.bool:
        return (g.random32(n) & u64(1)).astype(bool).reshape(shape)
    if dt is D.float64 or dt is D.int64:
        words = g.random64(n)
    else:
        words = g.random32(n)
    if dt.is_floating_point:
        digits = {D.float64: 53, D.float32: 24, D.float16: 11, D.bfloat16: 8}[dt]
        mod = (1 << digits) + 1
    else:
        mod = int(np.iinfo(dt.np).max) + 1
    return (words % u64(mod)).astype(dt.np).reshape(shape)


_SHUFFLE = [None]


def _shuffle_kernel():
    """The swap loop compiled by numba (built on first use, cached on disk); None without it."""
    if not _numba_on():
        return None
    if _SHUFFLE[0] is None:
        try:
            from numba import njit
        except ImportError:
            _SHUFFLE[0] = False
        else:

            @njit(cache=True)
            def shuffle(perm, z):
                for i in range(z.shape[0]):
                    j = i + z[i]
                    t = perm[i]
                    perm[i] = perm[j]
                    perm[j] = t

            _SHUFFLE[0] = shuffle
    return _SHUFFLE[0] or None


def randperm(g, n):
    """torch's Fisher-Yates: element ``i`` swaps with ``i + random() % (n - i)``, in order."""
    if n < 2:
        return np.arange(n, dtype=np.int64)
    z = (g.random32(n - 1) % np.arange(n, 1, -1, dtype=u64)).astype(np.int64)
    kernel = _shuffle_kernel() if n > 4096 else None
    if kernel is not None:
        perm = np.arange(n, dtype=np.int64)
        kernel(perm, z)
        return perm
    perm = list(range(n))
    for i, k in enumerate(z.tolist()):
        j = i + k
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)


# ---- Bernoulli and the one-uniform transforms ----


def bernoulli_scalar(g, shape, dt, p):
    """``bernoulli_(p)`` for a number ``p``: ``u < p`` with a 53-bit uniform."""
    return (_u53(g, _size(shape)) < f64(p)).astype(dt.np).reshape(shape)


def bernoulli_tensor(g, probs, dt):
    """``bernoulli_(p_tensor)``: float64 ``p`` compares a 53-bit uniform, other dtypes a 24-bit
    float32 uniform; ``probs`` is already broadcast to the output shape."""
    n = probs.size
    if probs.dtype == f64:
        hit = _u53(g, n) < probs.reshape(-1)
    else:
        hit = _u24(g, n) < probs.reshape(-1).astype(f32)
    return hit.astype(dt.np).reshape(probs.shape)


def _from64(x, dt):
    """float64 samples to ``dt`` as torch casts them: half and bfloat16 are built from a float
    (``c10::Half(float)``), so a double goes through float32 first (two roundings)."""
    if dt in _REDUCED:
        return x.astype(f32).astype(dt.np)
    return x.astype(dt.np)


def exponential(g, shape, dt, lambd):
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)`` in float64."""
    u = _u53(g, _size(shape))
    return _from64((-1.0 / lambd) * _libm(math.log1p, -u), dt).reshape(shape)


def cauchy(g, shape, dt, median, sigma):
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))`` in float64 (one fused
    multiply-add: the kernel is compiled with FMA and contracts it)."""
    u = _u53(g, _size(shape))
    t = _libm(math.tan, math.pi * (u - 0.5))
    return _from64(_fma64(t, f64(sigma), f64(median)), dt).reshape(shape)


def log_normal(g, shape, dt, mean, std):
    """``log_normal_(mean, std)``: ``exp`` of the scalar double normal, for every size."""
    z = _fma64(normal_double_samples(g, _size(shape)), f64(std), f64(mean))
    return _from64(_libm(math.exp, z), dt).reshape(shape)


def geometric(g, shape, dt, p):
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))`` in float64."""
    u = _u53(g, _size(shape))
    zero = u == 0  # log(0) = -inf (``math.log`` raises there)
    logs = _libm(math.log, np.where(zero, 1.0, u))
    logs[zero] = -math.inf
    return np.ceil(logs / math.log1p(-p)).astype(dt.np).reshape(shape)


# ---- multinomial, poisson ----


def multinomial(g, w, n, replacement, dt, q=None):
    """torch's multinomial over the rows of ``w`` (2-D, dtype ``dt``): without replacement (or
    one sample) the exponential race ``topk(w / Exp(1))``; with replacement a binary search of
    the float cumulative distribution for each 53-bit uniform, row by row. ``q``: the Exp(1)
    draws when the caller drew them itself (in another memory order)."""
    rows, k = w.shape
    if not replacement or n == 1:
        if q is None:
            q = exponential(g, w.shape, dt, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = (w / q).astype(dt.np)
        keys = keys.astype(f64)
        if n == 1:
            return np.argmax(keys, axis=1).reshape(rows, 1).astype(np.int64)
        return np.argsort(-keys, axis=1, kind="stable")[:, :n].astype(np.int64)
    acc = f32 if dt in _REDUCED else dt.np
    out = np.empty((rows, n), np.int64)
    for i in range(rows):
        cdf = np.cumsum(w[i].astype(acc), dtype=acc)
        cdf = (cdf / cdf[-1]).astype(acc)
        cdf[-1] = 1
        out[i] = np.searchsorted(cdf.astype(f64), _u53(g, n), side="left")
    return out


def _poisson_one(lam, u):
    """``sample_poisson``: Hormann's transformed rejection for ``lam >= 10``, products of
    uniforms below; ``u()`` is the 53-bit uniform draw."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = u() - 0.5
            V = u()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= u()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(g, lam, dt):
    """``torch.poisson``: one ``sample_poisson`` per rate, in element order."""

    def u():
        return float(_u53(g, 1)[0])

    flat = lam.reshape(-1).astype(f64).tolist()
    return np.array([_poisson_one(v, u) for v in flat], f64).astype(dt.np).reshape(lam.shape)
