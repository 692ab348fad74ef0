"""numba kernels for dropout on the CPU: torch's Bernoulli stream drawn and applied in one pass.

torch's CPU dropout is ``input * empty_like(input).bernoulli_(1 - p).div_(1 - p)``; its
``bernoulli_(q)`` compares a 53-bit uniform (``random64() & (2**53 - 1)`` times ``2**-53``, two
mt19937 words per element, the first one high) with ``q``. ``forward`` runs the mt19937 engine
itself on the generator's live state (625 uint32 words: NumPy's ``mt19937_state``, the 624 key
words, then the index of the next one; ``Generator._engine_words``), so the words, the twist and
the state left behind are the generator's own, and writes ``x * m`` (``m`` the scale or 0) and the
kept flags (uint8) in the same loop: no uint64 / float64 temporaries, no separate mask, division
and product passes (1M float32 elements, one thread: about 1.0 ms; torch's dropout 7.5 ms).
``u < q`` is decided on the integers (``k < ceil(q * 2**53)``, exact). ``backward`` is ``g * m``
from the flags.

``perm``: the flat element order of the draws when it is not the array's own (torch draws a
transposed view's mask in its memory order): element ``i`` of the draw order is ``perm[i]``.

Built on first use (``cache=True``, through ``sparsetorch._jit``), CPU backend only.
"""

from ... import _jit

__all__ = ["kernels"]

# set by _build: module globals, not closure variables (numba keys a kernel's disk cache on its
# closure variables' pickles, which differ per process: the kernels would recompile every time)
twist = temper = temper_all = block = block_perm = None


def kernels(be):
    """The kernel namespace ``(forward, forward_perm, backward)``, or None (other backends, numba
    off or missing)."""
    return _jit.kernels("dropout", _build, 3.0) if be.name == "cpu" else None


def _build():
    try:
        import numpy as np
        from numba import njit
    except ImportError:
        return False
    global twist, temper, temper_all, block, block_perm

    @njit(cache=True, inline="always")
    def twist(key):
        n, m = 624, 397
        for i in range(n - m):
            y = (key[i] & np.uint32(0x80000000)) | (key[i + 1] & np.uint32(0x7FFFFFFF))
            key[i] = key[i + m] ^ (y >> np.uint32(1)) ^ (
                (np.uint32(0) - (y & np.uint32(1))) & np.uint32(0x9908B0DF))
        for i in range(n - m, n - 1):
            y = (key[i] & np.uint32(0x80000000)) | (key[i + 1] & np.uint32(0x7FFFFFFF))
            key[i] = key[i + m - n] ^ (y >> np.uint32(1)) ^ (
                (np.uint32(0) - (y & np.uint32(1))) & np.uint32(0x9908B0DF))
        y = (key[n - 1] & np.uint32(0x80000000)) | (key[0] & np.uint32(0x7FFFFFFF))
        key[n - 1] = key[m - 1] ^ (y >> np.uint32(1)) ^ (
            (np.uint32(0) - (y & np.uint32(1))) & np.uint32(0x9908B0DF))

    @njit(cache=True, inline="always")
    def temper(y):
        y ^= y >> np.uint32(11)
        y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
        y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
        y ^= y >> np.uint32(18)
        return y

    @njit(cache=True)
    def temper_all(key, tw):
        for i in range(624):
            tw[i] = temper(key[i])

    @njit(cache=True)
    def block(tw, x, out, keep, th, tl, scale):
        m21 = np.uint32(0x1FFFFF)
        zero = x.dtype.type(0)
        for t in range(x.shape[0]):
            hi = tw[2 * t] & m21
            lo = tw[2 * t + 1]
            c = (hi < th) | ((hi == th) & (lo < tl))
            out[t] = x[t] * (scale if c else zero)
            keep[t] = c

    @njit(cache=True)
    def block_perm(tw, idx, x, out, keep, th, tl, scale):
        m21 = np.uint32(0x1FFFFF)
        zero = x.dtype.type(0)
        for t in range(idx.shape[0]):
            hi = tw[2 * t] & m21
            lo = tw[2 * t + 1]
            c = (hi < th) | ((hi == th) & (lo < tl))
            j = idx[t]
            out[j] = x[j] * (scale if c else zero)
            keep[j] = c

    @njit(cache=True)
    def draw(st, x, out, keep, t_hi, t_lo, scale, perm, use_perm):
        """Elements in draw order: kept when the 53-bit draw ``k`` is below ``T`` (``u < q``
        exactly: ``T = ceil(q * 2**53)``, given as its high 21 and low 32 bits) -> ``x * scale``,
        else ``x * 0``. The key is tempered 624 words at a time into a buffer, whose pairs a
        separate block loop turns into outputs (vectorised; inline, the loop was not: 2.4 ms
        per 1M elements instead of 1.0)."""
        n = x.size
        zero = x.dtype.type(0)
        th = np.uint32(t_hi)
        tl = np.uint32(t_lo)
        m21 = np.uint32(0x1FFFFF)
        tw = np.empty(624, np.uint32)
        pos = np.int64(st[624])
        if pos < 624:
            temper_all(st, tw)
        i = 0
        while i < n:
            if pos >= 624:
                twist(st)
                temper_all(st, tw)
                pos = 0
            m = min((624 - pos) // 2, n - i)
            if m == 0:  # the pair straddles a twist
                hi = tw[623] & m21
                twist(st)
                temper_all(st, tw)
                lo = tw[0]
                pos = 1
                c = hi < th or (hi == th and lo < tl)
                j = perm[i] if use_perm else i
                out[j] = x[j] * (scale if c else zero)
                keep[j] = c
                i += 1
                continue
            if use_perm:
                block_perm(tw[pos:pos + 2 * m], perm[i:i + m], x, out, keep, th, tl, scale)
            else:
                block(tw[pos:pos + 2 * m], x[i:i + m], out[i:i + m], keep[i:i + m], th, tl, scale)
            pos += 2 * m
            i += m
        st[624] = pos
        return 0

    @njit(cache=True)
    def backward(g, keep, scale, out):
        zero = g.dtype.type(0)
        for i in range(g.size):
            out[i] = g[i] * (scale if keep[i] else zero)
        return 0

    return (draw, backward)
