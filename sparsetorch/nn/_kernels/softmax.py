"""numba row kernels for the attention core's softmax, in place.

- ``softmax_backward_(gs, p, cst)``: ``gs = p * (gs - rowsum(gs * p)) * c`` (``c`` the score
  scale folded in, so the dQ / dK products need no scaling pass). NumPy took an einsum, a
  subtraction, a product and two scalings (five passes over the (batch, L, S) weights, ~1.5 ms
  of the 32 x 8 x 64 x 64 attention backward).
- ``softmax_shifted_(s, cst)`` (float32): ``s = exp(s * c - top)`` and each row divided by its
  sum, ``cst = [c, top]`` with ``top`` the scaled global max (NumPy's one fast reduction; any
  shift gives the same softmax); returns the smallest row sum, so the caller can redo a row set
  whose sums underflowed with per-row maxima. ``fexp`` is ``_fastmath``'s vectorisable float32
  exp. NumPy took a scaling, a subtraction, exp, a GEMV for the sums and a division.

Rows are split over threads (``prange``, count set by ``_jit.limit``); the row sum may be
reassociated (vectorised). Built on first use (``cache=True``), CPU backend only.

``F.softmax`` / ``F.log_softmax`` along the last dim of C-contiguous float32/float64 arrays
(``rows``: group ``softmax_nn``, issue 14):

- ``softmax_rows(be, x, log)``: per row the max, then ``exp(x - max)`` summed (softmax writes
  it), then one writing pass: ``e * (1 / sum)`` or ``(x - max) - log(sum)``. NumPy took five
  passes with temporaries. Special values as torch: ``x - max`` as is, so an all ``-inf`` row,
  a ``+inf`` or a nan gives a nan row.
- ``softmax_rows_backward(be, g, out, log)``: ``p * (g - sum(g * p))`` or
  ``g - exp(out) * sum(g)``, two passes over each row (held in cache).
- Another dim (``dim`` argument): the array seen as slabs ``(outer, n, inner)``, the same passes
  element-wise along ``inner`` (per-column max and sums in a scratch row), which vectorises;
  NumPy's transposed copies cost more than they save.
"""

from ... import _jit

__all__ = ["kernels", "rows", "softmax_rows", "softmax_rows_backward"]

fexp = wide = None  # set by _build (_fastmath.py): module globals, so numba's disk cache holds
_maxbits = _scale = None  # set by _build_rows: kernels that other kernels call are module
_sm_s = _lsm_s = _bwd_s = _sm_p = _lsm_p = _bwd_p = None  # globals too (numba's cache)
_slab_max = _slab_exp_store_sum = _slab_exp_sum = _slab_scale = _slab_shift = None
_msm_s = _mlsm_s = _mbwd_s = _msm_p = _mlsm_p = _mbwd_p = None
_ROWS_PER_TASK = 1 << 14  # elements per parallel task, at least (whole rows)


def kernels(be):
    """``(softmax_backward_, softmax_shifted_)``, or None (other backends, numba off or
    missing)."""
    return _jit.kernels("softmax_rows", _build, 2.0) if be.name == "cpu" else None


def _build():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _fastmath
    except ImportError:
        return False
    global fexp
    fexp = _fastmath.fexp

    @njit(parallel=True, cache=True, fastmath={"reassoc"})
    def softmax_backward_(gs, p, cst):
        rows, n = gs.shape
        c = cst[0]
        for r in prange(rows):
            gr = gs[r]
            pr = p[r]
            d = c - c
            for j in range(n):
                d += gr[j] * pr[j]
            for j in range(n):
                gr[j] = pr[j] * (gr[j] - d) * c
        return 0

    @njit(parallel=True, cache=True, fastmath={"reassoc"})
    def softmax_shifted_(s, cst):
        rows, n = s.shape
        c = cst[0]
        top = cst[1]
        zmin = np.full(rows, np.float32(np.inf))
        for r in prange(rows):
            sr = s[r]
            z = c - c
            for j in range(n):
                e = fexp(sr[j] * c - top)
                sr[j] = e
                z += e
            inv = np.float32(1.0) / z
            for j in range(n):
                sr[j] *= inv
            zmin[r] = z
        return zmin.min()

    return (softmax_backward_, softmax_shifted_)


def rows(be):
    """The ``softmax_nn`` group (forward and backward row kernels), or None."""
    return _jit.kernels("softmax_nn", _build_rows, 3.0) if be.name == "cpu" else None


def _split(shape, dim):
    outer = inner = 1
    for d in shape[:dim]:
        outer *= d
    for d in shape[dim + 1:]:
        inner *= d
    return outer, shape[dim], inner


def softmax_rows(be, k, x, log, dim=-1):
    """softmax (``log`` False) or log_softmax along ``dim`` of the C-contiguous ``x`` (at least
    1-D): a new array of ``x``'s shape (not a view: autograd takes it over uncopied). The last
    dim runs the row kernels; another one the slab kernels (vectorised along the dims after it)."""
    xp = be.xp
    out = xp.empty(x.shape, x.dtype)
    outer, n, inner = _split(x.shape, dim % x.ndim)
    if inner > 1:
        _run(k, 7 if log else 6, x.size, x.reshape(outer, n, inner),
             out.reshape(outer, n, inner), x.dtype.type(1))
        return out
    if x.dtype == xp.float32:
        it, sh, mask = xp.int32, xp.int32(31), xp.int32(0x7FFFFFFF)
    else:
        it, sh, mask = xp.int64, xp.int64(63), xp.int64(0x7FFFFFFFFFFFFFFF)
    x2, o2 = x.reshape(-1, n), out.reshape(-1, n)
    _run(k, 1 if log else 0, x.size, x2, x2.view(it), o2, o2.view(it), x.dtype.type(1), sh, mask)
    return out


def softmax_rows_backward(be, k, g, out, log, dim=-1):
    """The input's gradient from ``g`` and the forward's ``out`` (C-contiguous, one shape)."""
    r = be.xp.empty(out.shape, out.dtype)
    outer, n, inner = _split(out.shape, dim % out.ndim)
    s = (outer, n, inner) if inner > 1 else (outer, n)
    _run(k, 8 if inner > 1 else 2, out.size, g.reshape(s), out.reshape(s), r.reshape(s), log,
         out.dtype.type(0))
    return r


def _run(k, which, n, *args):
    rows_ = args[0].shape[0]
    with _jit.limit(n) as threads:
        if threads > 1 and rows_ > 1:
            per = max(1, _ROWS_PER_TASK // max(1, n // rows_))
            tasks = max(threads, (rows_ + per - 1) // per)
            return k[which + 3](*args, min(tasks, rows_))
        return k[which](*args)


def _build_rows():
    try:
        import numpy as np
        from numba import njit, prange

        from . import _fastmath
    except ImportError:
        return False
    global fexp, wide, _maxbits, _scale, _sm_s, _lsm_s, _bwd_s, _sm_p, _lsm_p, _bwd_p
    global _slab_max, _slab_exp_store_sum, _slab_exp_sum, _slab_scale, _slab_shift
    global _msm_s, _mlsm_s, _mbwd_s, _msm_p, _mlsm_p, _mbwd_p
    fexp, wide = _fastmath.fexp, _fastmath.wide
    fm = {"contract", "reassoc"}  # sums vectorised (torch's are too), fused multiply-adds
    jit = njit(cache=True, error_model="numpy", fastmath=fm)
    rowjit = njit(cache=True, error_model="numpy", fastmath=fm, inline="never")
    pjit = njit(parallel=True, cache=True, error_model="numpy", fastmath=fm)

    @jit
    def _maxbits(xir, sh, mask):
        # the max of the float bits as ordered integers (``v ^ ((v >> sh) & mask)``): an integer
        # max reduction vectorises, a float one does not; a nan gives a nan (positive) or is
        # passed over (negative), and either way ``x - max`` makes the row nan
        v = xir[0]
        k = v ^ ((v >> sh) & mask)
        for j in range(1, xir.size):
            v = xir[j]
            kj = v ^ ((v >> sh) & mask)
            k = kj if kj > k else k  # noqa: FURB136 - a select: vectorises
        return k ^ ((k >> sh) & mask)

    @rowjit
    def _scale(orow, inv):
        # a function of its own: inlined, LLVM left this loop scalar (4096 x 1000: 2.7 -> 2.2 ms)
        wide()
        for j in range(orow.size):
            orow[j] *= inv
        return 0

    # softmax and log_softmax are separate kernels: with a run-time flag choosing the row body,
    # 16384 x 64 softmax took 1.3 ms against 0.82

    @jit
    def _sm_s(x, xi, o, oi, one, sh, mask):
        wide()
        rows_, n = x.shape
        z = one - one  # scalars in the array's type: a float64 1/sum made the rescaling scalar
        for r in range(rows_):
            xr = x[r]
            orow = o[r]
            oi[r, 0] = _maxbits(xi[r], sh, mask)  # the max's bits, read back as a float
            m = orow[0]
            s = z
            for j in range(n):
                e = fexp(xr[j] - m)
                orow[j] = e
                s += e
            _scale(orow, one / s)
        return 0

    @jit
    def _lsm_s(x, xi, o, oi, one, sh, mask):
        wide()
        rows_, n = x.shape
        z = one - one
        for r in range(rows_):
            xr = x[r]
            orow = o[r]
            oi[r, 0] = _maxbits(xi[r], sh, mask)
            m = orow[0]
            s = z
            for j in range(n):
                s += fexp(xr[j] - m)
            ls = np.log(s)
            for j in range(n):
                orow[j] = (xr[j] - m) - ls
        return 0

    @jit
    def _bwd_s(g, p, o, log, z):
        wide()
        rows_, n = p.shape
        for r in range(rows_):
            gr = g[r]
            pr = p[r]
            orow = o[r]
            d = z
            if log:
                for j in range(n):
                    d += gr[j]
                for j in range(n):
                    orow[j] = gr[j] - fexp(pr[j]) * d
            else:
                for j in range(n):
                    d += gr[j] * pr[j]
                for j in range(n):
                    orow[j] = pr[j] * (gr[j] - d)
        return 0

    @pjit
    def _sm_p(x, xi, o, oi, one, sh, mask, tasks):
        rows_ = x.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _sm_s(x[a:b], xi[a:b], o[a:b], oi[a:b], one, sh, mask)
        return 0

    @pjit
    def _lsm_p(x, xi, o, oi, one, sh, mask, tasks):
        rows_ = x.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _lsm_s(x[a:b], xi[a:b], o[a:b], oi[a:b], one, sh, mask)
        return 0

    @pjit
    def _bwd_p(g, p, o, log, z, tasks):
        rows_ = p.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _bwd_s(g[a:b], p[a:b], o[a:b], log, z)
        return 0

    # slabs (outer, n, inner): the reductions run along n, vectorised along inner

    @jit
    def _msm_s(x, o, one):
        wide()
        no, _, L = x.shape
        m = np.empty(L, x.dtype)
        s = np.empty(L, x.dtype)
        for a in range(no):
            _slab_max(x[a], m)
            _slab_exp_store_sum(x[a], o[a], m, s, one - one)
            for j in range(L):
                s[j] = one / s[j]
            _slab_scale(o[a], s)
        return 0

    @jit
    def _mlsm_s(x, o, one):
        wide()
        no, _, L = x.shape
        m = np.empty(L, x.dtype)
        s = np.empty(L, x.dtype)
        for a in range(no):
            _slab_max(x[a], m)
            _slab_exp_sum(x[a], m, s, one - one)
            for j in range(L):
                s[j] = np.log(s[j])
            _slab_shift(x[a], o[a], m, s)
        return 0

    @rowjit
    def _slab_max(xa, m):
        # element-wise along the inner dims (no reduction: it vectorises); a nan kept or passed
        # over here makes ``x - max`` nan all the same
        wide()
        n, L = xa.shape
        for j in range(L):
            m[j] = xa[0, j]
        for c in range(1, n):
            xr = xa[c]
            for j in range(L):
                v = xr[j]
                w = m[j]
                m[j] = v if v > w else w  # noqa: FURB136 - a select, nan kept as is
        return 0

    @rowjit
    def _slab_exp_store_sum(xa, oa, m, s, z):
        wide()
        n, L = xa.shape
        for j in range(L):
            s[j] = z
        for c in range(n):
            xr = xa[c]
            orow = oa[c]
            for j in range(L):
                e = fexp(xr[j] - m[j])
                orow[j] = e
                s[j] += e
        return 0

    @rowjit
    def _slab_exp_sum(xa, m, s, z):
        wide()
        n, L = xa.shape
        for j in range(L):
            s[j] = z
        for c in range(n):
            xr = xa[c]
            for j in range(L):
                s[j] += fexp(xr[j] - m[j])
        return 0

    @rowjit
    def _slab_scale(oa, inv):
        wide()
        n, L = oa.shape
        for c in range(n):
            orow = oa[c]
            for j in range(L):
                orow[j] *= inv[j]
        return 0

    @rowjit
    def _slab_shift(xa, oa, m, ls):
        wide()
        n, L = xa.shape
        for c in range(n):
            xr = xa[c]
            orow = oa[c]
            for j in range(L):
                orow[j] = (xr[j] - m[j]) - ls[j]
        return 0

    @jit
    def _mbwd_s(g, p, o, log, z):
        wide()
        no, n, L = p.shape
        d = np.empty(L, p.dtype)
        for a in range(no):
            ga = g[a]
            pa = p[a]
            oa = o[a]
            for j in range(L):
                d[j] = z
            if log:
                for c in range(n):
                    gr = ga[c]
                    for j in range(L):
                        d[j] += gr[j]
                for c in range(n):
                    gr = ga[c]
                    pr = pa[c]
                    orow = oa[c]
                    for j in range(L):
                        orow[j] = gr[j] - fexp(pr[j]) * d[j]
            else:
                for c in range(n):
                    gr = ga[c]
                    pr = pa[c]
                    for j in range(L):
                        d[j] += gr[j] * pr[j]
                for c in range(n):
                    gr = ga[c]
                    pr = pa[c]
                    orow = oa[c]
                    for j in range(L):
                        orow[j] = pr[j] * (gr[j] - d[j])
        return 0

    @pjit
    def _msm_p(x, o, one, tasks):
        rows_ = x.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _msm_s(x[a:b], o[a:b], one)
        return 0

    @pjit
    def _mlsm_p(x, o, one, tasks):
        rows_ = x.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _mlsm_s(x[a:b], o[a:b], one)
        return 0

    @pjit
    def _mbwd_p(g, p, o, log, z, tasks):
        rows_ = p.shape[0]
        for t in prange(tasks):
            a = rows_ * t // tasks
            b = rows_ * (t + 1) // tasks
            _mbwd_s(g[a:b], p[a:b], o[a:b], log, z)
        return 0

    return (_sm_s, _lsm_s, _bwd_s, _sm_p, _lsm_p, _bwd_p,
            _msm_s, _mlsm_s, _mbwd_s, _msm_p, _mlsm_p, _mbwd_p)
