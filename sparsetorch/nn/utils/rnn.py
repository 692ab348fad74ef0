"""Variable-length sequences for recurrent layers (torch.nn.utils.rnn).

A ``PackedSequence`` holds the time-major concatenation of the steps of a batch of sequences
sorted by decreasing length: step ``t`` contributes the first ``batch_sizes[t]`` sequences.
Packing and unpacking are each a single ``index_select`` over a flattened (padded) tensor, so
gradients flow through them with the ordinary autograd of that op.
"""

from collections import namedtuple as _namedtuple
from collections.abc import Iterable

from ... import _ops
from ..._dtype import int64 as _int64
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = _namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])
PackedSequence_.__annotations__ = {"data": Tensor, "batch_sizes": Tensor,
                                   "sorted_indices": "Tensor | None",
                                   "unsorted_indices": "Tensor | None"}


def _bind(t, fn):
    return None if t is None else fn(t)


class PackedSequence(PackedSequence_):
    r"""Holds the data and list of :attr:`batch_sizes` of a packed sequence.

    Made by :func:`pack_padded_sequence` / :func:`pack_sequence`; accepted by ``nn.RNN``,
    ``nn.LSTM`` and ``nn.GRU``. ``batch_sizes`` is a CPU int64 tensor; ``sorted_indices`` and
    ``unsorted_indices`` (or None) are int64 tensors on ``data``'s device.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        r"""Dtype and/or device conversion of ``data`` (as ``Tensor.to``); the indices follow the
        device, ``batch_sizes`` stays on the CPU. Returns ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)
        move = lambda t: t.to(data.device, non_blocking=non_blocking)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        if not args and "device" not in kwargs:
            kwargs["device"] = "cuda"
        elif args and not isinstance(args[0], (str, int)) and not hasattr(args[0], "type"):
            kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def double(self):
        return self.to(dtype=_dt("float64"))

    def float(self):
        return self.to(dtype=_dt("float32"))

    def half(self):
        return self.to(dtype=_dt("float16"))

    def long(self):
        return self.to(dtype=_dt("int64"))

    def int(self):
        return self.to(dtype=_dt("int32"))

    def short(self):
        return self.to(dtype=_dt("int16"))

    def char(self):
        return self.to(dtype=_dt("int8"))

    def byte(self):
        return self.to(dtype=_dt("uint8"))

    @property
    def is_cuda(self):
        r"""True if ``data`` is stored on a GPU."""
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _dt(name):
    from ... import _dtype
    return getattr(_dtype, name)


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    out = _ops.empty_like(permutation)
    out.scatter_(0, permutation, _ops.arange(permutation.numel(), device=permutation.device))
    return out


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D {lengths.device.type} "
                               f"{lengths.dtype.scalar_name} tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """batch_sizes[t] = number of sequences longer than t (lengths sorted, decreasing)."""
    out, b = [], len(lengths)
    for t in range(lengths[0] if lengths else 0):
        while b and lengths[b - 1] <= t:
            b -= 1
        out.append(b)
    return out


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Packs a Tensor containing padded sequences of variable length.

    ``input`` is ``T x B x *`` (``B x T x *`` if ``batch_first``); ``lengths`` a list or 1-D
    int tensor of the ``B`` sequence lengths. With ``enforce_sorted=False`` the batch is sorted
    here and the permutation is kept in the result.
    """
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _ops.tensor(order, dtype=_int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if lens and lens[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {lens[0]} exceeds the padded "
                           f"sequence length {steps}")
    sizes = _batch_sizes(lens)
    flat = [t * batch + b for t, bs in enumerate(sizes) for b in range(bs)]
    idx = _ops.tensor(flat, dtype=_int64, device=input.device)
    data = input.reshape((steps * batch,) + tuple(input.shape[2:])).index_select(0, idx)
    return PackedSequence(data, _ops.tensor(sizes, dtype=_int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Pads a packed batch of variable length sequences (the inverse of
    :func:`pack_padded_sequence`). Returns ``(padded, lengths)``; ``lengths`` is a CPU int64
    tensor in the original batch order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    sizes = [int(v) for v in batch_sizes.tolist()]
    max_len = len(sizes)
    batch = sizes[0] if sizes else 0
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
    else:
        total_length = max_len
    pad_row = data.shape[0]  # index of the padding row appended below
    src, offset = [pad_row] * (total_length * batch), 0
    for t, bs in enumerate(sizes):
        src[t * batch:t * batch + bs] = range(offset, offset + bs)
        offset += bs
    rest = tuple(data.shape[1:])
    pad = _ops.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    idx = _ops.tensor(src, dtype=_int64, device=data.device)
    padded = _ops.cat([data, pad], 0).index_select(0, idx)
    padded = padded.reshape((total_length, batch) + rest)
    lengths = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = [lengths[i] for i in unsorted.tolist()]
    return padded, _ops.tensor(lengths, dtype=_int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Pads a list of variable length tensors (``L_i x *``) with ``padding_value`` to
    ``T x B x *`` (``B x T x *`` if ``batch_first``), padding on the right or the left."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences.unbind(0)) if isinstance(sequences, Tensor) else tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        n = max_len - s.shape[0]
        if n:
            pad = _ops.full((n,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype,
                            device=s.device)
            s = _ops.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Splits a padded tensor back into the list of its variable length sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Packs a list of variable length tensors (``L_i x *``)."""
    lengths = _ops.tensor([v.size(0) for v in sequences], dtype=_int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""Unpacks a PackedSequence into a list of variable length tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
