"""Sums over runs of sorted stored entries: coalesce by one SIMD sort of packed keys.

Kernel floor: ``be`` and arrays in, arrays out. numba is imported lazily through ``_jit``
(CPU only); every function returns None where its kernel can't be used, and the caller keeps
its NumPy path.

**Coalesce** (:func:`coalesce_packed`). Each stored entry's index columns are packed into one
int64 by bit fields (``row << width(cols) | col``, the same order as the row-major linear index,
but unpacked by shifts instead of a ``divmod`` per dim), shifted left and or-ed with the entry's
position, so one ``sort`` is a *stable* argsort. Where NumPy's sort is the AVX-512 one
(x86-simd-sort: 2M keys in ~30 ms) this beats the row-bucket counting sort of ``_rowsort``,
whose scattered writes miss the cache on every entry (~2.5x slower on the benchmark machine).
Two numba passes around the sort: the keys are packed in one parallel pass, and the runs of
equal indices are found, their values summed in input order (so the result is the same, bit for
bit, as the row-bucket kernel's and NumPy's), and the indices unpacked in another.
"""

from .. import _jit

__all__ = ["coalesce_packed", "run_starts", "simd_sort"]

_SIMD = []  # [bool]: NumPy's sort is the AVX-512 one on this machine (found at first use)


def simd_sort(be):
    """True where ``be.xp.sort`` of int64 keys is NumPy's AVX-512 sort (x86-simd-sort)."""
    if be.name != "cpu":
        return False
    if not _SIMD:
        xp = be.xp
        feats = getattr(getattr(getattr(xp, "_core", None), "_multiarray_umath", None),
                        "__cpu_features__", None) or {}
        major = int(xp.__version__.split(".")[0])
        _SIMD.append(bool(feats.get("AVX512_SKX")) and major >= 2)
    return _SIMD[0]


def run_starts(be, keys, nkeys):
    """Positions where the runs of equal values begin in sorted (ascending) ``keys``, integers in
    ``[0, nkeys)``: the ``flatnonzero`` of "differs from the previous one". With few possible
    keys next to the entries (a row sum of a coalesced COO: 8k rows, 3.3M entries), a galloping
    search from each run's start (numba; ``O(log run)`` per run, near accesses) or NumPy's
    ``searchsorted`` per possible key, instead of a pass over all the entries and a mask as long
    as them."""
    xp = be.xp
    n = keys.shape[0]
    if n == 0:
        return xp.zeros(0, dtype=xp.int64)
    if nkeys * 8 <= n:
        k = _kernels(be)
        if k is not None:  # a galloping search from each run's start: O(log run) per run
            return k.gallop_starts(keys)
        bounds = xp.searchsorted(keys, xp.arange(nkeys + 1, dtype=keys.dtype))
        return bounds[:-1][bounds[1:] > bounds[:-1]].astype(xp.int64, copy=False)
    new = xp.empty(n, dtype=bool)
    new[0] = True
    xp.not_equal(keys[1:], keys[:-1], out=new[1:])
    return xp.flatnonzero(new)


def _kernels(be):
    return _jit.kernels("runsum", _build, 4.0) if be.name == "cpu" else None


def coalesce_packed(be, indices, sizes, vals):
    """``(indices, values)`` of the coalesced COO (sorted row-major, duplicates summed in input
    order) for 1-D ``vals``, by one sort of packed keys; None where this path does not apply
    (another backend, numba off, NumPy's sort not the SIMD one, values numba can't sum, or the
    index bit fields plus the position do not fit in 63 bits)."""
    if vals.ndim != 1 or vals.dtype.kind not in "fiuc" or vals.dtype.itemsize < 2:
        return None
    if vals.dtype.kind == "f" and vals.dtype.itemsize == 2:
        return None  # float16 has no numba type
    if not simd_sort(be):
        return None
    nnz = indices.shape[1]
    widths = [max(int(s) - 1, 0).bit_length() for s in sizes]
    shift = max(int(nnz - 1).bit_length(), 1)
    if sum(widths) + shift > 63 or not sizes:
        return None
    k = _kernels(be)
    if k is None:
        return None
    xp = be.xp
    w = xp.asarray(widths, dtype=xp.int64)
    keys = xp.empty(nnz, dtype=xp.int64)
    idx = indices if indices.dtype == xp.int64 else indices.astype(xp.int64)
    with _jit.limit(nnz) as nt:
        k.pack_keys(idx, w, shift, keys)
    keys.sort()
    with _jit.limit(nnz) as nt:
        return k.run_sum(keys, shift, vals, w, 4 * nt if nt > 1 else 1)


def _build():
    try:
        import numpy as np
        from numba import njit, prange
    except ImportError:
        return False

    @njit(parallel=True, cache=True)
    def pack_keys(idx, widths, shift, out):
        nd = idx.shape[0]
        for q in prange(idx.shape[1]):
            key = 0
            for d in range(nd):
                key = (key << widths[d]) | idx[d, q]
            out[q] = (key << shift) | q

    @njit(parallel=True, cache=True)
    def run_sum(keys, shift, vals, widths, nblocks):
        n = keys.shape[0]
        nd = widths.shape[0]
        mask = (np.int64(1) << shift) - 1
        bounds = np.empty(nblocks + 1, np.int64)
        for b in range(nblocks + 1):
            bounds[b] = n * b // nblocks
        first = np.zeros(nblocks + 1, np.int64)  # runs starting in the blocks before block b
        for b in prange(nblocks):
            c = 0
            for i in range(bounds[b], bounds[b + 1]):
                if i == 0 or (keys[i] >> shift) != (keys[i - 1] >> shift):
                    c += 1
            first[b + 1] = c
        for b in range(nblocks):
            first[b + 1] += first[b]
        total = first[nblocks]
        out_idx = np.empty((nd, total), np.int64)
        out_v = np.empty(total, vals.dtype)
        for b in prange(nblocks):
            # each block sums the runs that start in it (a run may continue past its end)
            u = first[b]
            i = bounds[b]
            e = bounds[b + 1]
            while i < e and i > 0 and (keys[i] >> shift) == (keys[i - 1] >> shift):
                i += 1
            while i < e:
                key = keys[i] >> shift
                acc = vals[keys[i] & mask]
                j = i + 1
                while j < n and (keys[j] >> shift) == key:
                    acc += vals[keys[j] & mask]
                    j += 1
                out_v[u] = acc
                for d in range(nd - 1, -1, -1):
                    wd = widths[d]
                    out_idx[d, u] = key & ((np.int64(1) << wd) - 1)
                    key >>= wd
                u += 1
                i = j
        return out_idx, out_v

    @njit(cache=True)
    def gallop_starts(keys):
        n = keys.shape[0]
        starts = np.empty(n, np.int64)  # pages touched only as far as written
        u = 0
        i = 0
        while i < n:
            starts[u] = i
            u += 1
            key = keys[i]
            lo = i  # keys[lo] == key; find hi, the first position past the run
            step = 1
            hi = i + 1
            while hi < n and keys[hi] == key:
                lo = hi
                step *= 2
                hi = lo + step
            hi = min(hi, n)
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if keys[mid] == key:
                    lo = mid
                else:
                    hi = mid
            i = hi
        return starts[:u].copy()

    class Kernels:
        pass

    ns = Kernels()
    ns.pack_keys, ns.run_sum, ns.gallop_starts = pack_keys, run_sum, gallop_starts
    return ns
