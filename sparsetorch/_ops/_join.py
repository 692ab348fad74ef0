"""Joining and broadcasting ops of the shape family: cat/stack (and their h/v/d/column forms),
broadcast_shapes/broadcast_tensors, atleast_{1,2,3}d, meshgrid; and the sparse entries of
cat/stack (COO and CSR blocks, joined values).

``cat`` takes any number of tensors, so its op is declared per arity (cached); the kernels are
keyed by the layout shared by all inputs, so a sparse layout is one more entry in ``_CAT_KERNELS``.
"""

import numbers

from .. import _dtype as D
from .. import _torch_warnings
from .._backend import CPU
from .._device import CPU as CPU_DEVICE
from .._dispatch import call, composite, defop, record_if_grad, wrap
from ..autograd import profiler as _profiler
from ..autograd._tape import OpNode as _OpNode, link_view
from ..autograd.grad_mode import GRAD_ENABLED
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Size, Tensor
from .sparse_core import to_sparse_coo, to_sparse_csr
from .sparse_shape import (
    _be, _coo, _csr, _prep, _unsupported, _vals, coo_unsqueeze, csr_unsqueeze,
)
from ._util import check_tensor, norm_dim, with_out
from .shape import expand, reshape, unsqueeze

_grad_enabled = GRAD_ENABLED.get

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cat",
    "column_stack", "concat", "concatenate", "dstack", "hstack", "meshgrid", "stack", "vstack",
]


# ---- sparse cat / stack (kernel-table entries: the values are joined by cat itself) ----

def _joined_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            dt = D.promote_types(dt, t.dtype)
    return dt


def _vals_as(t, dt):
    v = _vals(t)
    return v if v.dtype is dt else v.to(dt)


def coo_cat(*args):
    *ts, dim, sizes = args
    ts = [_prep(t) for t in ts]
    p0 = ts[0]._data
    sd, dd = p0.indices.shape[0], p0.values.ndim - 1
    for i, t in enumerate(ts):
        q = t._data
        if t.layout is not sparse_coo or q.indices.shape[0] != sd or q.values.ndim - 1 != dd:
            raise RuntimeError(
                f"cat(): all tensors must have the same sparse_dim and dense_dim: {sd}, {dd}, but "
                f"tensor at position {i} has {q.indices.shape[0]}, {q.values.ndim - 1}."
            )
    dt = _joined_dtype(ts)
    xp = _be(ts[0]).xp
    shape = p0.shape[:dim] + (sum(sizes),) + p0.shape[dim + 1:]
    if dim < sd:  # shift the coordinates of each block along dim
        parts = []
        off = 0
        for t, s in zip(ts, sizes):
            idx = t._data.indices
            if off:
                idx = idx.copy()
                idx[dim] += off
            parts.append(idx)
            off += s
        v = cat([_vals_as(t, dt) for t in ts], 0)
        coalesced = dim == 0 and all(t._data.coalesced for t in ts)
        return _coo(ts[0], xp.concatenate(parts, axis=1), v, shape, coalesced)
    # along a dense dim: each block's values padded with zeros; shared coordinates then sum
    ax = dim - sd + 1
    total = sum(sizes)
    vs = []
    off = 0
    for t, s in zip(ts, sizes):
        v = _vals_as(t, dt)
        pad = []
        if off:
            pad.append(v.new_zeros(v.shape[:ax] + (off,) + v.shape[ax + 1:]))
        pad.append(v)
        if total - off - s:
            pad.append(v.new_zeros(v.shape[:ax] + (total - off - s,) + v.shape[ax + 1:]))
        vs.append(cat(pad, ax) if len(pad) > 1 else v)
        off += s
    idx = xp.concatenate([t._data.indices for t in ts], axis=1)
    return _coo(ts[0], idx, cat(vs, 0), shape, len(ts) == 1 and p0.coalesced)


def csr_cat(*args):
    *ts, dim, sizes = args
    p0 = ts[0]._data
    if any(t._data.crow.ndim != p0.crow.ndim for t in ts):
        raise RuntimeError("cat(): CSR tensors must all be 2-D or all batched (3-D)")
    dt = _joined_dtype(ts)
    shape = p0.shape[:dim] + (sum(sizes),) + p0.shape[dim + 1:]
    xp = _be(ts[0]).xp
    if p0.crow.ndim == 1 and dim == 0:  # stack the rows: offset crow by the nnz before
        idt = p0.crow.dtype
        crows = [p0.crow]
        off = int(p0.crow[-1])
        for t in ts[1:]:
            c = t._data.crow
            crows.append(c[1:].astype(idt) + off)
            off += int(c[-1])
        col = xp.concatenate([t._data.col.astype(idt, copy=False) for t in ts])
        v = cat([_vals_as(t, dt) for t in ts], 0)
        return _csr(ts[0], xp.concatenate(crows), col, v, shape)
    if p0.crow.ndim == 2 and dim == 0 and len({t._data.nnz for t in ts}) == 1:
        idt = p0.crow.dtype
        crow = xp.concatenate([t._data.crow.astype(idt, copy=False) for t in ts])
        col = xp.concatenate([t._data.col.astype(idt, copy=False) for t in ts])
        return _csr(ts[0], crow, col, cat([_vals_as(t, dt) for t in ts], 0), shape)
    # along columns (or batched): COO cat, then a counting sort by row
    r = coo_cat(*[to_sparse_coo(t) for t in ts], dim, sizes)
    return to_sparse_csr(r)


def coo_stack(*args):
    *ts, dim = args
    return cat([coo_unsqueeze(t, dim) for t in ts], dim)


def csr_stack(*args):
    *ts, dim = args
    if dim != 0 or any(t._data.crow.ndim != 1 for t in ts):
        raise _unsupported(f"stack(dim={dim})", ts[0], " (CSR stacks 2-D tensors along dim 0)")
    nnz = [t._data.nnz for t in ts]
    if len(set(nnz)) != 1:
        raise RuntimeError(
            f"stack(): a batched CSR tensor needs the same number of specified elements in every "
            f"batch, but the tensors have {nnz}; stack their .to_sparse_coo() forms instead"
        )
    return csr_cat(*[csr_unsqueeze(t, 0) for t in ts], 0, tuple(1 for _ in ts))


def joining_error(tensors, fname):
    """The error for joining tensors of different layouts (mixed sparse/dense, COO/CSR)."""
    lays = [t.layout.name for t in tensors]
    return RuntimeError(
        f"{fname}(): expected all tensors to have the same layout, but got {lays}. Convert them "
        "first: .to_dense() for a dense result, .to_sparse() (or .to_sparse_coo()) for a sparse "
        "one."
    )


# ---- cat ----

def _cat_strided(be, *args):
    return be.xp.concatenate(args[:-2], axis=args[-2])  # (arrays..., dim, sizes)


def _stack_strided(be, *args):
    *arrays, dim = args
    s = arrays[0].shape
    if dim < len(s):  # one concatenate viewed with the new dim: xp.stack's ~2 us less (issue 14)
        return be.xp.concatenate(arrays, axis=dim).reshape(s[:dim] + (len(arrays),) + s[dim:])
    return be.xp.stack(arrays, axis=dim)


def _join_call(op, ts, params, dt):
    """``call(op, ts, params, dt, dt)``; for strided CPU inputs of dtype ``dt`` (no casts, no
    kernel lookup) the strided kernel and the node directly (issue 14)."""
    if _profiler.ACTIVE is None:
        rg = False
        payloads = []
        for t in ts:
            if t.layout is not strided or t.dtype is not dt or t.device is not CPU_DEVICE:
                break
            if t._rg:
                rg = True
            payloads.append(t._data)
        else:
            try:
                data = op.strided(CPU, *payloads, *params)
            except (ValueError, TypeError):
                return call(op, ts, params, dt, dt)  # its error
            r = wrap(data, dt, CPU_DEVICE, strided)
            if rg:
                record_if_grad(op, r, ts, params)
            return r
    return call(op, ts, params, dt, dt)


_CAT_KERNELS = {strided: _cat_strided, sparse_coo: composite(coo_cat),
                sparse_csr: composite(csr_cat)}
_STACK_KERNELS = {strided: _stack_strided, sparse_coo: composite(coo_stack),
                  sparse_csr: composite(csr_stack)}
_ops_by_arity = {}


def _cat_grad(i):
    def formula(grad, dim, sizes):
        return grad.narrow(dim, sum(sizes[:i]), sizes[i])

    return formula


def _stack_grad(i):
    def formula(grad, dim):
        return grad.select(dim, i)

    return formula


def _select_replay(_op, ts, params, _dt):  # (link_view's replay: rebuild the slice of a new base)
    return ts[0].select(*params)


def _narrow_replay(_op, ts, params, _dt):
    return ts[0].narrow(*params)


def _join_apply(node, grad_outputs):
    """CatBackward0 / StackBackward0 without create_graph: every input's slice of a strided
    ``grad`` in one pass over the payload (views linked to ``grad``, as ``narrow``/``select`` make
    them), not one dispatched op per input. Otherwise (graph building, profiling, a sparse grad)
    the formulas run."""
    grad = grad_outputs[0]
    if node._released or grad is None or grad.__class__ is not Tensor or grad.layout is not strided \
            or _grad_enabled() or _profiler.ACTIVE is not None:
        return _OpNode.apply(node, grad_outputs)
    calls = node.calls
    env = (grad, *node.saved)
    pos = None
    for c in calls:
        if c is not None:  # formula(grad, dim) / formula(grad, dim, sizes): their places in env
            pos = c[1]
            break
    d = env[pos[1]]
    sizes = env[pos[2]] if len(pos) > 2 else None
    g = grad._data
    lead = (slice(None),) * d
    dt = grad.dtype
    dev = grad.device
    out = []
    lo = start = 0
    for i, c in enumerate(calls):
        if sizes is not None:
            lo = start
            start += sizes[i]
        if c is None:
            out.append(None)
            continue
        if sizes is None:
            t = wrap(g[lead + (i, Ellipsis)], dt, dev, strided)
            link_view(t, grad, None, (d, i), _select_replay)
        else:
            t = wrap(g[lead + (slice(lo, start),)], dt, dev, strided)
            link_view(t, grad, None, (d, lo, sizes[i]), _narrow_replay)
        out.append(t)
    return out


def _joining_op(name, n):
    """The cat/stack op for ``n`` inputs (each input's gradient is its slice of ``grad``)."""
    op = _ops_by_arity.get((name, n))
    if op is None:
        names = tuple(f"tensor{i}" for i in range(n))
        if name == "cat":
            kernels, params, grad = _CAT_KERNELS, ("dim", "sizes"), _cat_grad
        else:
            kernels, params, grad = _STACK_KERNELS, ("dim",), _stack_grad
        op = _ops_by_arity[(name, n)] = defop(
            name, {(lay,) * n: k for lay, k in kernels.items()}, inputs=names, params=params,
            grads={nm: grad(i) for i, nm in enumerate(names)}, zero_preserving=True,
        )
        cls = op.node_cls
        op.node_cls = type(cls.__name__, (cls,), {"__slots__": (), "apply": _join_apply})
    return op


def _tensor_list(tensors, fname):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fname}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _lean_join(tensors, dim, is_cat):
    """cat/stack's fast path (issue 14): a list or tuple of strided CPU tensors of one dtype and
    rank >= 1, shapes equal (cat: except at ``dim``; no legacy empty 1-D), an int ``dim`` in
    range: one concatenate and the node, without the checked path's lists. None otherwise."""
    if (tensors.__class__ is not list and tensors.__class__ is not tuple) or not tensors \
            or dim.__class__ is not int or _profiler.ACTIVE is not None:
        return None
    t0 = tensors[0]
    if t0.__class__ is not Tensor:
        return None
    dt = t0.dtype
    shape = t0._data.shape
    n = len(shape)
    if not n:
        return None
    if dim < 0:
        dim += n + (not is_cat)
    if not 0 <= dim < n + (not is_cat):
        return None
    rg = False
    payloads = []
    sizes = []
    for t in tensors:
        if t.__class__ is not Tensor or t.layout is not strided or t.dtype is not dt \
                or t.device is not CPU_DEVICE:
            return None
        x = t._data
        s = x.shape
        if is_cat and s == (0,):
            return None  # legacy empty 1-D: the checked path skips it
        if s != shape and (not is_cat or len(s) != n or s[:dim] != shape[:dim]
                           or s[dim + 1:] != shape[dim + 1:]):
            return None
        if t._rg:
            rg = True
        payloads.append(x)
        sizes.append(s[dim] if is_cat else 1)
    if is_cat:
        params = (dim, tuple(sizes))
        data = _np_concatenate(payloads, axis=dim)
    else:
        params = (dim,)
        data = _stack_strided(CPU, *payloads, dim)
    r = wrap(data, dt, CPU_DEVICE, strided)
    if rg:
        record_if_grad(_joining_op("cat" if is_cat else "stack", len(payloads)), r,
                       tuple(tensors), params)
    return r


_np_concatenate = CPU.xp.concatenate


def cat(tensors, dim=0, *, out=None):
    """Concatenate ``tensors`` along ``dim`` (types promoted; legacy empty 1-D tensors skipped).

    >>> import sparsetorch as torch
    >>> torch.cat([torch.ones(2, 1), torch.zeros(2, 2)], 1).shape
    sparsetorch.Size([2, 3])
    """
    if out is None:
        r = _lean_join(tensors, dim, True)
        if r is not None:
            return r
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dt = tensors[0].dtype
    live = []
    for i, t in enumerate(tensors):
        shape = t._data.shape
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t.dtype is not dt:
            dt = D.promote_types(dt, t.dtype)
        # torch skips 1-D tensors of size 0 (legacy behaviour): they may have any other shape
        if shape != (0,):
            live.append((i, t, shape))
    if not live:
        live = [(i, t, t._data.shape) for i, t in enumerate(tensors)]
        d = 0
    else:
        ref = live[0][2]
        n = len(ref)
        d = dim if dim.__class__ is int and 0 <= dim < n else norm_dim(dim, n, "cat")
        for i, t, shape in live[1:]:
            if shape == ref:
                continue
            if len(shape) != n:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and {len(shape)}")
            for k in range(n):
                if k != d and shape[k] != ref[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{ref[k]} but got size {shape[k]} for tensor number {i} in the list."
                    )
    ts = tuple([x[1] for x in live])
    sizes = tuple([x[2][d] for x in live])
    try:
        r = _join_call(_joining_op("cat", len(ts)), ts, (d, sizes), dt)
    except NotImplementedError:
        if len({t.layout for t in ts}) > 1:  # mixed layouts: say so, with the conversions
            raise joining_error(ts, "cat") from None
        raise
    return with_out(r, out, "cat")


def concat(tensors, dim=0, *, out=None):
    """concat(tensors, dim=0, *, out=None) -> Tensor

    Alias of :func:`sparsetorch.cat` (COO and CSR inputs join as in ``cat``)."""
    return cat(tensors, dim, out=out)


def concatenate(tensors, axis=0, out=None):
    """concatenate(tensors, axis=0, out=None) -> Tensor

    Alias of :func:`sparsetorch.cat` (NumPy's spelling)."""
    return cat(tensors, axis, out=out)


def stack(tensors, dim=0, *, out=None):
    """Join equally shaped ``tensors`` along a new dim ``dim``."""
    if out is None:
        r = _lean_join(tensors, dim, False)
        if r is not None:
            return r
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    dt = tensors[0].dtype
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
        if t.dtype is not dt:
            dt = D.promote_types(dt, t.dtype)
    n = len(shape) + 1
    d = dim if dim.__class__ is int and 0 <= dim < n else norm_dim(dim, n, "stack")
    try:
        r = _join_call(_joining_op("stack", len(tensors)), tuple(tensors), (d,), dt)
    except NotImplementedError:
        if len({t.layout for t in tensors}) > 1:
            raise joining_error(tensors, "stack") from None
        raise
    return with_out(r, out, "stack")


def hstack(tensors, *, out=None):
    """Stack horizontally: along dim 1, or dim 0 for 1-D tensors."""
    ts = atleast_1d(_tensor_list(tensors, "hstack"))
    return cat(ts, 0 if ts and ts[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Stack vertically (dim 0) after making every tensor at least 2-D."""
    return cat(atleast_2d(_tensor_list(tensors, "vstack")), 0, out=out)


def dstack(tensors, *, out=None):
    """Stack depth-wise (dim 2) after making every tensor at least 3-D."""
    return cat(atleast_3d(_tensor_list(tensors, "dstack")), 2, out=out)


def column_stack(tensors, *, out=None):
    """Stack as columns: 0-D and 1-D tensors become columns, then join along dim 1."""
    ts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")]
    return cat(ts, 1, out=out)


# ---- atleast_Nd ----

def _atleast(tensors, fn, fname):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(check_tensor(t, fname)) for t in tensors[0])
    if len(tensors) == 1:
        return fn(check_tensor(tensors[0], fname))
    return tuple(fn(check_tensor(t, fname)) for t in tensors)


def _1d(t):
    return reshape(t, (1,)) if t.ndim == 0 else t


def _2d(t):
    if t.ndim == 0:
        return reshape(t, (1, 1))
    return unsqueeze(t, 0) if t.ndim == 1 else t


def _3d(t):
    if t.ndim == 0:
        return reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return reshape(t, (1, t.shape[0], 1))
    return unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    """Views of the inputs with at least one dim (a tuple when given several)."""
    return _atleast(tensors, _1d, "atleast_1d")


def atleast_2d(*tensors):
    """atleast_2d(*tensors) -> Tensor or tuple of Tensors

    Views of the inputs with at least two dims (a 1-D ``x`` becomes ``[1, n]``)."""
    return _atleast(tensors, _2d, "atleast_2d")


def atleast_3d(*tensors):
    """atleast_3d(*tensors) -> Tensor or tuple of Tensors

    Views of the inputs with at least three dims (``[n]`` -> ``[1, n, 1]``,
    ``[m, n]`` -> ``[m, n, 1]``)."""
    return _atleast(tensors, _3d, "atleast_3d")


# ---- broadcasting ----

def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to (torch.Size)."""
    norm = []
    for s in shapes:
        if isinstance(s, numbers.Integral):
            s = (int(s),)
        norm.append(tuple(s))
    n = max((len(s) for s in norm), default=0)
    out = [1] * n
    for s in norm:
        for k, v in enumerate(s):
            if v < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {list(s)}")
            j = n - len(s) + k
            if out[j] == 1:
                out[j] = v
    for i, s in enumerate(norm):
        for k, v in enumerate(s):
            j = n - len(s) + k
            if v != 1 and v != out[j]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {v} at {k - len(s)}! Mismatching "
                    f"argument at index {i} had {s}; but expected shape should be broadcastable to {out}"
                )
    return Size(out)


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        check_tensor(t, "broadcast_tensors", f"tensors[{i}]")
    n = max((t.ndim for t in tensors), default=0)
    shape = [1] * n
    for t in tensors:
        for k, v in enumerate(t.shape):
            j = n - t.ndim + k
            if shape[j] == 1:
                shape[j] = v
            elif v != 1 and v != shape[j]:
                raise RuntimeError(
                    f"The size of tensor a ({shape[j]}) must match the size of tensor b ({v}) at "
                    f"non-singleton dimension {j}"
                )
    return tuple(expand(t, tuple(shape)) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: ``indexing='ij'`` (default) or ``'xy'`` (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:  # torch's warning (once per process), then its default
        _torch_warnings.meshgrid_indexing()
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        return ()
    for i, t in enumerate(tensors):
        check_tensor(t, "meshgrid", f"tensors[{i}]")
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {t.ndim}-D tensor"
            )
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = [reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    out = [expand(reshape(t, (1,) * i + (-1,) + (1,) * (n - i - 1)), shape) for i, t in enumerate(ts)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# the cat/stack ops of up to 6 inputs are declared now, not at a training loop's first call
# (declaring one reads its formulas' signatures: ~0.25 ms, a third of a DLRM-style step)
for _n in range(1, 7):
    _joining_op("cat", _n)
    _joining_op("stack", _n)
del _n
