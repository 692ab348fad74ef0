"""numba kernels for Embedding / EmbeddingBag (PERF-NOTES.md spike 3 and appendix).

- ``bag_sum``: a ``prange``-over-bags gather-sum, ``fastmath=False``: each bag is summed in id
  order, as torch does, so plain sums are bitwise comparable to torch's. Without per-sample
  weights each bag is one call of the ``gather_sum`` intrinsic (``_gather.py``: the sum held in
  vector registers, 0.5x the time of the loop below, which weighted bags still use).
- ``bag_grad``: the *coalesced* sparse gradient of the table straight from the output gradient
  ``G`` (no repeat + sort): unique ids by "mark and scan" over a bitmap of the table's rows
  (an int32 scratch array the size of the table maps each id to its output row), then on one
  thread a single scatter pass, on several a counting sort by output row and rows summed in
  parallel (no atomics, deterministic: each row is summed in entry order either way).

Built on first use (``cache=True``, through ``sparsetorch._jit``), CPU backend only, and only
when numba imports and the numba switch (``sparsetorch._jit.use_numba``) is on. The thread count
is passed in (``numba.get_num_threads()`` inside a kernel makes it uncacheable).
"""

import threading

from ... import _jit

__all__ = ["aligned_empty", "kernels", "num_threads", "release_scratch", "scratch"]

prefetch = None  # set by _build: the numba prefetch intrinsic (see _prefetch.py)
gather_sum = None  # set by _build: the numba gather-sum intrinsic (see _gather.py)
trailing_zeros = None  # set by _build: numba's count-trailing-zeros intrinsic
_SCRATCH = {}  # table size -> int32 array of -1 (the "mark" array), checked out while in use
_LOCK = threading.Lock()


def kernels(be):
    """The kernel namespace (a tuple), or None on other backends / without numba."""
    return _jit.kernels("embedding", _build, 8.0) if be.name == "cpu" else None


def num_threads():
    import numba

    return numba.get_num_threads()


def scratch(xp, n):
    """``(slot, bits)`` for a table of ``n`` rows: an int32 array of ``n`` entries, all -1, and a
    uint64 bitmap of ``ceil(n / 64)`` zero words (returned by ``release_scratch`` in that state)."""
    with _LOCK:
        s = _SCRATCH.pop(n, None)
    if s is None:
        s = (xp.full(n, -1, dtype=xp.int32), xp.zeros((n + 63) // 64, dtype=xp.uint64))
    return s


def aligned_empty(xp, shape, dtype, align=64):
    """An uninitialised C-contiguous array whose data starts on an ``align``-byte boundary
    (NumPy's allocator gives 16): a table's 64-byte row (16 float32) is then one cache line,
    not two, for the gathers (torch's allocator aligns to 64 too)."""
    dtype = xp.dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    buf = xp.empty(n * dtype.itemsize + align, xp.uint8)
    k = -buf.ctypes.data % align
    return buf[k:k + n * dtype.itemsize].view(dtype).reshape(shape)


def release_scratch(n, s):
    with _LOCK:
        _SCRATCH[n] = s


def _build():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _gather, _prefetch
    except ImportError:
        return False
    # a module global, not a closure variable: numba keys its cache on the closure variables'
    # pickles, and an intrinsic's differs per process (the kernel would recompile every time)
    global gather_sum, prefetch, trailing_zeros
    prefetch = _prefetch.prefetch
    gather_sum = _gather.gather_sum
    from numba.cpython.unsafe.numbers import trailing_zeros

    PF = 16  # rows ahead to prefetch (16-32 measured best on a 1M x 64 zipf gather)

    @njit(parallel=True, cache=True)
    def bag_sum(W, ids, bounds, pad, psw, scale):
        """out[b] = sum_{j in bag b, ids[j] != pad} psw[j] * W[ids[j]] / scale[b]; psw and scale
        may be empty (all ones). Each bag is summed from zero in id order (as torch's, so plain
        sums are bitwise equal); dividing (not multiplying by 1/n) is what torch's mean does.
        The ids are checked here, each bag's just before its gather (in L1 then; a separate
        pass read them from memory twice): an id outside the table, in a bag or not, gives an
        empty (0, D) result, which the caller turns into torch's IndexError."""
        B = bounds.size - 1
        D = W.shape[1]
        N = np.uint64(W.shape[0])
        n = ids.size
        Wf = W.reshape(-1)
        has_w = psw.size > 0
        has_s = scale.size > 0
        nbad = 0
        for j in range(bounds[0]):  # ids before the first bag and after the last
            nbad += np.uint64(ids[j]) >= N
        for j in range(bounds[B], n):
            nbad += np.uint64(ids[j]) >= N
        out = np.zeros((B, D), W.dtype) if has_w else np.empty((B, D), W.dtype)
        for b in prange(B):
            lo = bounds[b]
            hi = bounds[b + 1]
            bad = 0
            for j in range(lo, hi):  # one unsigned compare (a negative id wraps to a huge one)
                bad += np.uint64(ids[j]) >= N
            if bad:
                nbad += bad
                continue
            o = out[b]
            if not has_w:  # the sum in registers (see _gather.py)
                gather_sum(W, ids, lo, hi, pad, out, b)
            else:
                for j in range(lo, hi):
                    if j + PF < n:  # ask for the row PF ids ahead: the gather is latency-bound
                        ahead = ids[j + PF] * D
                        for q in range(0, D, 16):
                            prefetch(Wf, ahead + q)
                    i = ids[j]
                    if i == pad:
                        continue
                    c = psw[j]
                    w = W[i]
                    for d in range(D):
                        o[d] += c * w[d]
            if has_s:
                s = scale[b]
                for d in range(D):
                    o[d] /= s
        if nbad:
            return np.empty((0, D), W.dtype)
        return out

    @njit(cache=True)
    def bag_sum_1(W, ids, bounds, pad, psw, scale):
        """bag_sum on the calling thread (the serial twin for small work: no parallel
        region to enter, no thread count to switch)."""
        B = bounds.size - 1
        D = W.shape[1]
        N = np.uint64(W.shape[0])
        n = ids.size
        Wf = W.reshape(-1)
        has_w = psw.size > 0
        has_s = scale.size > 0
        nbad = 0
        for j in range(bounds[0]):  # ids before the first bag and after the last
            nbad += np.uint64(ids[j]) >= N
        for j in range(bounds[B], n):
            nbad += np.uint64(ids[j]) >= N
        out = np.zeros((B, D), W.dtype) if has_w else np.empty((B, D), W.dtype)
        for b in range(B):
            lo = bounds[b]
            hi = bounds[b + 1]
            bad = 0
            for j in range(lo, hi):  # one unsigned compare (a negative id wraps to a huge one)
                bad += np.uint64(ids[j]) >= N
            if bad:
                nbad += bad
                continue
            o = out[b]
            if not has_w:  # the sum in registers (see _gather.py)
                gather_sum(W, ids, lo, hi, pad, out, b)
            else:
                for j in range(lo, hi):
                    if j + PF < n:  # ask for the row PF ids ahead: the gather is latency-bound
                        ahead = ids[j + PF] * D
                        for q in range(0, D, 16):
                            prefetch(Wf, ahead + q)
                    i = ids[j]
                    if i == pad:
                        continue
                    c = psw[j]
                    w = W[i]
                    for d in range(D):
                        o[d] += c * w[d]
            if has_s:
                s = scale[b]
                for d in range(D):
                    o[d] /= s
        if nbad:
            return np.empty((0, D), W.dtype)
        return out

    @njit(parallel=True, cache=True)
    def bag_max(W, ids, bounds, pad):
        """Per-bag, per-column max and the entry position that holds it (-1: empty bag)."""
        B = bounds.size - 1
        D = W.shape[1]
        out = np.zeros((B, D), W.dtype)
        arg = np.full((B, D), -1, np.int64)
        for b in prange(B):
            for j in range(bounds[b], bounds[b + 1]):
                i = ids[j]
                if i == pad:
                    continue
                for d in range(D):
                    v = W[i, d]
                    # NaN propagates (the dense max of the bag): the first NaN wins and stays
                    if arg[b, d] < 0 or v > out[b, d] or (v != v and out[b, d] == out[b, d]):
                        out[b, d] = v
                        arg[b, d] = j
        return out, arg

    @njit(cache=True)
    def unique_mark(ids, pad, slot, bits):
        """Sorted distinct ids (``pad`` left out); ``slot[id]`` = its output row. The ids are
        marked in a bitmap (one bit per table row), whose words are scanned: a 100k-row table
        costs 1.6k words (the int32 scan of every row took 37 us per call at batch 128)."""
        one = np.uint64(1)
        for j in range(ids.size):
            i = ids[j]
            if i != pad:
                bits[i >> 6] |= one << np.uint64(i & 63)
        U = 0
        uniq = np.empty(ids.size, np.int64)
        for w in range(bits.size):
            x = bits[w]
            if x != 0:
                bits[w] = 0
                while x != 0:
                    i = w * 64 + np.int64(trailing_zeros(x))
                    slot[i] = U
                    uniq[U] = i
                    U += 1
                    x &= x - one
        return uniq[:U]

    # bag_grad takes unique_mark's result as an argument instead of calling it: a cache=True
    # kernel that calls another closure-defined kernel never matches numba's cache index, so it
    # was recompiled (10 s) in every new process
    @njit(parallel=True, cache=True)
    def bag_grad_rows(ids, bounds, G, pad, coef, scale, slot, T, uniq):
        """The values of the coalesced gradient of the table (its rows: ``uniq``, sorted): row
        ids[j] receives coef[j] * (G[b] / scale[b]) (coef, scale may be empty: ones). A counting sort groups
        the entries by output row (stable: each row is summed in entry order), then the rows
        are summed in parallel, each by one thread (no atomics, deterministic)."""
        B = bounds.size - 1
        D = G.shape[1]
        U = uniq.size
        lo = bounds[0]
        hi = bounds[B]
        bag = np.empty(hi - lo, np.int64)
        for b in range(B):
            for j in range(bounds[b], bounds[b + 1]):
                bag[j - lo] = b
        start = np.zeros(U + 1, np.int64)
        for j in range(lo, hi):
            i = ids[j]
            if i != pad:
                start[slot[i] + 1] += 1
        for u in range(U):
            start[u + 1] += start[u]
        pos = start[:U].copy()
        order = np.empty(start[U], np.int64)
        for j in range(lo, hi):
            i = ids[j]
            if i != pad:
                s = slot[i]
                order[pos[s]] = j
                pos[s] += 1
        out = np.zeros((U, D), G.dtype)
        has_c = coef.size > 0
        has_s = scale.size > 0
        for u in prange(U):
            o = out[u]
            for k in range(start[u], start[u + 1]):
                j = order[k]
                b = bag[j - lo]
                g = G[b]
                if has_s:
                    q = scale[b]
                    if has_c:
                        c = coef[j]
                        for d in range(D):
                            o[d] += c * (g[d] / q)
                    else:
                        for d in range(D):
                            o[d] += g[d] / q
                elif has_c:
                    c = coef[j]
                    for d in range(D):
                        o[d] += c * g[d]
                else:
                    for d in range(D):
                        o[d] += g[d]
        for k in range(U):
            slot[uniq[k]] = -1
        return out

    @njit(cache=True)
    def bag_grad_scatter(ids, bounds, G, pad, coef, scale, slot, uniq):
        """bag_grad_rows on one thread: one pass over the entries adding each into its output
        row (rows summed in entry order, as bag_grad_rows: the same bits), no counting sort."""
        B = bounds.size - 1
        D = G.shape[1]
        U = uniq.size
        out = np.zeros((U, D), G.dtype)
        has_c = coef.size > 0
        has_s = scale.size > 0
        for b in range(B):
            g = G[b]
            q = scale[b] if has_s else G.dtype.type(1)
            for j in range(bounds[b], bounds[b + 1]):
                i = ids[j]
                if i == pad:
                    continue
                o = out[slot[i]]
                if has_s:
                    if has_c:
                        c = coef[j]
                        for d in range(D):
                            o[d] += c * (g[d] / q)
                    else:
                        for d in range(D):
                            o[d] += g[d] / q
                elif has_c:
                    c = coef[j]
                    for d in range(D):
                        o[d] += c * g[d]
                else:
                    for d in range(D):
                        o[d] += g[d]
        for k in range(U):
            slot[uniq[k]] = -1
        return out

    def bag_grad(ids, bounds, G, pad, coef, scale, scratch, T):
        slot, bits = scratch
        uniq = unique_mark(ids, pad, slot, bits)
        # (the kernels return only the values: numba boxes every array a kernel returns, with a
        # _numba_unpickle call for its type, ~0.12 us each; uniq is already here)
        if T <= 1:  # measured 1.9 vs 2.4 ms (1M x 64 table, 4096 bags of 20 zipf ids)
            return uniq, bag_grad_scatter(ids, bounds, G, pad, coef, scale, slot, uniq)
        return uniq, bag_grad_rows(ids, bounds, G, pad, coef, scale, slot, T, uniq)

    @njit(cache=True)
    def bag_prep(ids, offsets, last, pad, mode, proto):
        """The common case's offsets checked and bags bounded in one call: ``(bounds, scale)``
        for ``offsets`` that start at 0, do not decrease and end within the ids (``last``: the
        final offset closes the last bag); ``scale`` the divisor of each bag in ``proto``'s
        dtype (mode 1: n, 3: sqrt(n), n its non-padding ids, at least 1; else empty). Invalid
        offsets give two empty arrays: the caller's full path then names the error. The ids
        are checked by the forward kernel (bag_sum), not here."""
        n = ids.size
        bad = False
        m = offsets.size
        B = max(m - 1 if last else m, 0)
        bounds = np.empty(B + 1, np.int64)
        if m > 0:
            bad |= offsets[0] != 0
            bad |= offsets[m - 1] > n
            for b in range(m - 1):
                bad |= offsets[b + 1] < offsets[b]
            for b in range(B):
                bounds[b] = offsets[b]
        if not last or m == 0:
            bounds[B] = n if m > 0 or not last else 0
        else:
            bounds[B] = offsets[m - 1]
        if bad:
            return np.empty(0, np.int64), proto[:0]
        if mode != 1 and mode != 3:
            return bounds, proto[:0]
        scale = np.empty(B, proto.dtype)
        for b in range(B):
            c = 0
            for j in range(bounds[b], bounds[b + 1]):
                c += ids[j] != pad
            c = max(c, 1)
            scale[b] = c if mode == 1 else np.sqrt(np.float64(c))
        return bounds, scale

    @njit(parallel=True, cache=True)
    def take_rows(W, ids, out):
        """``out[:] = W[ids]`` for Embedding's forward (1-D int64 ids, at least one; ``out``
        (n, D) allocated by the caller: NumPy gives a large array transparent huge pages, numba's
        own allocator does not, and 65,536 x 64 float32 rows cost 4,096 page faults, ~7 ms, in
        every iteration of a process whose heap gives the block back), each id checked (returns
        how many are outside the table: the caller raises torch's IndexError) and the row PF ids
        ahead prefetched (np.take does not: 1.2 ms for 65,536 rows of a 1M x 64 table)."""
        n = ids.size
        D = W.shape[1]
        N = np.uint64(W.shape[0])
        Wf = W.reshape(-1)
        nbad = 0
        for j in prange(n):
            i = ids[j]
            if np.uint64(i) >= N:
                nbad += 1
                continue
            if j + PF < n:
                ahead = np.uint64(ids[j + PF])
                if ahead < N:
                    a = np.int64(ahead) * D
                    for q in range(0, D, 16):
                        prefetch(Wf, a + q)
                    prefetch(Wf, a + D - 1)
            o = out[j]
            w = W[i]
            for d in range(D):
                o[d] = w[d]
        return nbad

    @njit(cache=True)
    def take_rows_1(W, ids, out):
        """take_rows on the calling thread (small work)."""
        n = ids.size
        D = W.shape[1]
        N = np.uint64(W.shape[0])
        Wf = W.reshape(-1)
        for j in range(n):
            i = ids[j]
            if np.uint64(i) >= N:
                return 1
            if j + PF < n:
                ahead = np.uint64(ids[j + PF])
                if ahead < N:
                    a = np.int64(ahead) * D
                    for q in range(0, D, 16):
                        prefetch(Wf, a + q)
                    prefetch(Wf, a + D - 1)
            o = out[j]
            w = W[i]
            for d in range(D):
                o[d] = w[d]
        return 0

    return bag_sum, bag_max, bag_grad, bag_sum_1, bag_prep, take_rows, take_rows_1
