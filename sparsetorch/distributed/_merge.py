"""Sum of the ranks' coalesced sparse parts by a k-way merge (the sparse all-reduce's last step).

After the all-gather, rank ``r``'s entries are sorted unique linear indices with their value
rows. A general coalesce would sort all of them again; a merge of the ``p`` sorted runs finds
each entry's output row in one pass, and a second pass adds the value rows there, in rank
order (so every rank computes bit-identical sums). numba kernels (``cache=True``, CPU only),
built on first use (``sparsetorch._jit``); without numba (or with it switched off), on other backends or for many ranks, callers fall back to
the coalesce kernel.
"""

from .. import _jit

__all__ = ["merge_sum"]

MAX_RUNS = 64  # the merge picks the smallest head in O(runs): beyond this, coalesce is better


def merge_sum(be, keys, vals, starts):
    """``(unique sorted keys, summed rows)`` of the sorted runs ``keys[starts[r]:starts[r+1]]``
    (``vals``: one row per key, 2-D), or None when the kernels cannot be used."""
    if be.name != "cpu" or len(starts) - 1 > MAX_RUNS or vals.dtype.kind not in "fiuc" \
            or vals.dtype.itemsize < 2:
        return None
    k = _jit.kernels("dist_merge", _build, 2.0)
    if k is None:
        return None
    positions, gather_sum = k
    ukeys, pos = positions(keys, starts)
    return ukeys, gather_sum(vals, pos, ukeys.shape[0])


def _build():
    try:
        import numpy as np
        from numba import njit
    except ImportError:
        return False

    @njit(cache=True)
    def positions(keys, starts):
        """Merge the sorted runs: the output row of every entry, and the distinct keys."""
        p = starts.shape[0] - 1
        ptr = starts[:-1].copy()
        pos = np.empty(keys.shape[0], np.int64)
        ukeys = np.empty(keys.shape[0], np.int64)
        u = 0
        while True:
            best = -1
            m = 0
            for r in range(p):
                if ptr[r] < starts[r + 1]:
                    kk = keys[ptr[r]]
                    if best < 0 or kk < m:
                        m = kk
                        best = r
            if best < 0:
                break
            for r in range(p):
                if ptr[r] < starts[r + 1] and keys[ptr[r]] == m:
                    pos[ptr[r]] = u
                    ptr[r] += 1
            ukeys[u] = m
            u += 1
        return ukeys[:u].copy(), pos

    @njit(cache=True)
    def gather_sum(vals, pos, n_out):
        """out[pos[j]] += vals[j] in entry (= rank) order. The first entry of a row is copied,
        not added to zeros: one write pass over ``out`` (no zero fill, no extra read)."""
        d = vals.shape[1]
        out = np.empty((n_out, d), vals.dtype)
        seen = np.zeros(n_out, np.bool_)
        for j in range(vals.shape[0]):
            o = pos[j]
            if seen[o]:
                for c in range(d):
                    out[o, c] += vals[j, c]
            else:
                seen[o] = True
                for c in range(d):
                    out[o, c] = vals[j, c]
        return out

    return positions, gather_sum
