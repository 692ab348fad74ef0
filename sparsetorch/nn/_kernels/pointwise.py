"""Fused element-wise kernels for large float arrays: sigmoid, logsigmoid, softplus and
binary-cross-entropy-with-logits, forward and backward.

NumPy evaluates ``-logaddexp(0, -x)`` or a BCE formula as a chain of ufuncs, each a full pass
over memory with its own temporary; at millions of elements that is 3-4x torch's time. Here
each is one numba loop (``cache=True``, built on first use): no temporaries, reductions summed
in float64 per chunk, and ``parallel=True`` chunks above the thread policy's work threshold (one
thread below it). Used on the CPU backend for contiguous float32/float64 arrays of at least
``MIN_SIZE`` elements when numba imports and the numba switch is on (``SPARSETORCH_NO_NUMBA``
unset); everything else takes the NumPy formulas below, which give the same values (the
formulas of torch's CPU kernels, in the input's dtype).
"""

__all__ = [
    "activation",
    "activation_backward",
    "bce_logits",
    "bce_logits_backward",
    "logsigmoid",
    "logsigmoid_backward",
    "sigmoid",
    "softplus",
    "softplus_backward",
]

from ... import _jit

MIN_SIZE = 1 << 14  # below this, NumPy's few passes cost less than a numba call
_CHUNK = 1 << 14  # elements per parallel chunk (each a run of contiguous memory)
fexp = flog1p01 = ferfc = fexpm1 = fgelu = fgelu_grad = wide = None  # set by _build (_fastmath.py)
fsigmoid = fsig_mul = None
# numba's cache keys the kernels on this file's stamp only: an edit of _fastmath.py must touch
# this file too, or processes keep loading the old machine code


def _kernels(be, *arrays):
    """The numba kernels when every array is a large contiguous float32/float64 host array."""
    if be.name != "cpu":
        return None
    a = arrays[0]
    if a.size < MIN_SIZE or a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        return None
    for b in arrays:
        if b.dtype != a.dtype or not b.flags.c_contiguous or b.shape != a.shape:
            return None
    return _jit.kernels("nn_pointwise", _build, 6.0)


def _nchunks(n):
    return (n + _CHUNK - 1) // _CHUNK


# ---- public entry points: (be, arrays) -> array ----

def sigmoid(be, x):
    """``1 / (1 + exp(-x))``."""
    k = _kernels(be, x)
    if k is None:
        return be.special.expit(x)
    return _act(be, k, SIGMOID, x, 0.0, 0.0, 0.0)


def logsigmoid(be, x):
    """``min(x, 0) - log1p(exp(-|x|))``."""
    k = _kernels(be, x)
    if k is None:
        xp = be.xp
        r = xp.negative(xp.abs(x))
        xp.exp(r, out=r)
        xp.log1p(r, out=r)
        return xp.subtract(xp.minimum(x, 0), r, out=r)
    return _act(be, k, LOGSIGMOID, x, 0.0, 0.0, 0.0)


def logsigmoid_backward(be, g, x):
    """``g * sigmoid(-x)``."""
    k = _kernels(be, x, g)
    if k is None:
        return g * be.special.expit(-x)
    return _act_bwd(be, k, LOGSIGMOID, g, x, 0.0, 0.0, 0.0)


def softplus(be, x, beta, threshold):
    """``x`` where ``beta * x > threshold``, else ``log1p(exp(beta * x)) / beta``."""
    k = _kernels(be, x)
    if k is None:
        xp = be.xp
        bx = x * x.dtype.type(beta) if beta != 1 else x
        return xp.where(bx > threshold, x, xp.logaddexp(0, bx) / x.dtype.type(beta))
    return _act(be, k, SOFTPLUS, x, float(beta), float(threshold), 0.0)


def softplus_backward(be, g, x, beta, threshold):
    """``g`` where ``beta * x > threshold``, else ``g * z / (z + 1)`` with ``z = exp(beta x)``."""
    k = _kernels(be, x, g)
    if k is None:
        bx = x * x.dtype.type(beta)
        return be.xp.where(bx > threshold, g, g * be.special.expit(bx))
    return _act_bwd(be, k, SOFTPLUS, g, x, float(beta), float(threshold), 0.0)


def _weights(xp, x, w, pw):
    """``(period, (w, w_row), (pw, pw_row))`` for the BCE kernels.

    The kernels see ``x`` as rows of ``period`` elements; a weight is an array of ``period``
    entries repeated on every row (``row = 0``: a weight that broadcasts along leading dims), or
    of the whole size (``row = period``), or empty (absent). The period is widened to a few
    thousand elements where the row count allows, so the inner loop is long and vectorizes.
    """
    n = x.size
    shape = tuple(x.shape)
    flat = []
    for a in (w, pw):
        if a is None:
            flat.append(None)
            continue
        s = tuple(a.shape)
        while s and s[0] == 1:
            s = s[1:]
        if len(s) <= len(shape) and s == shape[len(shape) - len(s):]:
            f = a.reshape(-1)
        else:
            f = xp.broadcast_to(a, shape).reshape(-1)
        flat.append(xp.ascontiguousarray(f, dtype=x.dtype))
    m = max([f.size for f in flat if f is not None and f.size < n] or [1])
    rows = n // m
    k = 1
    want = -(-2048 // m)
    for c in range(want, min(rows, 4 * want) + 1):
        if rows % c == 0:
            k = c
            break
    period = m * k
    out = []
    for f in flat:
        if f is None:
            out.append((xp.empty(0, x.dtype), 0))
        elif f.size == n:
            out.append((f, period))
        else:
            out.append((xp.tile(f, period // f.size), 0))
    return period, out[0], out[1]


def bce_logits(be, x, t, w, pw, reduction):
    """``(1 - t) x - (1 + (pw - 1) t) logsigmoid(x)``, times ``w``; reduced (mean / sum)."""
    k = _kernels(be, x, t)
    if k is None:
        xp = be.xp
        ls = logsigmoid(be, x)
        if pw is not None:
            loss = (1 - t) * x - ((pw - 1) * t + 1) * ls
        else:
            loss = (1 - t) * x - ls
        if w is not None:
            loss = loss * w
        if reduction == "mean":
            return xp.asarray(loss.mean(dtype=x.dtype))
        if reduction == "sum":
            return xp.asarray(loss.sum(dtype=x.dtype))
        return loss
    xp = be.xp
    m, (wf, wr), (pf, pr) = _weights(xp, x, w, pw)
    if reduction == "none":
        out = xp.empty_like(x)
        _run(k, "bce_logits", x.size, x.reshape(-1), t.reshape(-1), wf, wr, pf, pr,
             out.reshape(-1), m)
        return out
    s = _run(k, "bce_logits_sum", x.size, x.reshape(-1), t.reshape(-1), wf, wr, pf, pr, m)
    if reduction == "mean":
        s = s / x.size
    return xp.asarray(s, dtype=x.dtype)


def bce_logits_backward(be, g, x, t, w, pw, reduction):
    """d loss / d x: ``g * w * ((1 + (pw - 1) t) sigmoid(x) - pw t)`` (``pw = 1`` when absent),
    divided by ``numel`` for the mean; ``g`` is the (0-d for mean / sum) incoming gradient."""
    scale = 1.0 / x.size if reduction == "mean" else 1.0
    k = _kernels(be, x, t) if reduction != "none" or (g.shape == x.shape and g.flags.c_contiguous
                                                        and g.dtype == x.dtype) else None
    if k is None:
        s = be.special.expit(x)
        if pw is not None:
            pt = pw * t
            d = (pt + 1 - t) * s - pt
        else:
            d = s - t
        if w is not None:
            d = d * w
        d = d * g
        if scale != 1.0:
            d = d * x.dtype.type(scale)
        return d.astype(x.dtype, copy=False)
    xp = be.xp
    m, (wf, wr), (pf, pr) = _weights(xp, x, w, pw)
    out = xp.empty_like(x)
    gf = g.reshape(-1) if reduction == "none" else xp.empty(0, x.dtype)
    gs = 0.0 if reduction == "none" else float(g) * scale
    _run(k, "bce_logits_bwd", x.size, gf, gs, x.reshape(-1), t.reshape(-1), wf, wr, pf, pr,
         out.reshape(-1), m)
    return out


# ---- activations: one kernel, the formula picked by ``kind`` (params a, b, c) ----

SILU, GELU, GELU_TANH, LEAKY_RELU, ELU, SIGMOID, LOGSIGMOID, SOFTPLUS = range(8)
_SQRT_2_PI = 0.7978845608028654
_INV_SQRT_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


def _np_act(be, kind, x, a, b, c):
    xp = be.xp
    if kind == SIGMOID:
        return be.special.expit(x)
    if kind == LOGSIGMOID:
        return logsigmoid(be, x)
    if kind == SOFTPLUS:
        return softplus(be, x, a, b)
    if kind == SILU:
        return x * be.special.expit(x)
    if kind == GELU:  # erfc: no cancellation in the left tail; float32: nan at +inf, as torch's
        r = 0.5 * x * be.special.erfc(x * -_INV_SQRT_2)
        return r + x * 0 if x.dtype.itemsize < 8 else r
    if kind == GELU_TANH:
        inner = (x + 0.044715 * x * x * x) * _SQRT_2_PI
        return 0.5 * x * (1 + xp.tanh(inner))
    if kind == LEAKY_RELU:
        return xp.where(x > 0, x, x * a)
    neg = xp.expm1(xp.minimum(x, 0) * c) * (a * b)  # ELU: alpha, scale, input_scale
    return xp.where(x > 0, x * b, neg)


def _np_act_bwd(be, kind, g, x, a, b, c):
    xp = be.xp
    if kind == SIGMOID:
        s = be.special.expit(x)
        return g * s * (1 - s)
    if kind == LOGSIGMOID:
        return logsigmoid_backward(be, g, x)
    if kind == SOFTPLUS:
        return softplus_backward(be, g, x, a, b)
    if kind == SILU:
        s = be.special.expit(x)
        return g * s * (1 + x * (1 - s))
    if kind == GELU:
        cdf = 0.5 * be.special.erfc(x * -_INV_SQRT_2)
        return g * (cdf + x * xp.exp(x * x * -0.5) * _INV_SQRT_2PI)
    if kind == GELU_TANH:
        x2 = x * x
        t = xp.tanh((x + 0.044715 * x2 * x) * _SQRT_2_PI)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x2))
    if kind == LEAKY_RELU:
        return xp.where(x > 0, g, g * a)
    return xp.where(x <= 0, g * (xp.exp(xp.minimum(x, 0) * c) * (a * b * c)), g * b)


def activation(be, kind, x, a=0.0, b=0.0, c=0.0):
    """silu, gelu (erf or tanh), leaky_relu (a = slope), elu (a = alpha, b = scale,
    c = input_scale) of ``x``."""
    k = _kernels(be, x)
    if k is None:
        return _np_act(be, kind, x, a, b, c).astype(x.dtype, copy=False)
    return _act(be, k, kind, x, float(a), float(b), float(c))


def activation_backward(be, kind, g, x, a=0.0, b=0.0, c=0.0):
    """The gradient of ``activation`` times ``g``."""
    k = _kernels(be, x, g)
    if k is None:
        return _np_act_bwd(be, kind, g, x, a, b, c).astype(x.dtype, copy=False)
    return _act_bwd(be, k, kind, g, x, float(a), float(b), float(c))


# ---- the numba kernels ----
# Each op is a serial loop over a slice (simple enough for LLVM to vectorize) and a parallel
# driver that runs it on chunks of _CHUNK elements; below the thread policy's threshold the
# serial loop runs on the whole array (no parallel region at all).

def _head(out):
    """How many elements of ``out`` precede its first 64-byte aligned one. The kernels run those
    apart, so that the vector loop's stores never split a cache line (NumPy's large arrays start
    16 bytes past one): 7.3M float32, 1 thread, leaky_relu 3.2 -> 2.6 ms, sigmoid 3.6 -> 3.2."""
    return (-(out.ctypes.data // out.itemsize)) % (64 // out.itemsize)


def _act(be, k, kind, x, a, b, c):
    out = be.xp.empty_like(x)
    o, xf = out.reshape(-1), x.reshape(-1)
    h = _head(o)
    if h:
        k.act_s(kind, xf[:h], a, b, c, o[:h])
    _run(k, "act", o.size - h, kind, xf[h:], a, b, c, o[h:])
    return out


def _act_bwd(be, k, kind, g, x, a, b, c):
    out = be.xp.empty_like(x)
    o, gf, xf = out.reshape(-1), g.reshape(-1), x.reshape(-1)
    h = _head(o)
    if h:
        k.act_bwd_s(kind, gf[:h], xf[:h], a, b, c, o[:h])
    _run(k, "act_bwd", o.size - h, kind, gf[h:], xf[h:], a, b, c, o[h:])
    return out


def _run(k, name, n, *args):
    with _jit.limit(n) as threads:
        if threads > 1:
            return getattr(k, name)(*args, _nchunks(n))
        return getattr(k, name + "_s")(*args)


def _build():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _fastmath
    except ImportError:
        return False
    # module globals, not closure variables (numba keys its cache on the closure's pickles)
    global fexp, flog1p01
    fexp, flog1p01 = _fastmath.fexp, _fastmath.flog1p01
    # kernels called by other kernels are module globals too (a dispatcher in a closure changes
    # the cache key every process: the callers would recompile each time)
    global _bce_row, _sum8, bce_rows, _bce_bwd_row, bce_bwd_rows, ferfc, fexpm1
    global act_s, act_bwd_s, _act4, _act4_bwd, fgelu, fgelu_grad, wide, fsigmoid, fsig_mul
    ferfc, fexpm1 = _fastmath.ferfc, _fastmath.fexpm1
    fgelu, fgelu_grad, wide = _fastmath.fgelu, _fastmath.fgelu_grad, _fastmath.wide
    fsigmoid, fsig_mul = _fastmath.fsigmoid, _fastmath.fsig_mul
    C = _CHUNK
    fm = {"contract"}  # fused multiply-add in the polynomials: faster, and no less accurate
    jit = njit(cache=True, error_model="numpy", fastmath=fm)
    pjit = njit(parallel=True, cache=True, error_model="numpy", fastmath=fm)

    # BCE with logits: x seen as rows of m elements (see _weights); a weight is indexed
    # r * row + j (row 0: one period repeated on every row), or absent (size 0)

    @jit
    def _bce_row(x, t, w, pw, out, one, zero):
        # two independent halves per iteration: exp -> log1p is one long dependency chain
        wide()
        hw = w.size > 0
        hp = pw.size > 0
        n = x.size
        h = n // 2
        for j in range(h):
            v = x[j]
            y = t[j]
            ls = min(v, zero) - flog1p01(fexp(-abs(v)))
            lw = (pw[j] - one) * y + one if hp else one
            r = (one - y) * v - lw * ls
            out[j] = r * w[j] if hw else r
            k = j + h
            v = x[k]
            y = t[k]
            ls = min(v, zero) - flog1p01(fexp(-abs(v)))
            lw = (pw[k] - one) * y + one if hp else one
            r = (one - y) * v - lw * ls
            out[k] = r * w[k] if hw else r
        for j in range(2 * h, n):
            v = x[j]
            y = t[j]
            ls = min(v, zero) - flog1p01(fexp(-abs(v)))
            lw = (pw[j] - one) * y + one if hp else one
            r = (one - y) * v - lw * ls
            out[j] = r * w[j] if hw else r

    @jit
    def _sum8(a):
        # eight float64 partial sums (independent chains), then their sum
        s = np.zeros(8, np.float64)
        m = a.size - a.size % 8
        for j in range(0, m, 8):
            for q in range(8):
                s[q] += a[j + q]
        tot = 0.0
        for j in range(m, a.size):
            tot += a[j]
        return tot + s.sum()

    @jit
    def bce_rows(x, t, w, wr, pw, pr, out, m, r0, r1, total):
        """Rows r0..r1 into out (rows of the whole array, or one scratch row when total)."""
        wide()
        one = x.dtype.type(1)
        zero = x.dtype.type(0)
        acc = 0.0
        for r in range(r0, r1):
            o = r * m
            wa = w[r * wr:r * wr + m] if w.size else w
            pa = pw[r * pr:r * pr + m] if pw.size else pw
            dst = out if total else out[o:o + m]
            _bce_row(x[o:o + m], t[o:o + m], wa, pa, dst, one, zero)
            if total:
                acc += _sum8(dst)
        return acc

    @jit
    def bce_logits_s(x, t, w, wr, pw, pr, out, m):
        bce_rows(x, t, w, wr, pw, pr, out, m, 0, x.size // m, False)

    @pjit
    def bce_logits_p(x, t, w, wr, pw, pr, out, m, nc):
        R = x.size // m
        B = max(1, C // m)
        for blk in prange((R + B - 1) // B):
            bce_rows(x, t, w, wr, pw, pr, out, m, blk * B, min(R, blk * B + B), False)

    @jit
    def bce_logits_sum_s(x, t, w, wr, pw, pr, m):
        return bce_rows(x, t, w, wr, pw, pr, np.empty(m, x.dtype), m, 0, x.size // m, True)

    @pjit
    def bce_logits_sum_p(x, t, w, wr, pw, pr, m, nc):
        R = x.size // m
        B = max(1, C // m)
        nb = (R + B - 1) // B
        parts = np.zeros(nb, np.float64)
        for blk in prange(nb):
            parts[blk] = bce_rows(x, t, w, wr, pw, pr, np.empty(m, x.dtype), m, blk * B,
                                  min(R, blk * B + B), True)
        return parts.sum()

    @jit
    def _bce_bwd_row(g, gs, x, t, w, pw, out, one):
        wide()  # two independent halves per iteration, as _bce_row
        hg = g.size > 0
        hw = w.size > 0
        hp = pw.size > 0
        n = x.size
        h = n // 2
        for j in range(h):
            y = t[j]
            s = one / (one + fexp(-x[j]))
            pt = pw[j] * y if hp else y
            d = (pt + one - y) * s - pt if hp else s - y
            d = d * w[j] if hw else d
            out[j] = d * g[j] if hg else d * gs
            k = j + h
            y = t[k]
            s = one / (one + fexp(-x[k]))
            pt = pw[k] * y if hp else y
            d = (pt + one - y) * s - pt if hp else s - y
            d = d * w[k] if hw else d
            out[k] = d * g[k] if hg else d * gs
        for j in range(2 * h, n):
            y = t[j]
            s = one / (one + fexp(-x[j]))
            pt = pw[j] * y if hp else y
            d = (pt + one - y) * s - pt if hp else s - y
            d = d * w[j] if hw else d
            out[j] = d * g[j] if hg else d * gs

    @jit
    def bce_bwd_rows(g, gs, x, t, w, wr, pw, pr, out, m, r0, r1):
        wide()
        one = x.dtype.type(1)
        s0 = x.dtype.type(gs)
        for r in range(r0, r1):
            o = r * m
            wa = w[r * wr:r * wr + m] if w.size else w
            pa = pw[r * pr:r * pr + m] if pw.size else pw
            ga = g[o:o + m] if g.size else g
            _bce_bwd_row(ga, s0, x[o:o + m], t[o:o + m], wa, pa, out[o:o + m], one)

    @jit
    def bce_logits_bwd_s(g, gs, x, t, w, wr, pw, pr, out, m):
        bce_bwd_rows(g, gs, x, t, w, wr, pw, pr, out, m, 0, x.size // m)

    @pjit
    def bce_logits_bwd_p(g, gs, x, t, w, wr, pw, pr, out, m, nc):
        R = x.size // m
        B = max(1, C // m)
        for blk in prange((R + B - 1) // B):
            bce_bwd_rows(g, gs, x, t, w, wr, pw, pr, out, m, blk * B, min(R, blk * B + B))

    # The element loops: four quarters of the slice per iteration (the slice a multiple of 64
    # elements, so each quarter's stores start 64-byte aligned where the first's do). Four read
    # and four write streams keep more memory traffic in flight than one, and the four chains of
    # a long formula overlap: 7.3M float32, 1 thread, sigmoid 3.2-3.4 -> 2.6-3.0 ms, gelu (one
    # stream) 4.5-6.4 -> 4.3. act_s / act_bwd_s run the rest (< 64) through a zero-padded block.

    @jit
    def _act4(kind, x, a, b, c, out):
        wide()
        q = x.size // 4
        one = x.dtype.type(1)
        two = x.dtype.type(2)
        zero = x.dtype.type(0)
        if kind == 0:  # silu

            def f0(v):
                return fsig_mul(v, v)
            for i in range(q):
                out[i], out[i + q] = f0(x[i]), f0(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f0(x[i + 2 * q]), f0(x[i + 3 * q])
        elif kind == 1:  # gelu (erf)
            for i in range(q):
                out[i], out[i + q] = fgelu(x[i]), fgelu(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = fgelu(x[i + 2 * q]), fgelu(x[i + 3 * q])
        elif kind == 2 and x.itemsize == 4:  # gelu (tanh): 0.5 v (1 + tanh(u)) = v sigmoid(2u)
            k0 = x.dtype.type(2 * _SQRT_2_PI)
            k1 = x.dtype.type(0.044715)

            def f2(v):
                return fsig_mul(v, (v + k1 * v * v * v) * k0)
            for i in range(q):
                out[i], out[i + q] = f2(x[i]), f2(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f2(x[i + 2 * q]), f2(x[i + 3 * q])
        elif kind == 2:  # gelu (tanh), float64: 0.5 v (1 + tanh(u))
            k0 = x.dtype.type(_SQRT_2_PI)
            k1 = x.dtype.type(0.044715)

            def f2d(v):
                u = (v + k1 * v * v * v) * k0
                return v * (one - one / (one + fexp(two * u)))
            for i in range(q):
                out[i], out[i + q] = f2d(x[i]), f2d(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f2d(x[i + 2 * q]), f2d(x[i + 3 * q])
        elif kind == 3:  # leaky_relu
            sl = x.dtype.type(a)

            def f3(v):
                return v if v > zero else v * sl
            for i in range(q):
                out[i], out[i + q] = f3(x[i]), f3(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f3(x[i + 2 * q]), f3(x[i + 3 * q])
        elif kind == 4:  # elu
            ab = x.dtype.type(a * b)
            sc = x.dtype.type(b)
            ins = x.dtype.type(c)

            def f4(v):
                return v * sc if v > zero else fexpm1(v * ins) * ab
            for i in range(q):
                out[i], out[i + q] = f4(x[i]), f4(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f4(x[i + 2 * q]), f4(x[i + 3 * q])
        elif kind == 5:  # sigmoid
            for i in range(q):
                out[i], out[i + q] = fsigmoid(x[i]), fsigmoid(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = fsigmoid(x[i + 2 * q]), fsigmoid(x[i + 3 * q])
        elif kind == 6:  # logsigmoid: min(x, 0) - log1p(exp(-|x|))

            def f6(v):
                return min(v, zero) - flog1p01(fexp(-abs(v)))
            for i in range(q):
                out[i], out[i + q] = f6(x[i]), f6(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f6(x[i + 2 * q]), f6(x[i + 3 * q])
        else:  # softplus (a = beta, b = threshold)
            be = x.dtype.type(a)
            th = x.dtype.type(b)

            def f7(v):
                bx = v * be
                sp = (max(bx, zero) + flog1p01(fexp(-abs(bx)))) / be
                return v if bx > th else sp
            for i in range(q):
                out[i], out[i + q] = f7(x[i]), f7(x[i + q])
                out[i + 2 * q], out[i + 3 * q] = f7(x[i + 2 * q]), f7(x[i + 3 * q])

    @jit
    def _act4_bwd(kind, g, x, a, b, c, out):
        wide()
        q = x.size // 4
        half = x.dtype.type(0.5)
        one = x.dtype.type(1)
        two = x.dtype.type(2)
        zero = x.dtype.type(0)
        if kind == 0:  # silu: s (1 + x (1 - s))

            def f0(d, v):
                s = fsigmoid(v)
                return d * s * (one + v * (one - s))
            for i in range(q):
                out[i], out[i + q] = f0(g[i], x[i]), f0(g[i + q], x[i + q])
                out[i + 2 * q] = f0(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f0(g[i + 3 * q], x[i + 3 * q])
        elif kind == 1:  # gelu (erf): cdf + x pdf
            for i in range(q):
                out[i], out[i + q] = g[i] * fgelu_grad(x[i]), g[i + q] * fgelu_grad(x[i + q])
                out[i + 2 * q] = g[i + 2 * q] * fgelu_grad(x[i + 2 * q])
                out[i + 3 * q] = g[i + 3 * q] * fgelu_grad(x[i + 3 * q])
        elif kind == 2 and x.itemsize == 4:  # gelu (tanh), s = sigmoid(2u): 1 + tanh(u) = 2s,
            k0 = x.dtype.type(_SQRT_2_PI)  # 0.5 v (1 - tanh(u)^2) = 2 v s (1 - s)
            k1 = x.dtype.type(0.044715)
            k3 = x.dtype.type(3 * 0.044715)

            def f2(d, v):
                v2 = v * v
                s = fsigmoid(two * (v + k1 * v2 * v) * k0)
                return d * (s + two * v * s * (one - s) * k0 * (one + k3 * v2))
            for i in range(q):
                out[i], out[i + q] = f2(g[i], x[i]), f2(g[i + q], x[i + q])
                out[i + 2 * q] = f2(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f2(g[i + 3 * q], x[i + 3 * q])
        elif kind == 2:  # gelu (tanh), float64
            k0 = x.dtype.type(_SQRT_2_PI)
            k1 = x.dtype.type(0.044715)
            k3 = x.dtype.type(3 * 0.044715)

            def f2d(d, v):
                v2 = v * v
                t = one - two / (one + fexp(two * (v + k1 * v2 * v) * k0))
                return d * (half * (one + t) + half * v * (one - t * t) * k0 * (one + k3 * v2))
            for i in range(q):
                out[i], out[i + q] = f2d(g[i], x[i]), f2d(g[i + q], x[i + q])
                out[i + 2 * q] = f2d(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f2d(g[i + 3 * q], x[i + 3 * q])
        elif kind == 3:  # leaky_relu
            sl = x.dtype.type(a)

            def f3(d, v):
                return d if v > zero else d * sl
            for i in range(q):
                out[i], out[i + q] = f3(g[i], x[i]), f3(g[i + q], x[i + q])
                out[i + 2 * q] = f3(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f3(g[i + 3 * q], x[i + 3 * q])
        elif kind == 4:  # elu (nan: g * scale)
            sc = x.dtype.type(b)
            abc = x.dtype.type(a * b * c)
            ins = x.dtype.type(c)

            def f4(d, v):
                return d * fexp(v * ins) * abc if v <= zero else d * sc
            for i in range(q):
                out[i], out[i + q] = f4(g[i], x[i]), f4(g[i + q], x[i + q])
                out[i + 2 * q] = f4(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f4(g[i + 3 * q], x[i + 3 * q])
        elif kind == 5:  # sigmoid: s (1 - s)

            def f5(d, v):
                s = fsigmoid(v)
                return d * s * (one - s)
            for i in range(q):
                out[i], out[i + q] = f5(g[i], x[i]), f5(g[i + q], x[i + q])
                out[i + 2 * q] = f5(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f5(g[i + 3 * q], x[i + 3 * q])
        elif kind == 6:  # logsigmoid: g sigmoid(-x)
            for i in range(q):
                out[i], out[i + q] = fsig_mul(g[i], -x[i]), fsig_mul(g[i + q], -x[i + q])
                out[i + 2 * q] = fsig_mul(g[i + 2 * q], -x[i + 2 * q])
                out[i + 3 * q] = fsig_mul(g[i + 3 * q], -x[i + 3 * q])
        else:  # softplus: g where beta x > threshold, else g sigmoid(beta x)
            be = x.dtype.type(a)
            th = x.dtype.type(b)

            def f7(d, v):
                return d if v * be > th else fsig_mul(d, v * be)
            for i in range(q):
                out[i], out[i + q] = f7(g[i], x[i]), f7(g[i + q], x[i + q])
                out[i + 2 * q] = f7(g[i + 2 * q], x[i + 2 * q])
                out[i + 3 * q] = f7(g[i + 3 * q], x[i + 3 * q])

    @jit
    def act_s(kind, x, a, b, c, out):
        n = x.size
        m = n - n % 64
        _act4(kind, x[:m], a, b, c, out[:m])
        if m < n:
            xs = np.zeros(64, x.dtype)
            os = np.empty(64, x.dtype)
            xs[:n - m] = x[m:]
            _act4(kind, xs, a, b, c, os)
            out[m:] = os[:n - m]

    @jit
    def act_bwd_s(kind, g, x, a, b, c, out):
        n = x.size
        m = n - n % 64
        _act4_bwd(kind, g[:m], x[:m], a, b, c, out[:m])
        if m < n:
            gs = np.zeros(64, x.dtype)
            xs = np.zeros(64, x.dtype)
            os = np.empty(64, x.dtype)
            gs[:n - m] = g[m:]
            xs[:n - m] = x[m:]
            _act4_bwd(kind, gs, xs, a, b, c, os)
            out[m:] = os[:n - m]

    @pjit
    def act_p(kind, x, a, b, c, out, nc):
        n = x.size
        for q in prange(nc):
            lo, hi = q * C, min(n, q * C + C)
            act_s(kind, x[lo:hi], a, b, c, out[lo:hi])

    @pjit
    def act_bwd_p(kind, g, x, a, b, c, out, nc):
        n = x.size
        for q in prange(nc):
            lo, hi = q * C, min(n, q * C + C)
            act_bwd_s(kind, g[lo:hi], x[lo:hi], a, b, c, out[lo:hi])

    class K:
        pass

    k = K()
    for name, f in list(locals().items()) + [(n, globals()[n]) for n in _SERIAL]:
        if name.endswith(("_s", "_p")):
            setattr(k, name[:-2] + ("_s" if name.endswith("_s") else ""), f)
    return k


_SERIAL = ("act_s", "act_bwd_s")
