"""topk with torch's CPU order, ties and ``sorted=False`` included (numba, CPU only).

torch's CPU ``topk`` fills a queue of (value, index) pairs per slice and runs the C++ standard
library on it: ``std::partial_sort`` of the first k when ``k * 64 <= n``, otherwise
``std::nth_element`` at k - 1 followed (when ``sorted``) by ``std::sort`` of the first k - 1; the
comparator puts NaN first (last for ``largest=False``). Neither algorithm is stable, so among
tied values torch returns a particular order that no sort of ours reproduces: a recommender's
top 20 of sigmoid scores saturated at 1.0 came out in another order and its NDCG differed.

This module runs the same algorithms as GNU libstdc++ (heap select + sort heap; introselect
with median-of-three pivots and insertion sort below 4 elements; introsort with the 16-element
final insertion sort), written from their published descriptions, so the indices match torch
exactly. The kernel is numba (``cache=True``, imported lazily); without numba the caller keeps
its stable order (same values, ties in index order).
"""

from .. import _jit

__all__ = ["topk_rows"]


def topk_rows(be, keys, k, largest, sorted_):
    """Indices ``(rows, k)`` of the k largest (smallest) of each row of the C-contiguous 2-D
    ``keys`` in torch's CPU order, or None when the kernel can't be used (not CPU, no numba,
    a dtype numba has no type for)."""
    if be.name != "cpu" or keys.dtype.kind not in "fiu" or keys.dtype.itemsize < 4 \
            and keys.dtype.kind == "f":
        return None
    k_ = _jit.kernels("topk_order", _build, 4.0)
    if k_ is None:
        return None
    return k_(keys, k, bool(largest), bool(sorted_))


def _build():
    try:
        import numpy as np
        from numba import njit
    except ImportError:
        return False
    # module globals, not closure variables: numba keys its on-disk cache on closure variables,
    # and a jitted helper pickles differently in every process (a recompile per process)
    global before, swap, push_heap, adjust_heap, pop_heap, heap_select, sort_heap
    global partition_pivot, linear_insert, insertion_sort, lg, nth_element, std_sort

    @njit(cache=True, inline="always")
    def before(x, y, largest):  # torch's comparator: x goes before y
        if largest:
            return (x != x and y == y) or x > y
        return (x == x and y != y) or x < y

    @njit(cache=True, inline="always")
    def swap(qv, qi, a, b):
        tv = qv[a]
        qv[a] = qv[b]
        qv[b] = tv
        ti = qi[a]
        qi[a] = qi[b]
        qi[b] = ti

    @njit(cache=True)
    def push_heap(qv, qi, first, hole, top, v, i, largest):
        parent = (hole - 1) // 2
        while hole > top and before(qv[first + parent], v, largest):
            qv[first + hole] = qv[first + parent]
            qi[first + hole] = qi[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        qv[first + hole] = v
        qi[first + hole] = i

    @njit(cache=True)
    def adjust_heap(qv, qi, first, hole, n, v, i, largest):
        top = hole
        child = hole
        while child < (n - 1) // 2:
            child = 2 * (child + 1)
            if before(qv[first + child], qv[first + child - 1], largest):
                child -= 1
            qv[first + hole] = qv[first + child]
            qi[first + hole] = qi[first + child]
            hole = child
        if (n & 1) == 0 and child == (n - 2) // 2:
            child = 2 * (child + 1)
            qv[first + hole] = qv[first + child - 1]
            qi[first + hole] = qi[first + child - 1]
            hole = child - 1
        push_heap(qv, qi, first, hole, top, v, i, largest)

    @njit(cache=True)
    def pop_heap(qv, qi, first, last, result, largest):
        v = qv[result]
        i = qi[result]
        qv[result] = qv[first]
        qi[result] = qi[first]
        adjust_heap(qv, qi, first, 0, last - first, v, i, largest)

    @njit(cache=True)
    def heap_select(qv, qi, first, middle, last, largest):
        n = middle - first
        if n >= 2:  # make_heap
            parent = (n - 2) // 2
            while True:
                adjust_heap(qv, qi, first, parent, n, qv[first + parent], qi[first + parent],
                            largest)
                if parent == 0:
                    break
                parent -= 1
        for j in range(middle, last):
            if before(qv[j], qv[first], largest):
                pop_heap(qv, qi, first, middle, j, largest)

    @njit(cache=True)
    def sort_heap(qv, qi, first, last, largest):
        while last - first > 1:
            last -= 1
            pop_heap(qv, qi, first, last, last, largest)

    @njit(cache=True)
    def partition_pivot(qv, qi, first, last, largest):
        a, b, c = first + 1, first + (last - first) // 2, last - 1
        if before(qv[a], qv[b], largest):
            if before(qv[b], qv[c], largest):
                s = b
            elif before(qv[a], qv[c], largest):
                s = c
            else:
                s = a
        elif before(qv[a], qv[c], largest):
            s = a
        elif before(qv[b], qv[c], largest):
            s = c
        else:
            s = b
        swap(qv, qi, first, s)
        lo, hi = first + 1, last
        while True:  # unguarded partition around qv[first]
            while before(qv[lo], qv[first], largest):
                lo += 1
            hi -= 1
            while before(qv[first], qv[hi], largest):
                hi -= 1
            if not lo < hi:
                return lo
            swap(qv, qi, lo, hi)
            lo += 1

    @njit(cache=True)
    def linear_insert(qv, qi, last, largest):
        v = qv[last]
        i = qi[last]
        nxt = last - 1
        while before(v, qv[nxt], largest):
            qv[last] = qv[nxt]
            qi[last] = qi[nxt]
            last = nxt
            nxt -= 1
        qv[last] = v
        qi[last] = i

    @njit(cache=True)
    def insertion_sort(qv, qi, first, last, largest):
        if first == last:
            return
        for j in range(first + 1, last):
            if before(qv[j], qv[first], largest):
                v = qv[j]
                i = qi[j]
                for m in range(j, first, -1):
                    qv[m] = qv[m - 1]
                    qi[m] = qi[m - 1]
                qv[first] = v
                qi[first] = i
            else:
                linear_insert(qv, qi, j, largest)

    @njit(cache=True, inline="always")
    def lg(n):
        r = -1
        while n:
            n >>= 1
            r += 1
        return r

    @njit(cache=True)
    def nth_element(qv, qi, first, nth, last, largest):
        if first == last or nth == last:
            return
        depth = 2 * lg(last - first)
        while last - first > 3:
            if depth == 0:
                heap_select(qv, qi, first, nth + 1, last, largest)
                swap(qv, qi, first, nth)
                return
            depth -= 1
            cut = partition_pivot(qv, qi, first, last, largest)
            if cut <= nth:
                first = cut
            else:
                last = cut
        insertion_sort(qv, qi, first, last, largest)

    @njit(cache=True)
    def std_sort(qv, qi, first, last, largest):
        if first == last:
            return
        stack = np.empty((2 * lg(last - first) + 8, 3), np.int64)
        sp = 0
        stack[0, 0], stack[0, 1], stack[0, 2] = first, last, 2 * lg(last - first)
        sp = 1
        while sp:  # introsort loop; its disjoint sub-ranges in any order give the same result
            sp -= 1
            lo, hi, depth = stack[sp, 0], stack[sp, 1], stack[sp, 2]
            while hi - lo > 16:
                if depth == 0:
                    heap_select(qv, qi, lo, hi, hi, largest)
                    sort_heap(qv, qi, lo, hi, largest)
                    break
                depth -= 1
                cut = partition_pivot(qv, qi, lo, hi, largest)
                if sp == stack.shape[0]:
                    grown = np.empty((2 * sp, 3), np.int64)
                    grown[:sp] = stack
                    stack = grown
                stack[sp, 0], stack[sp, 1], stack[sp, 2] = cut, hi, depth
                sp += 1
                hi = cut
        if last - first > 16:  # final insertion sort
            insertion_sort(qv, qi, first, first + 16, largest)
            for j in range(first + 16, last):
                linear_insert(qv, qi, j, largest)
        else:
            insertion_sort(qv, qi, first, last, largest)

    @njit(cache=True)
    def topk_order(keys, k, largest, sorted_):
        rows, n = keys.shape
        out = np.empty((rows, k), np.int64)
        if k == 0:
            return out
        qv = np.empty(n, keys.dtype)
        qi = np.empty(n, np.int64)
        for r in range(rows):
            for j in range(n):
                qv[j] = keys[r, j]
                qi[j] = j
            if k * 64 <= n:  # std::partial_sort
                heap_select(qv, qi, 0, k, n, largest)
                sort_heap(qv, qi, 0, k, largest)
            else:
                nth_element(qv, qi, 0, k - 1, n, largest)
                if sorted_:
                    std_sort(qv, qi, 0, k - 1, largest)
            for j in range(k):
                out[r, j] = qi[j]
        return out

    return topk_order
