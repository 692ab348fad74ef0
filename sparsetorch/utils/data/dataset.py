"""Datasets (torch.utils.data.dataset): map-style and iterable datasets, and their combinators."""

import bisect
import itertools
import math
import warnings

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset:
    """An abstract class representing a map-style dataset: ``dataset[i]`` gives sample ``i``.

    Subclasses override ``__getitem__`` and usually ``__len__`` (used by the default samplers and
    ``len(DataLoader)``). They may also define ``__getitems__(indices)`` to fetch a whole batch at
    once; the DataLoader then calls it instead of ``__getitem__`` once per index.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable dataset: subclasses implement ``__iter__``.

    With ``num_workers > 0`` every worker holds a copy of the dataset and iterates it fully, so a
    dataset that should not yield duplicates splits its stream with
    :func:`~sparsetorch.utils.data.get_worker_info` (``info.id`` of ``info.num_workers``).
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Dataset wrapping tensors: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors (Tensor): tensors that have the same size of the first dimension.
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples of several equally long datasets side by side: a tuple (``*args``) or a dict
    (``**kwargs``) per index."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args or tuple(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Dataset as a concatenation of multiple (map-style) datasets.

    Args:
        datasets (sequence): List of datasets to be concatenated
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                msg = "ConcatDataset does not support IterableDataset"
                raise AssertionError(msg)  # noqa: TRY004
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]


class ChainDataset(IterableDataset):
    """Chains iterable datasets: iterates each of ``datasets`` in turn."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")  # noqa: TRY004
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")  # noqa: TRY004
            total += len(d)
        return total


class Subset(Dataset):
    """Subset of a dataset at specified indices.

    Args:
        dataset (Dataset): The whole Dataset
        indices (sequence): Indices in the whole set selected for subset
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # batched fetch when the parent dataset has one (the DataLoader prefers __getitems__)
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _fraction_lengths(n, fractions):
    """floor(frac * n) per split, then the remainder dealt out one by one, round robin."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return lengths


def random_split(dataset, lengths, generator=None):
    """Randomly split a dataset into non-overlapping new datasets of given lengths.

    ``lengths`` are sizes summing to ``len(dataset)``, or fractions summing to 1: each split then
    gets ``floor(frac * len(dataset))`` items and any remainder is dealt out one item at a time,
    round robin. ``generator`` (default: the default generator) fixes the permutation::

        >>> random_split(range(10), [3, 7], generator=sparsetorch.Generator().manual_seed(42))
        >>> random_split(range(30), [0.3, 0.3, 0.4])
    """
    from ... import _ops

    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _ops.randperm(sum(lengths), generator=generator).tolist()
    out, end = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[end:end + length]))
        end += length
    return out
