"""The BLAS threads of the GEMMs that sparsetorch's hot paths call themselves (issue 14).

OpenBLAS threads a GEMM from ~262k multiply-adds on; its workers busy-wait for work. On a busy
machine (or beside another library's spinning pool) a 2-thread 2048 x 26 x 64 product then takes
6-10x its 1-thread time (1.5 ms instead of 0.15 ms), and even on a quiet one a mid-size product
gains little over the wake-up. :func:`dot` runs ``a.dot(b)`` with the threads that the thread
policy of the numba kernels gives the same work (``_jit.thread_count``: one below
``PAR_MIN_WORK`` multiply-adds, otherwise at most the free cores), by lowering NumPy's OpenBLAS
thread count around the call (a C call, ~0.2 us) and restoring it after. Never more threads than
the user set; other BLAS libraries (MKL, Accelerate) and products below OpenBLAS's own threshold
are left as they are.
"""

import threading

from . import _jit

__all__ = ["dot"]

GEMM_OWN = 1 << 18  # OpenBLAS runs smaller matrix products on one thread itself
GEMV_OWN = 2304 * 4  # ... and smaller matrix-vector products
_FNS = []  # [(set, get)] once looked up: NumPy's OpenBLAS, or [None] when there is none
_LOCK = threading.Lock()
_STATE = [0, 0]  # [calls inside a lowered region, the count to restore]


def _lookup():
    fns = None
    try:
        import ctypes

        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            path = info.get("filepath") or ""
            if info.get("internal_api") != "openblas" or "numpy" not in path:
                continue
            lib = ctypes.CDLL(path)
            for pre, suf in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"),
                             ("openblas", "")):
                s = getattr(lib, f"{pre}_set_num_threads{suf}", None)
                g = getattr(lib, f"{pre}_get_num_threads{suf}", None)
                if s is not None and g is not None:
                    s.argtypes = [ctypes.c_int]
                    s.restype = None
                    g.restype = ctypes.c_int
                    fns = (s, g)
                    break
            break
    except Exception:  # noqa: BLE001 - no threadpoolctl / ctypes / symbols: leave the BLAS alone
        fns = None
    _FNS.append(fns)
    return fns


def dot(a, b, work, own=GEMM_OWN):
    """``a.dot(b)`` (``work``: its multiply-adds) with the threads the work is worth; ``own``:
    the work below which OpenBLAS keeps the call on one thread (``GEMV_OWN`` for a vector)."""
    if work < own:
        return a.dot(b)
    fns = _FNS[0] if _FNS else _lookup()
    if fns is None:
        return a.dot(b)
    set_n, get_n = fns
    st = _STATE
    with _LOCK:
        cur = st[1] if st[0] else get_n()
        want = _jit.thread_count(work, cur)
        if want >= cur:
            return_now = True
        else:
            return_now = False
            if not st[0]:
                st[1] = cur
                set_n(want)
            st[0] += 1
    if return_now:
        return a.dot(b)
    try:
        return a.dot(b)
    finally:
        with _LOCK:
            st[0] -= 1
            if not st[0]:
                set_n(st[1])
