"""``embedding`` and ``embedding_bag`` (torch.nn.functional), as table ops with their own kernels.

Both lookups are linear in the table ``W``: ``out = A @ W`` for a (bags x rows) matrix ``A``
given by the ids, the bag boundaries, the mode's per-bag divisor (1, n or sqrt(n), n the
number of non-padding ids of the bag) and the per-sample weights ('max' picks one id per bag
and column instead). So:

- the gradient of ``W`` is ``A^T @ grad``: a *row-sparse* COO tensor (``sparse=True``) or its
  dense form; its own derivative (double backward) is the forward lookup again;
- the gradient of ``per_sample_weights[j]`` is ``<grad[b], W[ids[j]]> / divisor[b]``, composed
  from sparsetorch ops (so it is differentiable itself).

Gradient layouts (``sparse=True``):

- ``embedding``: an *uncoalesced* hybrid COO tensor, one stored row per looked-up id (indices
  ``[1, n]``, values ``[n, embedding_dim]``), as torch's;
- ``embedding_bag``: a *coalesced* hybrid COO tensor (sorted unique rows), built from ``grad``
  by a numba kernel (entries grouped by a radix sort of their ids, each row summed in entry
  order) or, without numba, by a coalesce of the per-id rows. torch's is uncoalesced;
  ``.to_dense()`` of both is the same (and ``coalesce()`` up to the order of the sums), and
  optimizers that coalesce (SparseAdam) skip that step here. Kept by measurement (issue 14; 1M x
  64 table, 4096 bags of 20 zipf ids, one thread): forward + backward 4.2 ms against torch's
  5.2-11 ms uncoalesced; the iterations with SGD / Adagrad / SparseAdam run at 0.37x / 0.28x /
  0.24x torch's.

Extensions over torch (documented): ``mode='sqrtn'`` (TensorFlow's combiner: the bag's sum
divided by sqrt(n)); ``per_sample_weights`` with ``'mean'`` and ``'sqrtn'`` (the weighted sum
divided by n, resp. sqrt(n), n counting the bag's non-padding ids, NOT the weights' sum as
TensorFlow's weighted combiners do); ``sparse=True`` with ``mode='max'``.
"""


from ... import _dtype as D
from ... import _jit
from ..._backend import CPU, get_backend
from ..._device import CPU as CPU_DEVICE
from ..._dispatch import bump_version, call, defop, record_if_grad, wrap
from ..._layout import sparse_coo, strided
from ..._tensor import Tensor
from ...autograd import profiler as _profiler
from ...autograd.grad_mode import no_grad
from ...sparse import _convert as C
from ...sparse import _cuda
from ...sparse._payload import COO
from ...sparse._spmm import check_int32_limits
from .._kernels import embedding as K

__all__ = ["embedding", "embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2, "sqrtn": 3}
S2 = (strided, strided)


class _Bags:
    """What the forward kernel and the backward formulas share (host arrays, no tensors)."""

    __slots__ = ("arg", "bounds", "coef", "freq", "ids", "mode", "num", "pad", "scale", "sparse")

    def __init__(self, ids, num, pad, sparse, bounds=None, mode=None, scale=None):
        self.ids = ids
        self.num = num
        self.pad = pad
        self.sparse = bool(sparse)
        self.bounds = bounds
        self.mode = mode
        self.scale = scale
        self.arg = self.freq = self.coef = None


# ---- argument checks ----

def _check_ids(input, weight, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fname}(): argument 'weight' must be a Tensor, not {type(weight).__name__}")
    if input.dtype is not D.int64 and input.dtype is not D.int32:
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {input.dtype.name} instead (while checking arguments for {fname})"
        )
    if input.layout is not strided or weight.layout is not strided:
        raise TypeError(f"{fname}(): input and weight must be dense (strided) tensors")
    if weight.ndim != 2:
        raise RuntimeError(f"{fname}(): 'weight' must be 2-D, but got {weight.ndim}-D")
    ids = input._data
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= weight.shape[0]:
            raise IndexError("index out of range in self")
    return ids


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        if padding_idx >= num:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += num
    return padding_idx


def _renorm_(weight, ids, max_norm, norm_type):
    """torch.embedding_renorm_: rows of ``weight`` looked up by ``ids`` whose ``norm_type``-norm
    exceeds ``max_norm`` are scaled down to it, in place (not recorded by autograd)."""
    xp = get_backend(weight.device).xp
    with no_grad():
        rows = xp.unique(ids.reshape(-1))
        if rows.size == 0:
            return
        w = weight._data[rows]
        norms = xp.linalg.norm(w.astype(xp.float64), ord=norm_type, axis=1)
        big = norms > max_norm
        if big.any():
            f = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
            weight._data[rows[big]] = w[big] * f[:, None]
            bump_version(weight)


# ---- embedding ----

def _emb_kernel(be, w, ctx):
    ids = ctx.ids
    k = K.kernels(be) if ids.size and ids.dtype.char in "lq" and w.dtype.char in "fd" else None
    if k is None:
        return be.xp.take(w, ids, axis=0)
    flat = ids.reshape(-1)
    if not flat.flags.c_contiguous:
        flat = be.xp.ascontiguousarray(flat)
    if not w.flags.c_contiguous:  # the kernel prefetches through a flat view of the table
        w = be.xp.ascontiguousarray(w)
    work = flat.size * w.shape[1]
    out = be.xp.empty((flat.size, w.shape[1]), w.dtype)  # NumPy's: huge pages (take_rows)
    if work < _jit.PAR_MIN_WORK:
        bad = k[6](w, flat, out)
    else:
        with _jit.limit(work) as nt:  # one thread (a busy machine, or the user's setting):
            bad = (k[5] if nt > 1 else k[6])(w, flat, out)  # the serial twin, no parallel region
    if bad:  # ids outside the table
        raise IndexError("index out of range in self")
    return out.reshape(ids.shape + (w.shape[1],))


def _emb_weight_backward(grad, ctx):
    n = ctx.ids.size
    dim = grad.shape[-1]
    g = grad.reshape(n, dim).contiguous()  # the values own their rows (a sum's grad is a stride-0 view)
    xp = get_backend(grad.device).xp
    idx = ctx.ids.reshape(1, n).astype(xp.int64, copy=False)
    if ctx.coef is not None:  # padding rows get 0, scale_grad_by_freq divides by the id's count
        g = g * wrap(ctx.coef[:, None].astype(grad.dtype.np), grad.dtype, grad.device, strided)
    if ctx.pad >= 0:
        keep = xp.flatnonzero(ctx.ids.reshape(-1) != ctx.pad)
        if keep.size != n:
            idx = idx[:, keep]
            g = g.index_select(0, wrap(keep, D.int64, grad.device, strided))
    shape = (ctx.num, dim)
    pattern = wrap(COO(idx, xp.empty((idx.shape[1], dim), grad.dtype.np), shape, idx.shape[1] <= 1),
                   grad.dtype, grad.device, sparse_coo)
    from ..._ops.sparse_core import with_values

    s = with_values(pattern, g)
    return s if ctx.sparse else s.to_dense()


_emb_op = defop("embedding", {(strided,): _emb_kernel}, inputs=("weight",), params=("ctx",),
                grads={"weight": lambda grad, ctx: _emb_weight_backward(grad, ctx)})


def _freq_coef(xp, ids, pad):
    """1 / (count of each entry's id in the batch) (torch's scale_grad_by_freq), 0 at padding."""
    flat = ids.reshape(-1)
    _, inv, cnt = xp.unique(flat, return_inverse=True, return_counts=True)
    coef = 1.0 / cnt[inv].astype(xp.float64)
    if pad >= 0:
        coef[flat == pad] = 0.0
    return coef


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    r"""Look up rows of ``weight`` (num_embeddings x embedding_dim) by the integer ``input``.

    The result has shape ``input.shape + (embedding_dim,)``. ``padding_idx``: that row gets no
    gradient. ``max_norm``: looked-up rows with a larger ``norm_type``-norm are renormalised in
    place first. ``scale_grad_by_freq``: gradients are divided by each id's count in the batch.
    ``sparse``: the gradient of ``weight`` is an uncoalesced sparse COO tensor.
    """
    if (max_norm is None and isinstance(input, Tensor) and isinstance(weight, Tensor)
            and input.dtype is D.int64 and (weight.dtype is D.float32 or weight.dtype is D.float64)
            and input.layout is strided and weight.layout is strided
            and weight.device is CPU_DEVICE and input.device is CPU_DEVICE
            and weight._data.ndim == 2 and input._data.size and K.kernels(CPU) is not None):
        ids = input._data  # the common case: the forward kernel checks the ids as it reads them
    else:
        ids = _check_ids(input, weight, "embedding")
    num = weight._data.shape[0]
    pad = _padding_idx(padding_idx, num)
    if max_norm is not None:
        _renorm_(weight, ids, max_norm, norm_type)
    ctx = _Bags(ids, num, pad, sparse)
    if weight._rg:
        xp = get_backend(weight.device).xp
        if scale_grad_by_freq:
            ctx.coef = _freq_coef(xp, ids, pad)
    return call(_emb_op, (weight,), (ctx,))


# ---- embedding_bag ----

def _bag_forward_kernel(be, w, psw, ctx):
    xp = be.xp
    k = K.kernels(be) if w.dtype.kind == "f" and w.dtype.itemsize >= 4 else None
    if ctx.mode == 2:
        if k is not None:
            with _jit.limit(ctx.ids.size * w.shape[1]):
                out, arg = k[1](w, ctx.ids, ctx.bounds, ctx.pad)
        else:
            out, arg = _bag_max_numpy(xp, w, ctx)
        ctx.arg = arg
        return out
    if psw is not None:
        psw = xp.ascontiguousarray(psw)
    if k is not None:
        e = xp.empty(0, w.dtype)
        w = xp.ascontiguousarray(w)  # the kernel prefetches through a flat view of the table
        args = (w, ctx.ids, ctx.bounds, ctx.pad, e if psw is None else psw,
                e if ctx.scale is None else ctx.scale)
        work = ctx.ids.size * w.shape[1]
        if work < _jit.PAR_MIN_WORK:  # the serial twin: no thread switch, no parallel region
            out = k[3](*args)
        else:
            with _jit.limit(work) as nt:
                out = (k[0] if nt > 1 else k[3])(*args)
        if out.shape[0] != ctx.bounds.size - 1:  # the kernel's sign of an id outside the table
            raise IndexError("index out of range in self")
        return out
    return _bag_sum_numpy(be, w, psw, ctx)


def _bag_sum_numpy(be, w, psw, ctx):
    xp = be.xp
    if w.dtype.name == "bfloat16":  # SciPy has no bfloat16: sum in float32, round once
        out = _bag_sum_numpy(be, w.astype(xp.float32), None if psw is None else
                             psw.astype(xp.float32), ctx)
        return out.astype(w.dtype)
    n = ctx.ids.size
    data = xp.ones(n, w.dtype) if psw is None else psw.astype(w.dtype, copy=True)
    if ctx.pad >= 0:
        data[ctx.ids == ctx.pad] = 0
    B = ctx.bounds.size - 1
    lo, hi = int(ctx.bounds[0]), int(ctx.bounds[-1])
    check_int32_limits(be, hi - lo, (B, w.shape[0]), "EmbeddingBag")
    out = _cuda.csr_dense(be, data[lo:hi], ctx.ids[lo:hi], ctx.bounds - lo, (B, w.shape[0]), w)
    if out is None:
        a = be.sp.csr_matrix((data[lo:hi], ctx.ids[lo:hi], ctx.bounds - lo), shape=(B, w.shape[0]))
        out = xp.asarray(a @ w, dtype=w.dtype)
    if ctx.scale is not None:
        out /= ctx.scale[:, None]
    return out


def _bag_max_numpy(xp, w, ctx):
    B, dim = ctx.bounds.size - 1, w.shape[1]
    out = xp.zeros((B, dim), w.dtype)
    arg = xp.full((B, dim), -1, xp.int64)
    pos = xp.arange(ctx.ids.size)
    bag = xp.repeat(xp.arange(B), xp.diff(ctx.bounds))
    pos = pos[ctx.bounds[0]:ctx.bounds[-1]]
    if ctx.pad >= 0:
        keep = ctx.ids[pos] != ctx.pad
        pos, bag = pos[keep], bag[keep]
    if pos.size == 0:
        return out, arg
    rows = w[ctx.ids[pos]]
    starts = xp.flatnonzero(xp.concatenate(([True], bag[1:] != bag[:-1])))
    ub = bag[starts]
    m = xp.maximum.reduceat(rows, starts, axis=0)
    out[ub] = m
    mb = m[xp.searchsorted(ub, bag)]
    # a NaN max (propagated by maximum.reduceat) is held by the bag's first NaN entry
    hit = (rows == mb) | (xp.isnan(rows) & xp.isnan(mb)) if rows.dtype.kind in "fc" else rows == mb
    first = xp.where(hit, pos[:, None], ctx.ids.size)
    arg[ub] = xp.minimum.reduceat(first, starts, axis=0)
    return out, arg


def _bag_weight_backward(grad, per_sample_weights, ctx):
    return call(_bag_bwd_op, (grad, per_sample_weights), (ctx,))


def _bag_bwd_kernel(be, g, psw, ctx):
    """``A^T @ g`` for the table: COO payload (coalesced) when sparse, else a dense array."""
    xp = be.xp
    if g.dtype.kind == "V" and g.dtype.name == "bfloat16":  # (dtype.name alone costs 3 us)
        # SciPy has no bfloat16: accumulate in float32, round once
        r = _bag_bwd_kernel(be, g.astype(xp.float32), None if psw is None else
                            psw.astype(xp.float32), ctx)
        if isinstance(r, COO):
            return COO(r.indices, r.values.astype(g.dtype), r.shape, r.coalesced)
        return r.astype(g.dtype)
    g = xp.ascontiguousarray(g)
    dim = g.shape[1]
    shape = (ctx.num, dim)
    if ctx.mode == 2:
        ok = ctx.arg >= 0
        b, d = xp.nonzero(ok)
        j = ctx.arg[ok]
        if not ctx.sparse:
            out = xp.zeros(shape, g.dtype)
            xp.add.at(out, (ctx.ids[j], d), g[b, d])
            return out
        uj, inv = xp.unique(j, return_inverse=True)
        vals = xp.zeros((uj.size, dim), g.dtype)
        vals[inv, d] = g[b, d]
        p = COO(ctx.ids[uj].reshape(1, -1).astype(xp.int64), vals, shape, uj.size <= 1)
        return C.coalesce(be, p)
    k = K.kernels(be) if g.dtype.kind == "f" and g.dtype.itemsize >= 4 else None
    coef = ctx.coef
    if k is not None:
        e = _NOFLOAT.get(g.dtype)
        if e is None:
            e = _NOFLOAT[g.dtype] = xp.empty(0, g.dtype)
        work = ctx.ids.size * dim
        args = (ctx.ids, ctx.bounds, g, ctx.pad, e if coef is None else coef,
                e if ctx.scale is None else ctx.scale, ctx.num)
        if work < _jit.PAR_MIN_WORK:  # the serial kernel: no thread-count switch needed
            rows, vals = k[2](*args, 1)
        else:
            with _jit.limit(work) as nt:
                rows, vals = k[2](*args, nt)
    elif ctx.sparse and be.name != "cpu":
        rows, vals = _bag_grad_rows(be, g, ctx)
        return COO(rows.reshape(1, -1), vals, shape, rows.size <= 1)
    else:
        rows, vals = _bag_grad_numpy(be, g, ctx)
    if not ctx.sparse:
        out = xp.zeros(shape, g.dtype)
        out[rows] = vals
        return out
    return COO(rows.reshape(1, -1), vals, shape, True)


def _bag_grad_rows(be, g, ctx):
    """The sparse gradient as torch forms it on a GPU: one row per id, gathered from its bag's
    gradient row (uncoalesced: ``coalesce()`` or the optimizer sums duplicates), so backward
    does no sort; ``padding_idx`` entries are left out, as torch's sparse backward does."""
    xp = be.xp
    B = ctx.bounds.size - 1
    lo, hi = int(ctx.bounds[0]), int(ctx.bounds[-1])
    ids = ctx.ids[lo:hi]
    bag = xp.repeat(xp.arange(B), xp.diff(ctx.bounds))
    c = None if ctx.coef is None else ctx.coef[lo:hi].astype(g.dtype)
    if ctx.scale is not None:
        c = (1 / ctx.scale[bag]).astype(g.dtype) if c is None else c / ctx.scale[bag]
    if ctx.pad >= 0:
        keep = ids != ctx.pad
        ids, bag = ids[keep], bag[keep]
        c = None if c is None else c[keep]
    vals = g[bag]
    if c is not None:
        vals *= c[:, None]
    return ids.astype(xp.int64), vals


def _bag_grad_numpy(be, g, ctx):
    xp = be.xp
    B = ctx.bounds.size - 1
    lo, hi = int(ctx.bounds[0]), int(ctx.bounds[-1])
    ids = ctx.ids[lo:hi]
    bag = xp.repeat(xp.arange(B), xp.diff(ctx.bounds))
    c = xp.ones(ids.size, g.dtype) if ctx.coef is None else ctx.coef[lo:hi].astype(g.dtype)
    if ctx.scale is not None:
        c = c / ctx.scale[bag]
    if ctx.pad >= 0:
        c[ids == ctx.pad] = 0
    uniq, inv = xp.unique(ids, return_inverse=True)
    check_int32_limits(be, ids.size, (B, uniq.size), "EmbeddingBag backward")
    if _cuda.csr_dense_applies(be, g):  # the transposed pattern as CSR: row-major SpMM
        order = xp.argsort(inv, kind="stable")
        crow = xp.zeros(uniq.size + 1, xp.int64)
        xp.cumsum(xp.bincount(inv, minlength=uniq.size), out=crow[1:])
        out = _cuda.csr_dense(be, c[order], bag[order], crow, (uniq.size, B), g)
        if out is not None:
            return uniq.astype(xp.int64), out
    a = be.sp.csr_matrix((c, (bag, inv)), shape=(B, uniq.size))
    return uniq.astype(xp.int64), xp.asarray(a.T @ g, dtype=g.dtype)


def _bag_bwd_grad(grad, ctx):
    """Derivative of the table gradient w.r.t. the output gradient: the lookup of ``grad``."""
    if grad.layout is not strided:
        grad = grad.to_dense()
    if ctx.mode == 2:
        xp = get_backend(grad.device).xp
        dim = grad.shape[1]
        ok = ctx.arg >= 0
        flat = xp.where(ok, ctx.ids[xp.maximum(ctx.arg, 0)] * dim + xp.arange(dim), 0)
        r = grad.reshape(-1).index_select(0, wrap(flat.reshape(-1), D.int64, grad.device, strided))
        mask = wrap(ok.astype(grad.dtype.np), grad.dtype, grad.device, strided)
        return r.reshape(ok.shape) * mask
    coef = None if ctx.coef is None else wrap(ctx.coef.astype(grad.dtype.np), grad.dtype,
                                              grad.device, strided)
    return call(_bag_op, (grad, coef), (ctx,))


def _bag_bwd_psw_grad(grad, grad_output, ctx):
    """Derivative of the table gradient w.r.t. per_sample_weights (double backward)."""
    if grad.layout is not strided:
        grad = grad.to_dense()
    r = _bag_psw_backward(grad_output, grad, ctx)
    if ctx.freq is not None:
        r = r * wrap(ctx.freq.astype(r.dtype.np), r.dtype, r.device, strided)
    return r


_bag_bwd_op = defop(
    "embedding_bag_backward", {S2: _bag_bwd_kernel},
    inputs=("grad_output", "per_sample_weights"), params=("ctx",),
    grads={"grad_output": lambda grad, ctx: _bag_bwd_grad(grad, ctx),
           "per_sample_weights": lambda grad, grad_output, ctx: _bag_bwd_psw_grad(grad, grad_output, ctx)},
)


def _bag_psw_backward(grad, weight, ctx):
    """d out[b] / d psw[j] = W[ids[j]] / divisor[b] (0 for padding and ids outside every bag)."""
    xp = get_backend(grad.device).xp
    n = ctx.ids.size
    B = ctx.bounds.size - 1
    bag = xp.zeros(n, xp.int64)
    c = xp.zeros(n, grad.dtype.np)
    lo, hi = int(ctx.bounds[0]), int(ctx.bounds[-1])
    bag[lo:hi] = xp.repeat(xp.arange(B), xp.diff(ctx.bounds))
    c[lo:hi] = 1 if ctx.scale is None else 1 / ctx.scale[bag[lo:hi]]
    if ctx.pad >= 0:
        c[ctx.ids == ctx.pad] = 0
    dev = grad.device
    gb = grad.index_select(0, wrap(bag, D.int64, dev, strided))
    wj = weight.index_select(0, wrap(ctx.ids.astype(xp.int64, copy=False), D.int64, dev, strided))
    return (gb * wj).sum(1) * wrap(c, grad.dtype, dev, strided)  # flat, as the op's input


_bag_op = defop(
    "embedding_bag", {S2: _bag_forward_kernel}, inputs=("weight", "per_sample_weights"),
    params=("ctx",),
    grads={"weight": lambda grad, per_sample_weights, ctx: _bag_weight_backward(
        grad, per_sample_weights, ctx),
           "per_sample_weights": lambda grad, weight, ctx: _bag_psw_backward(grad, weight, ctx)},
)


def _bounds(xp, offsets, n, include_last_offset, fname):
    if not isinstance(offsets, Tensor):
        raise TypeError(f"{fname}(): offsets must be a Tensor, not {type(offsets).__name__}")
    if offsets.dtype is not D.int64 and offsets.dtype is not D.int32:
        raise RuntimeError(
            f"{fname}(): offsets must be an integer tensor (int64 or int32), got {offsets.dtype.name}"
        )
    if offsets.ndim != 1:
        raise ValueError(f"offsets has to be a 1D Tensor, but got a {offsets.ndim}-D tensor")
    o = offsets._data.astype(xp.int64, copy=False)
    if o.size:
        if int(o[0]) != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {int(o[0])}"
            )
        if int(o[-1]) > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                f"{int(o[-1])}"
            )
        if o.size > 1 and bool((o[1:] < o[:-1]).any()):
            raise RuntimeError(f"{fname}(): offsets must be non-decreasing, got {o.tolist()[:8]}...")
    if include_last_offset:
        if o.size == 0:
            return xp.zeros(1, xp.int64)
        return o
    return xp.concatenate((o, xp.array([n], xp.int64)))


_NOFLOAT = {}  # table dtype -> an empty array of it (bag_prep's dtype for the divisors)


def _bag_lean(input, weight, offsets, mode, sparse, last, padding_idx):
    """embedding_bag's common case in one kernel call before the forward: int64 ids (1-D with
    int64 offsets, or 2-D), a float32/float64 CPU table, no per_sample_weights, max_norm or
    scale_grad_by_freq, numba on. ``bag_prep`` checks the offsets and builds the bounds (and
    the divisors) at once, the forward kernel checks the ids as it reads them. None where the
    case differs or the offsets are invalid: the full path runs then (and raises its error)."""
    m = _MODES.get(mode)
    if m is None or m == 2 or not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        return None
    wd = weight.dtype
    if (input.dtype is not D.int64 or (wd is not D.float32 and wd is not D.float64)
            or input.layout is not strided or weight.layout is not strided
            or weight.device is not CPU_DEVICE or input.device is not CPU_DEVICE):
        return None
    w = weight._data
    ids = input._data
    if w.ndim != 2:
        return None
    k = K.kernels(CPU)
    if k is None:
        return None
    num = w.shape[0]
    if ids.ndim == 1:
        if (not isinstance(offsets, Tensor) or offsets.dtype is not D.int64
                or offsets.layout is not strided or offsets.device is not CPU_DEVICE):
            return None
        off = offsets._data
        if off.ndim != 1:
            return None
        if not off.flags.c_contiguous:  # (one compiled signature: C-contiguous arrays)
            off = CPU.xp.ascontiguousarray(off)
    elif ids.ndim == 2 and offsets is None and ids.shape[1]:
        L = ids.shape[1]
        off = CPU.xp.arange(0, ids.size, L)
        ids = ids.reshape(-1)
        last = False
    else:
        return None
    if padding_idx is None:
        pad = -1
    elif -num <= padding_idx < num:
        pad = padding_idx + num if padding_idx < 0 else padding_idx
    else:
        return None
    if not ids.flags.c_contiguous:
        ids = CPU.xp.ascontiguousarray(ids)
    proto = _NOFLOAT.get(w.dtype)
    if proto is None:
        proto = _NOFLOAT[w.dtype] = CPU.xp.empty(0, w.dtype)
    if _profiler.ACTIVE is not None:  # the op's profiled range: through the dispatcher
        bounds, scale = k[4](ids, off, bool(last), pad, m, proto)
        if not bounds.size:
            return None
        ctx = _Bags(ids, num, pad, sparse, bounds, m, scale if scale.size else None)
        return call(_bag_op, (weight, None), (ctx,))
    if not w.flags.c_contiguous:  # the kernel prefetches through a flat view of the table
        w = CPU.xp.ascontiguousarray(w)
    # one kernel call: offsets checked, bounds and divisors built, bags summed (each Python step
    # and kernel call costs tens of us when a step's other work has left the caches cold)
    work = ids.size * w.shape[1]
    if work < _jit.PAR_MIN_WORK:
        out, bounds, scale = k[8](w, ids, off, bool(last), pad, m, proto)
    else:
        with _jit.limit(work) as nt:  # one thread: the serial kernel (no parallel region)
            out, bounds, scale = (k[7] if nt > 1 else k[8])(w, ids, off, bool(last), pad, m, proto)
    if not bounds.size or (bounds.size == 1 and ids.size):  # invalid offsets, or ids and no
        return None  # bags: the full path names the error (an id outside every bag is one too)
    if out.shape[0] != bounds.size - 1:  # the kernel's sign of an id outside the table
        raise IndexError("index out of range in self")
    t = wrap(out, weight.dtype, CPU_DEVICE, strided)
    if weight._rg:
        ctx = _Bags(ids, num, pad, sparse, bounds, m, scale if scale.size else None)
        record_if_grad(_bag_op, t, (weight, None), (ctx,))
    return t


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    r"""Sums, means, maxes or sqrtn-combines bags of embeddings without building the lookups.

    ``input``: 1-D ids with ``offsets`` (the start of each bag; with ``include_last_offset``
    the last offset is the end of the last bag) or 2-D ``(bags, ids)`` with ``offsets=None``.
    ``mode``: ``'sum'``, ``'mean'``, ``'max'`` or ``'sqrtn'`` (sum / sqrt(bag size), TF's
    combiner). Ids equal to ``padding_idx`` are left out (also from the bag sizes); empty bags
    give zeros. In 'max' a NaN anywhere in a bag's column gives NaN there (the dense max of the
    bag's rows; torch's CPU kernel keeps a NaN only when it is the bag's first entry). ``per_sample_weights`` (same shape as ``input``) scale each id's row in
    'sum', 'mean' and 'sqrtn' (torch: 'sum' only). ``sparse=True`` (any mode) makes the
    gradient of ``weight`` a coalesced sparse COO tensor.
    """
    if per_sample_weights is None and max_norm is None and not scale_grad_by_freq:
        out = _bag_lean(input, weight, offsets, mode, sparse, include_last_offset, padding_idx)
        if out is not None:
            return out
    fname = "embedding_bag"
    ids = _check_ids(input, weight, fname)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean, max or sqrtn")
    m = _MODES[mode]
    xp = get_backend(weight.device).xp
    num = weight.shape[0]
    pad = _padding_idx(padding_idx, num)
    if per_sample_weights is not None:
        if not isinstance(per_sample_weights, Tensor):
            raise TypeError(f"{fname}(): per_sample_weights must be a Tensor or None")
        if m == 2:
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                "supported for mode='sum', 'mean' and 'sqrtn' (got mode='max')."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not "
                f"None, then it must have the same shape as the input ({list(input.shape)})"
            )
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(
                f"{fname}(): expected per_sample_weights ({per_sample_weights.dtype.name}) to have "
                f"the same dtype as weight ({weight.dtype.name})"
            )
    if scale_grad_by_freq and m == 2:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                "of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        B, L = input.shape
        flat = ids.reshape(-1)
        bounds = xp.arange(0, B * L + 1, max(L, 1), dtype=xp.int64) if L else xp.zeros(B + 1, xp.int64)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        flat = ids
        bounds = _bounds(xp, offsets, ids.size, include_last_offset, fname)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    flat = xp.ascontiguousarray(flat, dtype=xp.int64)
    ctx = _Bags(flat, num, pad, sparse, bounds, m)
    # the per-bag and per-id factors; bfloat16 tables keep them in float32 (the kernels and SciPy
    # run bfloat16 in float32)
    acc = xp.float32 if weight.dtype is D.bfloat16 else weight.dtype.np
    if m == 1 or m == 3:
        if pad >= 0:
            cs = xp.concatenate((xp.zeros(1, xp.int64), xp.cumsum(flat != pad)))
            cnt = cs[bounds[1:]] - cs[bounds[:-1]]
        else:
            cnt = xp.diff(bounds)
        cnt = xp.maximum(cnt, 1).astype(xp.float64)
        ctx.scale = (cnt if m == 1 else xp.sqrt(cnt)).astype(acc)  # the divisor
    # ctx.coef: the per-id factor of the table's gradient (per_sample_weights x 1/frequency)
    psw = None
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        ctx.coef = xp.ascontiguousarray(psw._data, dtype=acc)
    if scale_grad_by_freq and weight._rg:
        fc = ctx.freq = _freq_coef(xp, flat, pad).astype(acc)
        ctx.coef = fc if ctx.coef is None else ctx.coef * fc
    return call(_bag_op, (weight, psw), (ctx,))
