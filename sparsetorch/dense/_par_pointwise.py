"""Large element-wise ``add``/``sub``/``mul``/``div`` and full ``sum`` on the thread policy's count.

NumPy runs a ufunc on one thread. For a large C-contiguous float32/float64 array these passes
are bound by one core's memory traffic (65,536 x 64 float32 ``a * b``: ~2 ms), and torch splits
them over the cores. Here one numba ``prange`` over equal, 64-byte aligned chunks (one per
thread) does the same pass; ``_jit.limit`` picks the count (load-aware below
``WHOLE_POOL_WORK``), and where it picks one thread the caller keeps NumPy's ufunc.

- **Element-wise**: two same-shape C-contiguous operands of one dtype, or one of them a scalar
  (a Python number converted as NumPy converts it, a 0-d array, or a fully broadcast view with
  every stride 0: a ``sum``'s gradient). IEEE operations element by element, so the result is
  bitwise NumPy's (inf and nan included); the output is allocated by NumPy (huge pages).
- **Sum**: NumPy's own pairwise summation (8 accumulators over blocks of at most 128, split at
  ``n // 2`` rounded down to a multiple of 8) with its top three levels cut into 8 leaves summed
  in parallel and added in the same tree: the result is bitwise NumPy's whatever the thread count
  (float32 accumulated in float32, as NumPy and torch do).

Anything else (other dtypes, strides, broadcasting, a small array, numba off or missing) returns
None and the caller runs NumPy.
"""

import math

from .. import _jit
from .._backend import CPU

__all__ = ["MIN_SIZE", "SUM_MIN_SIZE", "binary", "total", "warm_up"]

# elements from which a pass is worth a parallel region, measured on the 2-core machine with a
# free core (benchmarks/bench_free_core.py --only passes; float32, 2 threads / NumPy, medians of
# 1,100-2,600 rounds): a * b 0.52x at 512k, 0.49x at 2M; a stride-0 operand times an array 0.71x
# / 0.56x; sum 0.90x at 512k, 0.80x at 1M, 0.68x at 2M (it reads one array: less to split).
# Below, the wake-up of a sleeping worker is not paid back (and _jit.PAR_MIN_WORK is 512k).
MIN_SIZE = 1 << 19
SUM_MIN_SIZE = 1 << 20
# op codes of the element-wise kernels
OPS = {"add": 0, "subtract": 1, "multiply": 2, "true_divide": 3}
_LEAVES = 8  # leaves of the summation tree summed in parallel (a fixed tree: thread-independent)
_ALIGN = 16  # chunk starts in elements: 64 bytes of float32
_NUM_MAX = 3.4e38  # Python numbers taken as a scalar operand: below float32's largest value
_INT_MAX = 1 << 63  # (ints: within int64)


def _build():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False
    # module globals, not closure variables: numba keys its on-disk cache on closure variables,
    # and a jitted helper pickles differently in every process (a recompile per process)
    global _apply, _apply_vs, _apply_sv, _block, pairwise

    # each pass indexes views from 0: with a start offset numba's negative-index wrap blocked
    # LLVM's vectorization (1M float32 products 590 us against NumPy's 425 us, 425 us now)
    @njit(cache=True, boundscheck=False, error_model="numpy")
    def _apply(op, a, b, o):
        if op == 0:
            for i in range(o.size):
                o[i] = a[i] + b[i]
        elif op == 1:
            for i in range(o.size):
                o[i] = a[i] - b[i]
        elif op == 2:
            for i in range(o.size):
                o[i] = a[i] * b[i]
        else:
            for i in range(o.size):
                o[i] = a[i] / b[i]

    @njit(cache=True, boundscheck=False, error_model="numpy")
    def _apply_vs(op, a, s, o):
        if op == 0:
            for i in range(o.size):
                o[i] = a[i] + s
        elif op == 1:
            for i in range(o.size):
                o[i] = a[i] - s
        elif op == 2:
            for i in range(o.size):
                o[i] = a[i] * s
        else:
            for i in range(o.size):
                o[i] = a[i] / s

    @njit(cache=True, boundscheck=False, error_model="numpy")
    def _apply_sv(op, s, b, o):
        if op == 0:
            for i in range(o.size):
                o[i] = s + b[i]
        elif op == 1:
            for i in range(o.size):
                o[i] = s - b[i]
        elif op == 2:
            for i in range(o.size):
                o[i] = s * b[i]
        else:
            for i in range(o.size):
                o[i] = s / b[i]

    @njit(cache=True, parallel=True, boundscheck=False, error_model="numpy")
    def vv(op, a, b, o, nch, step):
        n = o.size
        for c in prange(nch):
            lo = c * step
            hi = min(n, lo + step)
            _apply(op, a[lo:hi], b[lo:hi], o[lo:hi])

    @njit(cache=True, parallel=True, boundscheck=False, error_model="numpy")
    def vs(op, a, s, o, nch, step):
        n = o.size
        for c in prange(nch):
            lo = c * step
            hi = min(n, lo + step)
            _apply_vs(op, a[lo:hi], s, o[lo:hi])

    @njit(cache=True, parallel=True, boundscheck=False, error_model="numpy")
    def sv(op, s, b, o, nch, step):
        n = o.size
        for c in prange(nch):
            lo = c * step
            hi = min(n, lo + step)
            _apply_sv(op, s, b[lo:hi], o[lo:hi])

    @njit(cache=True, boundscheck=False, error_model="numpy", inline="always")
    def _block(a, lo, n, zero):
        # NumPy's pairwise_sum of a[lo:lo + n], n <= 128: 8 accumulators, a fixed tree of them
        if n < 8:
            acc = zero
            for i in range(n):
                acc += a[lo + i]
            return acc
        b = a[lo:lo + n]
        r0, r1, r2, r3 = b[0], b[1], b[2], b[3]
        r4, r5, r6, r7 = b[4], b[5], b[6], b[7]
        for j in range(1, n // 8):
            i = 8 * j
            r0 += b[i]
            r1 += b[i + 1]
            r2 += b[i + 2]
            r3 += b[i + 3]
            r4 += b[i + 4]
            r5 += b[i + 5]
            r6 += b[i + 6]
            r7 += b[i + 7]
        acc = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(n - n % 8, n):
            acc += b[i]
        return acc

    @njit(cache=True, boundscheck=False, error_model="numpy")
    def pairwise(a, zero):
        """NumPy's pairwise sum of ``a``: halves split at a multiple of 8 down to blocks of at
        most 128. Walked with an explicit stack (a recursive call per node, array structs passed,
        cost 1.9x NumPy's time; the same speed as NumPy's now)."""
        n = a.size
        if n <= 128:
            return _block(a, 0, n, zero)
        los = np.empty(192, np.int64)  # pending nodes: start, size, expanded; depth < 64
        ns = np.empty(192, np.int64)
        done = np.zeros(192, np.uint8)
        vals = np.empty(96, a.dtype)  # sums of finished left siblings
        sp = 0
        vsp = 0
        los[0] = 0
        ns[0] = n
        while sp >= 0:
            lo = los[sp]
            m = ns[sp]
            if m <= 128:
                vals[vsp] = _block(a, lo, m, zero)
                vsp += 1
                sp -= 1
            elif done[sp] == 0:  # push the right half, then the left (summed first)
                done[sp] = 1
                h = m // 2
                h -= h % 8
                los[sp + 1] = lo + h
                ns[sp + 1] = m - h
                done[sp + 1] = 0
                los[sp + 2] = lo
                ns[sp + 2] = h
                done[sp + 2] = 0
                sp += 2
            else:  # both halves summed: left + right, as NumPy adds them
                vals[vsp - 2] = vals[vsp - 2] + vals[vsp - 1]
                vsp -= 1
                sp -= 1
        return vals[0]

    @njit(cache=True, parallel=True, boundscheck=False, error_model="numpy")
    def tree_sum(a, starts, sizes, part, zero):
        for j in prange(starts.size):
            lo = starts[j]
            part[j] = pairwise(a[lo:lo + sizes[j]], zero)
        # NumPy adds the tree to the reduction's start, +0.0 (all -0.0 sums to +0.0)
        return zero + (((part[0] + part[1]) + (part[2] + part[3]))
                       + ((part[4] + part[5]) + (part[6] + part[7])))

    return {"vv": vv, "vs": vs, "sv": sv, "tree_sum": tree_sum, "pairwise": pairwise}


def kernels():
    """The kernel group (a dict), or None when numba is off or missing."""
    return _jit.kernels("par_pointwise", _build, 6.0)


def _splits(n):
    """The 8 leaves (start, size) of NumPy's pairwise tree over n elements, three levels down."""
    spans = [(0, n)]
    for _ in range(3):
        nxt = []
        for lo, m in spans:
            h = m // 2
            h -= h % 8
            nxt += [(lo, h), (lo + h, m - h)]
        spans = nxt
    return spans


def _chunks(n, threads):
    step = -(-n // threads)
    step += -step % _ALIGN
    return -(-n // step), step


def _scalar_of(x, dt):
    """A stride-0 / 0-d array operand as one value of ``dt`` (None: not a scalar-like array)."""
    if x.ndim == 0 or not any(x.strides):
        return x.reshape(-1)[0] if x.ndim else x[()]
    return None


def binary(ufunc_name, a, b):
    """``ufunc(a, b)`` on the thread policy's count for a large ``a`` (NumPy array, ``a.size``
    at least ``MIN_SIZE``), or None (the caller runs NumPy): see the module docstring."""
    code = OPS.get(ufunc_name)
    dt = a.dtype
    if code is None or dt.kind != "f" or dt.itemsize < 4 or not dt.isnative:
        return None
    shape = a.shape
    big_a = a.flags.c_contiguous
    if b.__class__ is float or b.__class__ is int:
        # a number NumPy converts to the array's dtype (NEP 50); one past float32's range
        # (NumPy's overflow warning) or an int past int64 stays with NumPy
        if b.__class__ is float:
            ok = -_NUM_MAX < b < _NUM_MAX or math.isnan(b) or math.isinf(b)
        else:
            ok = -_INT_MAX < b < _INT_MAX
        if not big_a or not ok:
            return None
        mode, x, y = 1, a, dt.type(b)
    elif getattr(b, "dtype", None) == dt and b.ndim <= a.ndim:
        if big_a and b.shape == shape and b.flags.c_contiguous:
            mode, x, y = 0, a, b
        elif big_a and (b.ndim == 0 or (b.shape == shape and not any(b.strides))):
            mode, x, y = 1, a, _scalar_of(b, dt)
        elif b.shape == shape and b.flags.c_contiguous and not any(a.strides):
            mode, x, y = 2, _scalar_of(a, dt), b
        else:
            return None
    else:
        return None
    k = kernels()
    if k is None:
        return None
    n = a.size
    with _jit.limit(n) as threads:
        if threads < 2:
            return None
        nch, step = _chunks(n, threads)
        out = CPU.xp.empty(shape, dt)  # NumPy's allocation: huge pages for a large array
        o = out.reshape(-1)
        if mode == 0:
            k["vv"](code, x.reshape(-1), y.reshape(-1), o, nch, step)
        elif mode == 1:
            k["vs"](code, x.reshape(-1), y, o, nch, step)
        else:
            k["sv"](code, x, y.reshape(-1), o, nch, step)
    return out


def total(a):
    """``a.sum()`` (NumPy's value, bit for bit) on the thread policy's count for a large
    C-contiguous float32/float64 array ``a`` (``a.size`` at least ``SUM_MIN_SIZE``), as a 0-d
    array; or None (the caller runs NumPy)."""
    dt = a.dtype
    if dt.kind != "f" or dt.itemsize < 4 or not dt.isnative or not a.flags.c_contiguous \
            or a.size < 4096:
        return None  # (small: NumPy does not split a node of 128 or fewer, _splits would)
    k = kernels()
    if k is None:
        return None
    n = a.size
    with _jit.limit(n) as threads:
        if threads < 2:
            return None
        spans = _splits(n)
        np = CPU.xp
        starts = np.array([s for s, _ in spans], np.int64)
        sizes = np.array([m for _, m in spans], np.int64)
        part = np.empty(_LEAVES, dt)
        r = k["tree_sum"](a.reshape(-1), starts, sizes, part, dt.type(0))
    return np.asarray(r, dt)


def warm_up(dtype):
    """Run every kernel once on a small array of NumPy ``dtype`` (compiles them into numba's
    cache, or loads them): the public ops reach them only on a large array with two free cores.
    Returns False when numba is off or missing."""
    k = kernels()
    if k is None:
        return False
    np = CPU.xp
    dt = np.dtype(dtype)
    a = np.ones(64, dt)
    o = np.empty_like(a)
    s = dt.type(2)
    k["vv"](2, a, a, o, 2, 32)
    k["vs"](2, a, s, o, 2, 32)
    k["sv"](2, s, a, o, 2, 32)
    spans = _splits(a.size)
    k["tree_sum"](a, np.array([p for p, _ in spans], np.int64),
                  np.array([m for _, m in spans], np.int64), np.empty(_LEAVES, dt), dt.type(0))
    return True
