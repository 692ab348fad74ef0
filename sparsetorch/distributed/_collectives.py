"""Collectives with torch.distributed's signatures, on tensor payloads.

Dense tensors go through the backend with their payload array as the buffer (mpi4py's buffer
interface: no pickling on the data path); a non-contiguous tensor is staged through a
contiguous copy and written back. Results are written in place and bump the tensor's version
counter like an in-place op, but are never recorded by autograd (as in torch, collectives are
not differentiable). ``src``/``dst`` are global ranks; ``group_src``/``group_dst`` are ranks
within ``group``. A process outside ``group`` does nothing and gets None.
"""

from .. import _dispatch
from .._layout import strided
from ._group import resolve
from ._sparse import sparse_all_reduce_steps
from ._work import RedOpType, ReduceOp, as_op, run_steps

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "gather",
    "gather_object",
    "irecv",
    "isend",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


# ---- argument checks ----

def _tensor(t, fname, what="tensor"):
    if not isinstance(t, _dispatch.Tensor):
        raise TypeError(f"{fname}(): {what} must be a Tensor, got {type(t).__name__}")
    return t


def _dense(t, fname, what="tensor"):
    _tensor(t, fname, what)
    if t.layout is not strided:
        raise RuntimeError(
            f"{fname}(): {what} is a {t.layout.name} tensor; sparse tensors are supported by "
            "all_reduce only. Use all_reduce, or pass t.to_dense()"
        )
    return t


def _group(group, tensors, fname):
    g = resolve(group)
    if g is not None:
        for t in tensors:
            g.backend.check_device(t, fname)
    return g


def _peer(g, rank, group_rank, what, fname):
    """Group rank of the ``src``/``dst`` argument (global ``rank`` or ``group_rank``)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{fname}(): pass {what} or group_{what}, not both")
    if group_rank is None:
        if rank is None:
            rank = 0
        if rank not in g.ranks:
            raise ValueError(
                f"{fname}(): {what}={rank} is not a rank of the group (global ranks {g.ranks}); "
                f"pass a global rank, or group_{what}= for a rank within the group"
            )
        return g.ranks.index(rank)
    if not 0 <= group_rank < g.size():
        raise ValueError(f"{fname}(): group_{what}={group_rank} is not in [0, {g.size()})")
    return group_rank


def _check_op(t, op, fname):
    if op is RedOpType.PREMUL_SUM:
        raise RuntimeError(f"{fname}(): ReduceOp.PREMUL_SUM is not supported; scale, then SUM")
    dt = t.dtype
    if op is RedOpType.AVG and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"{fname}(): ReduceOp.AVG needs a floating-point tensor, got {dt.name}; use "
            "ReduceOp.SUM and divide, or convert with .float()"
        )
    if op in (RedOpType.MIN, RedOpType.MAX) and dt.is_complex:
        raise RuntimeError(f"{fname}(): ReduceOp.{op.name} is not defined for complex tensors")
    bitwise = op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)
    if bitwise and (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"{fname}(): ReduceOp.{op.name} needs an integer or bool tensor, got {dt.name}")


def _buffer(t, fname, write=True):
    """(contiguous array, write-back function or None) for a dense tensor's payload."""
    a = t._data
    if write and not getattr(a.flags, "writeable", True):  # (CuPy arrays have no such flag)
        raise RuntimeError(
            f"{fname}(): the tensor is read-only (an expanded view whose elements share memory); "
            "clone() it first"
        )
    if a.flags.c_contiguous:
        return a, None
    c = _dispatch.get_backend(t.device).xp.ascontiguousarray(a)
    if not write:
        return c, None

    def back():
        a[...] = c

    return c, back


def _done(t, back):
    if back is not None:
        back()
    _dispatch.bump_version(t)


def _avg(buf, n):
    buf /= buf.dtype.type(n)


# ---- reductions ----

def _all_reduce_steps(be, t, op, nb):
    buf, back = _buffer(t, "all_reduce")
    yield be.allreduce(buf, op, nb)
    if op is RedOpType.AVG:
        _avg(buf, be.size)
    _done(t, back)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across all ranks with ``op``; every rank gets the result, in place.

    Sparse COO (hybrid and uncoalesced included) and CSR tensors are supported: the tensor takes
    the reduced payload, which equals the dense all-reduce of the densified tensors.

    Returns a ``Work`` handle if ``async_op`` is True, else None.
    """
    _tensor(tensor, "all_reduce")
    op = as_op(op, "all_reduce")
    g = _group(group, (tensor,), "all_reduce")
    if g is None:
        return None
    be = g.backend
    if tensor.layout is strided:
        _check_op(tensor, op, "all_reduce")
        steps = _all_reduce_steps(be, tensor, op, async_op)
    else:
        steps = sparse_all_reduce_steps(be, tensor, op, async_op)
    return run_steps(be, steps, async_op, (tensor,))


def _reduce_steps(be, t, op, root, nb):
    buf, back = _buffer(t, "reduce")
    yield be.reduce(buf, op, root, nb)
    if be.rank == root:
        if op is RedOpType.AVG:
            _avg(buf, be.size)
        _done(t, back)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` across ranks into rank ``dst``'s ``tensor`` (others are unchanged)."""
    _dense(tensor, "reduce")
    op = as_op(op, "reduce")
    g = _group(group, (tensor,), "reduce")
    if g is None:
        return None
    _check_op(tensor, op, "reduce")
    root = _peer(g, dst, group_dst, "dst", "reduce")
    return run_steps(g.backend, _reduce_steps(g.backend, tensor, op, root, async_op), async_op,
                     (tensor,))


def _check_parts(parts, like, n, fname, what):
    if not isinstance(parts, (list, tuple)) or len(parts) != n:
        raise ValueError(f"{fname}(): {what} must be a list of world_size ({n}) tensors")
    for p in parts:
        _dense(p, fname, what + " element")
        if tuple(p.shape) != tuple(like.shape) or p.dtype is not like.dtype:
            raise ValueError(
                f"{fname}(): every tensor in {what} must have the shape {list(like.shape)} and "
                f"dtype {like.dtype.name} of the input, got {list(p.shape)} {p.dtype.name}"
            )


def _scatter_into(parts, flat, n):
    chunk = flat.shape[0] // n if n else 0
    for i, p in enumerate(parts):
        p._data[...] = flat[i * chunk:(i + 1) * chunk].reshape(p._data.shape)
        _dispatch.bump_version(p)


def _flat(xp, parts):
    return xp.concatenate([p._data.reshape(-1) for p in parts]) if parts else None


def _reduce_scatter_steps(be, send, output, op, nb):
    buf, back = _buffer(output, "reduce_scatter")
    yield be.reduce_scatter_block(send, buf.reshape(-1), op, nb)
    if op is RedOpType.AVG:
        _avg(buf, be.size)
    _done(output, back)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` across ranks into ``output`` of rank ``i``."""
    _dense(output, "reduce_scatter", "output")
    op = as_op(op, "reduce_scatter")
    g = _group(group, [output] + list(input_list), "reduce_scatter")
    if g is None:
        return None
    _check_op(output, op, "reduce_scatter")
    _check_parts(input_list, output, g.size(), "reduce_scatter", "input_list")
    send = _flat(_dispatch.get_backend(output.device).xp, input_list)
    steps = _reduce_scatter_steps(g.backend, send, output, op, async_op)
    return run_steps(g.backend, steps, async_op, (output,))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world_size chunks along dim 0) across ranks; rank ``i`` gets chunk
    ``i`` in ``output``."""
    _dense(output, "reduce_scatter_tensor", "output")
    _dense(input, "reduce_scatter_tensor", "input")
    op = as_op(op, "reduce_scatter_tensor")
    g = _group(group, (output, input), "reduce_scatter_tensor")
    if g is None:
        return None
    _check_op(output, op, "reduce_scatter_tensor")
    if input.numel() != output.numel() * g.size() or input.dtype is not output.dtype:
        raise ValueError(
            f"reduce_scatter_tensor(): input must have world_size ({g.size()}) times the "
            f"elements of output and its dtype, got {list(input.shape)} {input.dtype.name} for "
            f"output {list(output.shape)} {output.dtype.name}"
        )
    send, _ = _buffer(input, "reduce_scatter_tensor", write=False)
    steps = _reduce_scatter_steps(g.backend, send.reshape(-1), output, op, async_op)
    return run_steps(g.backend, steps, async_op, (output,))


# ---- data movement ----

def _broadcast_steps(be, t, root, nb):
    buf, back = _buffer(t, "broadcast", write=be.rank != root)
    yield be.broadcast(buf, root, nb)
    if be.rank != root:
        _done(t, back)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every other rank."""
    _dense(tensor, "broadcast")
    g = _group(group, (tensor,), "broadcast")
    if g is None:
        return None
    root = _peer(g, src, group_src, "src", "broadcast")
    return run_steps(g.backend, _broadcast_steps(g.backend, tensor, root, async_op), async_op,
                     (tensor,))


def _gather_steps(be, send, recv, parts, nb, fn, *args):
    yield fn(send, recv, *args, nb)
    if parts is not None:
        _scatter_into(parts, recv, len(parts))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather ``tensor`` from every rank into ``tensor_list`` (one tensor per rank)."""
    _dense(tensor, "all_gather")
    g = _group(group, (tensor,), "all_gather")
    if g is None:
        return None
    _check_parts(tensor_list, tensor, g.size(), "all_gather", "tensor_list")
    xp = _dispatch.get_backend(tensor.device).xp
    send, _ = _buffer(tensor, "all_gather", write=False)
    recv = xp.empty(send.size * g.size(), dtype=send.dtype)
    steps = _gather_steps(g.backend, send.reshape(-1), recv, list(tensor_list), async_op,
                          g.backend.allgather)
    return run_steps(g.backend, steps, async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` from every rank into ``output_tensor`` (concatenated along dim 0,
    or stacked: any output of world_size times the elements works)."""
    _dense(output_tensor, "all_gather_into_tensor", "output_tensor")
    _dense(input_tensor, "all_gather_into_tensor", "input_tensor")
    g = _group(group, (output_tensor, input_tensor), "all_gather_into_tensor")
    if g is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * g.size() or \
            output_tensor.dtype is not input_tensor.dtype:
        raise ValueError(
            f"all_gather_into_tensor(): output_tensor must have world_size ({g.size()}) times "
            f"the elements of input_tensor and its dtype, got {list(output_tensor.shape)} "
            f"{output_tensor.dtype.name} for input {list(input_tensor.shape)} "
            f"{input_tensor.dtype.name}"
        )
    send, _ = _buffer(input_tensor, "all_gather_into_tensor", write=False)
    recv, back = _buffer(output_tensor, "all_gather_into_tensor")

    def steps():
        yield g.backend.allgather(send.reshape(-1), recv.reshape(-1), async_op)
        _done(output_tensor, back)

    return run_steps(g.backend, steps(), async_op, (output_tensor,))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gather ``tensor`` from every rank into ``gather_list`` on rank ``dst``."""
    _dense(tensor, "gather")
    g = _group(group, (tensor,), "gather")
    if g is None:
        return None
    root = _peer(g, dst, group_dst, "dst", "gather")
    send, _ = _buffer(tensor, "gather", write=False)
    parts = recv = None
    if g.rank() == root:
        _check_parts(gather_list, tensor, g.size(), "gather", "gather_list")
        parts = list(gather_list)
        recv = _dispatch.get_backend(tensor.device).xp.empty(send.size * g.size(), send.dtype)
    elif gather_list:
        raise ValueError("gather(): gather_list must be None or empty on non-destination ranks")
    steps = _gather_steps(g.backend, send.reshape(-1), recv, parts, async_op, g.backend.gather,
                          root)
    return run_steps(g.backend, steps, async_op, parts or ())


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send ``scatter_list[i]`` of rank ``src`` to ``tensor`` of rank ``i``."""
    _dense(tensor, "scatter")
    g = _group(group, (tensor,), "scatter")
    if g is None:
        return None
    root = _peer(g, src, group_src, "src", "scatter")
    send = None
    if g.rank() == root:
        _check_parts(scatter_list, tensor, g.size(), "scatter", "scatter_list")
        send = _flat(_dispatch.get_backend(tensor.device).xp, scatter_list)
    elif scatter_list:
        raise ValueError("scatter(): scatter_list must be None or empty on non-source ranks")
    buf, back = _buffer(tensor, "scatter")

    def steps():
        yield g.backend.scatter(send, buf.reshape(-1), root, async_op)
        _done(tensor, back)

    return run_steps(g.backend, steps(), async_op, (tensor,))


# ---- point to point ----

def _p2p(tensor, peer, group, tag, group_peer, fname, what, nb):
    _dense(tensor, fname)
    g = _group(group, (tensor,), fname)
    if g is None:
        return None, None
    if peer is None and group_peer is None and what == "src":
        return g, None  # recv from any source
    r = _peer(g, peer, group_peer, what, fname)
    if r == g.rank():
        raise ValueError(f"{fname}(): Invalid destination rank: should not be the same as the "
                         "rank of the current process.")
    return g, r


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (blocking)."""
    isend(tensor, dst, group, tag, group_dst, _nb=False)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None, _nb=True):
    """Send ``tensor`` to rank ``dst``; returns a Work handle (``wait()`` before reusing it)."""
    g, r = _p2p(tensor, dst, group, tag, group_dst, "isend" if _nb else "send", "dst", _nb)
    if g is None:
        return None
    buf, _ = _buffer(tensor, "send", write=False)

    def steps():
        yield g.backend.send(buf, r, tag, _nb)

    return run_steps(g.backend, steps(), _nb, ())


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's global
    rank."""
    g, r = _p2p(tensor, src, group, tag, group_src, "recv", "src", False)
    if g is None:
        return -1
    status = g.backend.new_status()
    buf, back = _buffer(tensor, "recv")
    g.backend.recv(buf, r, tag, False, status)
    _done(tensor, back)
    return g.ranks[status.Get_source() if r is None else r]


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src``; returns a Work handle."""
    g, r = _p2p(tensor, src, group, tag, group_src, "irecv", "src", True)
    if g is None:
        return None
    buf, back = _buffer(tensor, "irecv")

    def steps():
        yield g.backend.recv(buf, r, tag, True, None)
        _done(tensor, back)

    return run_steps(g.backend, steps(), True, (tensor,))


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Block until every rank of ``group`` has entered the barrier."""
    g = resolve(group)
    if g is None:
        return None

    def steps():
        yield g.backend.barrier(async_op)

    return run_steps(g.backend, steps(), async_op, ())


# ---- Python objects (pickled; for small control data) ----

def all_gather_object(object_list, obj, group=None):
    """Fill ``object_list`` (of world_size entries) with ``obj`` of every rank."""
    g = resolve(group)
    if g is None:
        return
    if len(object_list) != g.size():
        raise ValueError(
            f"all_gather_object(): object_list must have world_size ({g.size()}) entries")
    object_list[:] = g.backend.allgather_object(obj)
    return


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list`` on every rank by rank ``src``'s list (same length everywhere)."""
    g = resolve(group)
    if g is None:
        return
    root = _peer(g, src, group_src, "src", "broadcast_object_list")
    got = g.backend.bcast_object(list(object_list) if g.rank() == root else None, root)
    if len(got) != len(object_list):
        raise ValueError(
            f"broadcast_object_list(): object_list has {len(object_list)} entries here but "
            f"{len(got)} on the source rank; use lists of the same length"
        )
    object_list[:] = got
    return


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather ``obj`` of every rank into ``object_gather_list`` on rank ``dst``."""
    g = resolve(group)
    if g is None:
        return
    root = _peer(g, dst, group_dst, "dst", "gather_object")
    got = g.backend.gather_object(obj, root)
    if g.rank() == root:
        if object_gather_list is None or len(object_gather_list) != g.size():
            raise ValueError(f"gather_object(): object_gather_list must have world_size "
                             f"({g.size()}) entries on dst")
        object_gather_list[:] = got
    return
