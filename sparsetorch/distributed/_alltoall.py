"""All-to-all collectives: ``all_to_all``, ``all_to_all_single`` and ``scatter_object_list``.

Both tensor forms are one all-to-all-v of packed contiguous buffers (MPI ``Ialltoallv``; NCCL
grouped send/receive): ``all_to_all_single`` sends rows ``input[sum(in_splits[:r]) :
sum(in_splits[:r+1])]`` to rank ``r`` and receives rank ``r``'s rows at the same place of
``output`` under ``output_split_sizes``; ``all_to_all`` packs the list of inputs and unpacks into
the list of outputs. Split sizes are not checked across ranks (as in torch): a rank that expects
a different count than its peer sends is an error of the caller (MPI reports a truncation).
"""

from .. import _dispatch
from .._layout import strided
from ._collectives import _buffer, _done, _group
from ._group import resolve
from ._work import run_steps

__all__ = ["all_to_all", "all_to_all_single", "scatter_object_list"]


def _single(t, name):
    if not isinstance(t, _dispatch.Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(t)} instead.")
    _strided(t, name)
    return t


def _strided(t, name):
    if t.layout is not strided:
        raise RuntimeError(
            f"all_to_all: {name} is a {t.layout.name} tensor; all-to-all moves dense tensors "
            "only (pass t.to_dense(), or send indices and values separately)")


def _tensor_list(lst, name):
    if not isinstance(lst, list):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type "
            f"List[torch.Tensor]\n             but got {type(lst)} instead.")
    if not all(isinstance(p, _dispatch.Tensor) for p in lst):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type "
            f"List[torch.Tensor]\n             but got {type(lst)} with elements of type "
            f"{[type(p) for p in lst]}.")
    for p in lst:
        _strided(p, name)


def _same_dtype(tensors):
    first = None
    for t in tensors:
        if first is None:
            first = t.dtype
        elif t.dtype is not first:
            raise ValueError("Invalid usage of tensors with different dtypes"
                             f"Found {first} and  {t.dtype}")


def _splits(sizes, t, n, what):
    """Row counts per rank for dim 0 of ``t`` (equal parts when ``sizes`` is None/empty)."""
    if t.ndim == 0:
        raise RuntimeError(f"all_to_all_single(): {what} must have at least one dimension")
    rows = t.shape[0]
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n:
        raise RuntimeError(
            f"all_to_all_single(): {what}_split_sizes has {len(sizes)} entries, the group has "
            f"{n} ranks")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"all_to_all_single(): {what}_split_sizes must be >= 0, got {sizes}")
    if sum(sizes) != rows:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return sizes


def _row_elems(t):
    k = 1
    for s in t.shape[1:]:
        k *= int(s)
    return k


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split ``input`` along dim 0 into one part per rank (``input_split_sizes`` rows each, or
    equal parts), send part ``r`` to rank ``r``, and write the parts received from every rank
    into ``output`` in rank order (``output_split_sizes`` rows each, or equal parts).

    Returns a ``Work`` handle if ``async_op`` is True, else None.
    """
    _single(output, "output")
    _single(input, "input")
    _same_dtype((output, input))
    g = _group(group, (output, input), "all_to_all_single")
    if g is None:
        return None
    n = g.size()
    ins = _splits(input_split_sizes, input, n, "input")
    outs = _splits(output_split_sizes, output, n, "output")
    if tuple(output.shape[1:]) != tuple(input.shape[1:]):
        raise RuntimeError(
            f"all_to_all_single(): output rows have shape {list(output.shape[1:])} but input "
            f"rows {list(input.shape[1:])}; they must match")
    k = _row_elems(input)
    send, _ = _buffer(input, "all_to_all_single", write=False)
    recv, back = _buffer(output, "all_to_all_single")
    be = g.backend

    def steps():
        yield be.alltoallv(send.reshape(-1), [s * k for s in ins], recv.reshape(-1),
                           [s * k for s in outs], async_op)
        _done(output, back)

    return run_steps(be, steps(), async_op, (output,))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[r]`` to rank ``r``; receive rank ``r``'s tensor into
    ``output_tensor_list[r]`` (shapes may differ between pairs; one dtype throughout).

    Returns a ``Work`` handle if ``async_op`` is True, else None.
    """
    _tensor_list(output_tensor_list, "output_tensor_list")
    _tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(list(output_tensor_list) + list(input_tensor_list))
    g = _group(group, list(output_tensor_list) + list(input_tensor_list), "all_to_all")
    if g is None:
        return None
    n = g.size()
    for lst, name in ((input_tensor_list, "input_tensor_list"),
                      (output_tensor_list, "output_tensor_list")):
        if len(lst) != n:
            raise RuntimeError(
                f"all_to_all(): {name} must have world_size ({n}) tensors, got {len(lst)}")
    like = (output_tensor_list or input_tensor_list)[0]
    xp = _dispatch.get_backend(like.device).xp
    dt = like._data.dtype
    send = (xp.concatenate([t._data.reshape(-1) for t in input_tensor_list]) if n
            else xp.empty(0, dt))
    recv = xp.empty(sum(t.numel() for t in output_tensor_list), dtype=dt)
    be = g.backend
    outs = list(output_tensor_list)

    def steps():
        yield be.alltoallv(send, [t.numel() for t in input_tensor_list], recv,
                           [t.numel() for t in outs], async_op)
        pos = 0
        for t in outs:
            m = t.numel()
            buf, back = _buffer(t, "all_to_all")
            buf.reshape(-1)[...] = recv[pos:pos + m]
            pos += m
            _done(t, back)

    return run_steps(be, steps(), async_op, outs)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank ``src`` sends ``scatter_object_input_list[r]`` (picklable) to rank ``r``, which
    stores it in ``scatter_object_output_list[0]``."""
    from ._collectives import _peer

    g = resolve(group)
    if g is None:
        return
    root = _peer(g, src, group_src, "src", "scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1.")
    objs = None
    if g.rank() == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        objs = list(scatter_object_input_list)
        if len(objs) != g.size():
            objs = None  # every rank must learn of the error, not hang in scatter
    ok = g.backend.bcast_object(objs is not None or g.rank() != root, root)
    if not ok:
        raise ValueError(
            f"scatter_object_list(): scatter_object_input_list on the source rank must have "
            f"world_size ({g.size()}) entries")
    scatter_object_output_list[0] = g.backend.scatter_object(objs, root)
