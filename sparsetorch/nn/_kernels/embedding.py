"""numba kernels for Embedding / EmbeddingBag (PERF-NOTES.md spike 3 and appendix).

- ``bag_sum``: a ``prange``-over-bags gather-sum, ``fastmath=False``: each bag is summed in id
  order, as torch does, so plain sums are bitwise comparable to torch's. Without per-sample
  weights each bag is one call of the ``gather_sum`` intrinsic (``_gather.py``: the sum held in
  vector registers, 0.5x the time of the loop below, which weighted bags still use).
- ``bag_grad``: the *coalesced* sparse gradient of the table straight from the output gradient
  ``G``: the entries grouped by id with a stable radix sort of ``id << bits | bag`` keys (no
  array the size of the table), then each distinct row summed by the ``gather_sum`` intrinsic
  in entry order from zero (on several threads the rows split among them: no atomics, the same
  bits).

Built on first use (``cache=True``, through ``sparsetorch._jit``), CPU backend only, and only
when numba imports and the numba switch (``sparsetorch._jit.use_numba``) is on. The thread count
is passed in (``numba.get_num_threads()`` inside a kernel makes it uncacheable).
"""

from ... import _jit

__all__ = ["aligned_empty", "kernels", "num_threads"]

prefetch = None  # set by _build: the numba prefetch intrinsic (see _prefetch.py)
gather_sum = gather_sum_checked = None  # set by _build: the gather-sum intrinsics (_gather.py)
bag_group = bag_scaled = bag_group_sum = None  # set by _build: helpers of the bag_grad kernels
bag_outside = bag_bounds = bag_sum = bag_sum_1 = None  # set by _build: forward kernels and helpers
BAG_PF = 16  # rows ahead to prefetch in weighted bags (16-32 measured best, 1M x 64 zipf gather)


def kernels(be):
    """The kernel namespace (a tuple), or None on other backends / without numba."""
    return _jit.kernels("embedding", _build, 8.0) if be.name == "cpu" else None


def num_threads():
    import numba

    return numba.get_num_threads()


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


def _build():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _gather, _prefetch
    except ImportError:
        return False
    # a module global, not a closure variable: numba keys its cache on the closure variables'
    # pickles, and an intrinsic's differs per process (the kernel would recompile every time)
    global gather_sum, gather_sum_checked, prefetch, bag_group, bag_scaled, bag_group_sum
    global bag_outside, bag_bounds, bag_sum, bag_sum_1
    prefetch = _prefetch.prefetch
    gather_sum = _gather.gather_sum
    gather_sum_checked = _gather.gather_sum_checked

    PF = 16  # rows ahead to prefetch (16-32 measured best on a 1M x 64 zipf gather)

    @njit(cache=True)
    def bag_outside(ids, bounds, N):
        """How many ids before the first bag and after the last are outside the table."""
        B = bounds.size - 1
        nbad = 0
        for j in range(bounds[0]):
            nbad += np.uint64(ids[j]) >= np.uint64(N)
        for j in range(bounds[B], ids.size):
            nbad += np.uint64(ids[j]) >= np.uint64(N)
        return nbad

    @njit(cache=True)
    def bag_bounds(ids, offsets, last, pad, mode, proto):
        """The common case's offsets checked and bags bounded: ``(bounds, scale)`` for
        ``offsets`` that start at 0, do not decrease and end within the ids (``last``: the final
        offset closes the last bag); ``scale`` the divisor of each bag in ``proto``'s dtype
        (mode 1: n, 3: sqrt(n), n its non-padding ids, at least 1; else empty). Invalid offsets
        give two empty arrays: the caller's full path then names the error."""
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
    def bag_sum(W, ids, bounds, pad, psw, scale):
        """out[b] = sum_{j in bag b, ids[j] != pad} psw[j] * W[ids[j]] / scale[b]; psw and scale
        may be empty (all ones). Each bag is summed from zero in id order (as torch's, so plain
        sums are bitwise equal); dividing (not multiplying by 1/n) is what torch's mean does.
        The ids are checked here: as the gather reads them (gather_sum_checked), or, for
        weighted bags, each bag's just before its loop (in L1 then; a separate pass read them
        from memory twice). An id outside the table, in a bag or not, gives an
        empty (0, D) result, which the caller turns into torch's IndexError. (The bag's body is
        written out in each kernel, with element indexing only: a helper inlined per bag, or a
        row view, costs atomic reference counts per bag, 2x the time of a 4096-bag call.)"""
        B = bounds.size - 1
        D = W.shape[1]
        N = np.uint64(W.shape[0])
        n = ids.size
        Wf = W.reshape(-1)
        has_w = psw.size > 0
        has_s = scale.size > 0
        nbad = bag_outside(ids, bounds, W.shape[0])
        checked = not has_w and W.shape[0] > 0 and D > 0  # (gather_sum_checked reads row 0)
        out = np.empty((B, D), W.dtype)
        for b in prange(B):
            lo = bounds[b]
            hi = bounds[b + 1]
            if checked:  # the sum in registers, the ids checked as they are read (_gather.py)
                nbad += gather_sum_checked(W, ids, lo, hi, pad, out, b)
            else:  # weighted bags, an empty table, zero-width rows: a checking pass first
                bad = 0
                for j in range(lo, hi):  # one unsigned compare (a negative id wraps to a huge one)
                    bad += np.uint64(ids[j]) >= N
                if bad:
                    nbad += bad
                    continue
                if not has_w:  # the sum in registers (see _gather.py)
                    gather_sum(W, ids, lo, hi, pad, out, b)
                else:
                    for d in range(D):
                        out[b, d] = 0
                    for j in range(lo, hi):
                        if j + BAG_PF < n:  # the row BAG_PF ids ahead: the gather is latency-bound
                            ahead = ids[j + BAG_PF] * D
                            for q in range(0, D, 16):
                                prefetch(Wf, ahead + q)
                        i = ids[j]
                        if i == pad:
                            continue
                        c = psw[j]
                        for d in range(D):
                            out[b, d] += c * W[i, d]
            if has_s:
                s = scale[b]
                for d in range(D):
                    out[b, d] /= s
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
        nbad = bag_outside(ids, bounds, W.shape[0])
        checked = not has_w and W.shape[0] > 0 and D > 0  # (gather_sum_checked reads row 0)
        out = np.empty((B, D), W.dtype)
        for b in range(B):
            lo = bounds[b]
            hi = bounds[b + 1]
            if checked:  # the sum in registers, the ids checked as they are read (_gather.py)
                nbad += gather_sum_checked(W, ids, lo, hi, pad, out, b)
            else:  # weighted bags, an empty table, zero-width rows: a checking pass first
                bad = 0
                for j in range(lo, hi):  # one unsigned compare (a negative id wraps to a huge one)
                    bad += np.uint64(ids[j]) >= N
                if bad:
                    nbad += bad
                    continue
                if not has_w:  # the sum in registers (see _gather.py)
                    gather_sum(W, ids, lo, hi, pad, out, b)
                else:
                    for d in range(D):
                        out[b, d] = 0
                    for j in range(lo, hi):
                        if j + BAG_PF < n:  # the row BAG_PF ids ahead: the gather is latency-bound
                            ahead = ids[j + BAG_PF] * D
                            for q in range(0, D, 16):
                                prefetch(Wf, ahead + q)
                        i = ids[j]
                        if i == pad:
                            continue
                        c = psw[j]
                        for d in range(D):
                            out[b, d] += c * W[i, d]
            if has_s:
                s = scale[b]
                for d in range(D):
                    out[b, d] /= s
        if nbad:
            return np.empty((0, D), W.dtype)
        return out

    @njit(cache=True)  # (bag_sum's loop is parallel)
    def bag_lean(W, ids, offsets, last, pad, mode, proto):
        """embedding_bag's common case in one call (no per-sample weights): bag_bounds then
        bag_sum. Returns ``(out, bounds, scale)``; empty bounds: invalid offsets; ``out`` of
        no rows: an id outside the table."""
        bounds, scale = bag_bounds(ids, offsets, last, pad, mode, proto)
        if bounds.size == 0:
            return np.empty((0, W.shape[1]), W.dtype), bounds, scale
        return bag_sum(W, ids, bounds, pad, proto, scale), bounds, scale

    @njit(cache=True)
    def bag_lean_1(W, ids, offsets, last, pad, mode, proto):
        """bag_lean on the calling thread."""
        bounds, scale = bag_bounds(ids, offsets, last, pad, mode, proto)
        if bounds.size == 0:
            return np.empty((0, W.shape[1]), W.dtype), bounds, scale
        return bag_sum_1(W, ids, bounds, pad, proto, scale), bounds, scale

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
    def bag_group(ids, bounds, pad, num, by_entry):
        """The entries of the bags grouped by id, for the table's gradient: ``(uniq, start,
        src, bag)``: the sorted distinct ids (``pad`` left out), group ``u`` is
        ``src[start[u]:start[u + 1]]``, each entry's bag (``by_entry``: its position ``j - lo``
        instead, whose bag is ``bag[j - lo]``; else ``bag`` is empty), in entry order within a
        group. A stable LSD radix sort of keys ``id << bits | payload`` over the id's bits only
        (digits of at most 11 bits): no array the size of the table (a bitmap of its rows and
        an int32 map of them cost misses in a cold cache, and a clearing pass per call)."""
        B = bounds.size - 1
        lo = bounds[0]
        hi = bounds[B]
        m = hi - lo
        lb = 1
        while (1 << lb) < (m if by_entry else B):
            lb += 1
        ib = 1
        while (1 << ib) < num:
            ib += 1
        bag = np.empty(m if by_entry else 0, np.int64)
        keys = np.empty(m, np.int64)
        k = 0
        for b in range(B):
            for j in range(bounds[b], bounds[b + 1]):
                i = ids[j]
                if by_entry:
                    bag[j - lo] = b
                if i != pad:
                    keys[k] = (i << lb) | ((j - lo) if by_entry else b)
                    k += 1
        keys = keys[:k]
        other = np.empty(k, np.int64)
        uniq = np.empty(k, np.int64)
        start = np.empty(k + 1, np.int64)
        U = 0
        if ib + lb <= 62:
            passes = (ib + 10) // 11
            db = (ib + passes - 1) // passes
            nb = 1 << db
            mask = nb - 1
            cnt = np.empty(nb, np.int64)
            src = keys
            dst = other
            for p in range(passes):
                sh = lb + p * db
                cnt[:] = 0
                for q in range(k):
                    cnt[(src[q] >> sh) & mask] += 1
                t = 0
                for d in range(nb):
                    c = cnt[d]
                    cnt[d] = t
                    t += c
                for q in range(k):
                    x = src[q]
                    d = (x >> sh) & mask
                    dst[cnt[d]] = x
                    cnt[d] += 1
                src, dst = dst, src
            pm = (1 << lb) - 1
            prev = -1
            for q in range(k):  # dst[q] is read (as src) no more once written
                x = src[q]
                i = x >> lb
                if i != prev:
                    uniq[U] = i
                    start[U] = q
                    U += 1
                    prev = i
                dst[q] = x & pm
            start[U] = k
            return uniq[:U], start[:U + 1], dst, bag
        # ids too wide to pack beside the payload: a stable argsort of the ids
        iv = np.empty(k, np.int64)
        k = 0
        for b in range(B):
            for j in range(bounds[b], bounds[b + 1]):
                i = ids[j]
                if i != pad:
                    iv[k] = i
                    other[k] = (j - lo) if by_entry else b
                    k += 1
        order = np.argsort(iv, kind="mergesort")
        prev = -1
        for q in range(k):
            i = iv[order[q]]
            if q == 0 or i != prev:
                uniq[U] = i
                start[U] = q
                U += 1
                prev = i
            keys[q] = other[order[q]]
        start[U] = k
        return uniq[:U], start[:U + 1], keys, bag

    @njit(cache=True)
    def bag_scaled(G, scale):
        """``G / scale[:, None]`` (the bits of dividing each entry's row by its bag's divisor)."""
        B, D = G.shape
        out = np.empty((B, D), G.dtype)
        for b in range(B):
            q = scale[b]
            for d in range(D):
                out[b, d] = G[b, d] / q
        return out

    @njit(cache=True, inline="always")
    def bag_group_sum(G, coef, lo, start, src, bag, out, u):
        """``out[u]``: the group's rows of G summed from zero in entry order (the register-held
        gather-sum), each times ``coef[j]`` when coef is given (src then holds entries)."""
        if coef.size == 0:
            gather_sum(G, src, start[u], start[u + 1], -1, out, u)
            return
        D = G.shape[1]
        for d in range(D):  # (element indexing: no row views, whose reference counts are atomic)
            out[u, d] = 0
        for q in range(start[u], start[u + 1]):
            j = src[q]
            c = coef[j + lo]
            b = bag[j]
            for d in range(D):
                out[u, d] += c * G[b, d]

    @njit(parallel=True, cache=True)
    def bag_grad_par(ids, bounds, G, pad, coef, scale, num):
        """The coalesced gradient of the table: ``(rows, values)``; row ids[j] receives
        coef[j] * (G[b] / scale[b]) (coef, scale may be empty: ones). Entries grouped by
        bag_group (serial), the rows summed in parallel, each by one thread in entry order (no
        atomics: the bits of the serial kernel)."""
        Gs = bag_scaled(G, scale) if scale.size > 0 else G
        uniq, start, src, bag = bag_group(ids, bounds, pad, num, coef.size > 0)
        U = uniq.size
        out = np.empty((U, G.shape[1]), G.dtype)
        lo = bounds[0]
        for u in prange(U):
            bag_group_sum(Gs, coef, lo, start, src, bag, out, u)
        return uniq, out

    @njit(cache=True)
    def bag_grad_1(ids, bounds, G, pad, coef, scale, num):
        """bag_grad_par on the calling thread."""
        Gs = bag_scaled(G, scale) if scale.size > 0 else G
        uniq, start, src, bag = bag_group(ids, bounds, pad, num, coef.size > 0)
        U = uniq.size
        out = np.empty((U, G.shape[1]), G.dtype)
        lo = bounds[0]
        for u in range(U):
            bag_group_sum(Gs, coef, lo, start, src, bag, out, u)
        return uniq, out

    def bag_grad(ids, bounds, G, pad, coef, scale, num, T):
        if T <= 1:
            return bag_grad_1(ids, bounds, G, pad, coef, scale, num)
        return bag_grad_par(ids, bounds, G, pad, coef, scale, num)

    @njit(cache=True)
    def bag_prep(ids, offsets, last, pad, mode, proto):
        """bag_bounds as a kernel of its own (the ids are checked by the forward kernel)."""
        return bag_bounds(ids, offsets, last, pad, mode, proto)

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
            for d in range(D):  # (elements: a row view costs two atomic reference counts)
                out[j, d] = W[i, d]
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
            for d in range(D):  # (elements: a row view costs two atomic reference counts)
                out[j, d] = W[i, d]
        return 0

    return (bag_sum, bag_max, bag_grad, bag_sum_1, bag_prep, take_rows, take_rows_1, bag_lean,
            bag_lean_1)
