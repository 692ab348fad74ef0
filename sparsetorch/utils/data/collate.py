"""Collate functions (torch.utils.data._utils.collate): samples -> batch.

``default_collate`` follows torch's rules and additionally batches sparse samples, which torch
refuses: ``n`` COO samples of one shape give a COO tensor of shape ``(n, *shape)`` (the batch
index is prepended to the indices; hybrid dense dims are kept), ``n`` CSR samples give a batched
CSR tensor when they have equal shapes and nnz.

``collate_id_lists`` turns variable-length id lists into the ``(ids, offsets)`` pair that
``nn.EmbeddingBag`` takes.
"""

import collections.abc
import itertools

import numpy as np  # host-side: recognise NumPy samples and concatenate id lists

from ... import _dtype as D
from ..._dispatch import Tensor, wrap
from ..._layout import sparse_coo, sparse_csr, strided

__all__ = ["collate_id_lists", "default_collate", "default_convert"]

_ERR_FMT = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
_STRING_KINDS = frozenset("SaUO")  # NumPy dtype chars that cannot become tensors


def _ops():
    from ... import _ops

    return _ops


# ---- default_convert: samples -> tensors, no batching ----


def default_convert(data):
    """Convert NumPy arrays and scalars inside ``data`` to tensors, keeping its structure.

    The DataLoader's ``collate_fn`` when automatic batching is off (``batch_size=None``).
    Tuples become lists, as in torch.
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)):
        if isinstance(data, (np.str_, np.bytes_)) or data.dtype.char in _STRING_KINDS:
            return data
        return _ops().as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:  # a Sequence type that cannot be built from a list
            return converted
    return data


def _rebuild_mapping(template, items):
    """A mapping of ``template``'s type holding ``items`` (a plain dict when that fails)."""
    if type(template) is dict:
        return items
    try:
        out = type(template)(items)
    except TypeError:
        return items
    return out


# ---- default_collate: a list of samples -> one batch ----


def default_collate(batch):
    """Merge a list of samples into a batch, as torch's ``default_collate``.

    * tensors are stacked along a new first dim (sparse COO and CSR samples too, see the
      module docstring); mixing sparse and dense tensors in one field raises ``TypeError``
    * NumPy arrays become stacked tensors, NumPy scalars a 1-D tensor
    * ``float`` -> ``float64`` tensor, ``int`` -> ``int64`` tensor, ``bool`` -> ``bool`` tensor
    * ``str``/``bytes`` -> the list unchanged
    * dicts, namedtuples, lists and tuples are collated field by field (tuples give lists)

    >>> default_collate([(0, 1.5), (1, 2.5)])
    [tensor([0, 1]), tensor([1.5000, 2.5000], dtype=sparsetorch.float64)]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _collate_tensors(batch)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if elem.dtype.char in _STRING_KINDS:
            raise TypeError(_ERR_FMT.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.ndim:
            return _collate_tensors([_ops().as_tensor(b) for b in batch])
        try:
            arr = np.asarray(batch)
        except ValueError:  # NumPy scalars mixed with arrays/tensors of other shapes
            raise RuntimeError(
                f"default_collate: a field holds a NumPy scalar in sample 0 but values of other "
                f"shapes in other samples ({sorted({type(b).__name__ for b in batch})}); give "
                "every sample the same kind of value") from None
        return _ops().as_tensor(arr)
    if isinstance(elem, float):
        return _ops().tensor(batch, dtype=D.float64)
    if isinstance(elem, int):  # bool included: a bool tensor
        return _ops().tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(_ERR_FMT.format(type(elem)))


def _collate_tensors(batch):
    layouts = {t.layout for t in batch if isinstance(t, Tensor)}
    all_tensors = all(isinstance(t, Tensor) for t in batch)
    if len(layouts) > 1 or (strided not in layouts and not all_tensors):
        names = sorted({t.layout.name if isinstance(t, Tensor) else type(t).__name__
                        for t in batch})
        raise TypeError(
            f"default_collate: cannot batch samples of different layouts in one field (got "
            f"{names}); convert them to one layout first (.to_dense(), or .to_sparse() for all)"
        )
    lay = layouts.pop()
    if lay is sparse_coo and not any(t.requires_grad for t in batch):
        return _stack_coo(batch)
    if lay is sparse_csr:
        nnz = [t._data.nnz for t in batch]
        if len(set(nnz)) > 1:
            raise RuntimeError(
                f"default_collate: CSR samples with different numbers of specified elements "
                f"({sorted(set(nnz))}) cannot form a batched CSR tensor; give the dataset COO "
                f"samples (.to_sparse_coo()) to get a sparse COO batch instead"
            )
    # dense, CSR, and COO samples that need autograd: stack (differentiable)
    return _ops().stack(batch, 0)


def _stack_coo(batch):
    """COO samples of equal shape -> a COO batch (n, *shape); coalesced when every sample is."""
    from ..._backend import get_backend

    first = batch[0]
    shape, sparse_dim = first._data.shape, first._data.sparse_dim
    for t in batch:
        p = t._data
        if p.shape != shape or p.sparse_dim != sparse_dim or t.dtype is not first.dtype \
                or t.device != first.device:
            raise RuntimeError(
                f"default_collate: sparse COO samples must share shape, sparse_dim, dtype and "
                f"device; got {tuple(shape)} (sparse_dim {sparse_dim}, {first.dtype}, "
                f"{first.device}) and {tuple(p.shape)} (sparse_dim {p.sparse_dim}, {t.dtype}, "
                f"{t.device})"
            )
    from ...sparse._payload import COO

    xp = get_backend(first.device).xp
    payloads = [t._data for t in batch]
    nnz = xp.asarray([p.nnz for p in payloads], dtype=xp.int64)
    rows = xp.repeat(xp.arange(len(batch), dtype=xp.int64), nnz)
    idx = xp.concatenate([p.indices for p in payloads], axis=1)
    indices = xp.concatenate([rows[None, :], idx], axis=0)
    values = xp.concatenate([p.values for p in payloads], axis=0)
    # batch-major order keeps sorted, unique per-sample indices sorted and unique
    coalesced = all(p.coalesced for p in payloads)
    return wrap(COO(indices, values, (len(batch), *shape), coalesced), first.dtype,
                first.device, sparse_coo)


# ---- id lists for EmbeddingBag ----


def _ids_array(ids, i):
    if isinstance(ids, Tensor):
        if ids.layout is not strided:
            raise TypeError(f"collate_id_lists: sample {i} has a {ids.layout.name} tensor of "
                            f"ids; give a dense 1-D integer tensor, list or array")
        ids = ids.detach().cpu().numpy()
    a = np.asarray(ids)
    if a.ndim != 1:
        raise ValueError(f"collate_id_lists: sample {i}'s ids must be 1-D, but got shape "
                         f"{a.shape}")
    if a.dtype.kind not in "iu":
        if a.size == 0:  # [] is an empty bag, whatever NumPy guesses for its dtype
            return a.astype(np.int64)
        raise TypeError(f"collate_id_lists: sample {i}'s ids must be integers, but got dtype "
                        f"{a.dtype}")
    return a


def _is_ids(x):
    """An id sequence (rather than an ``(ids, ...)`` record)."""
    if isinstance(x, (Tensor, np.ndarray)):
        return True
    if isinstance(x, (list, tuple)):
        return not x or not isinstance(x[0], (list, tuple, Tensor, np.ndarray))
    return False


def collate_id_lists(batch, *, include_last_offset=False):
    """Collate variable-length id lists into ``(ids, offsets)`` for ``nn.EmbeddingBag``.

    Each sample is either a 1-D sequence of integer ids (a list, tuple, NumPy array or dense
    tensor; it may be empty: an empty bag), or a record ``(ids, *fields)`` whose first item is
    such a sequence. The ids of all samples are concatenated into one ``int64`` tensor and
    ``offsets[i]`` is where sample ``i`` starts, so ``nn.EmbeddingBag(...)(ids, offsets)`` gives
    one row per sample. With ``include_last_offset=True`` the offsets end with ``len(ids)``
    (for ``EmbeddingBag(..., include_last_offset=True)``).

    Returns ``(ids, offsets)`` for plain id lists, and ``(ids, offsets, *fields)`` for records,
    each of the other fields batched with :func:`default_collate`::

        >>> loader = DataLoader(data, batch_size=64, collate_fn=collate_id_lists)
        >>> for ids, offsets, label in loader:   # samples are (ids, label)
        ...     loss = loss_fn(bag(ids, offsets), label)
    """
    from ..._ops.creation import from_numpy

    if not batch:
        raise ValueError("collate_id_lists: the batch is empty")
    records = not _is_ids(batch[0])
    seqs = [s[0] for s in batch] if records else batch
    if records and any(_is_ids(s) for s in batch):
        raise TypeError("collate_id_lists: samples must all be id sequences or all be "
                        "(ids, ...) records, not a mix")
    ids = None
    if all(type(s) is list for s in seqs):  # fast path: plain Python lists of ints
        lengths = np.fromiter(map(len, seqs), np.int64, len(seqs))
        try:
            flat = np.asarray(list(itertools.chain.from_iterable(seqs)))
        except (TypeError, ValueError):  # ragged or odd items: the checked path reports them
            flat = np.zeros(0, object)
        if flat.dtype.kind in "iu":  # else the checked path below names the bad sample
            ids = flat.astype(np.int64, copy=False)
        elif flat.size == 0 and flat.dtype != object:
            ids = np.zeros(0, np.int64)
    if ids is None:
        arrays = [_ids_array(s, i) for i, s in enumerate(seqs)]
        lengths = np.fromiter(map(len, arrays), np.int64, len(arrays))
        ids = np.concatenate(arrays).astype(np.int64, copy=False)
    offsets = np.zeros(len(seqs) + include_last_offset, np.int64)
    np.cumsum(lengths[:len(offsets) - 1], out=offsets[1:])
    out = (from_numpy(ids), from_numpy(offsets))
    if not records:
        return out
    width = len(batch[0])
    if any(len(s) != width for s in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    return out + tuple(default_collate([s[k] for s in batch]) for k in range(1, width))
