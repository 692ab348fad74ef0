"""Samplers (torch.utils.data.sampler): iterables of dataset indices (or of index lists).

Random samplers draw from a ``sparsetorch.Generator``; with ``generator=None`` they seed a fresh
generator from the default one at each ``iter()``, as torch does, so ``sparsetorch.manual_seed``
makes them reproducible. Streams are reproducible per seed but not the same numbers as torch's.
"""

import itertools

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

# randint draws for sampling with replacement come in chunks of this size: lazy enough for
# huge num_samples, batched enough to avoid one op call per index
_CHUNK = 32


def _ops():
    from ... import _ops

    return _ops


def _fresh_generator():
    """A generator seeded from the default generator (what an unseeded sampler iterates with)."""
    from ... import _dtype as D
    from ..._generator import Generator

    seed = int(_ops().empty((), dtype=D.int64).random_().item())
    return Generator().manual_seed(seed)


def _positive_int(value, name):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler:
    """Base class for all samplers: subclasses implement ``__iter__`` (indices, or lists of
    indices for a batch sampler) and, when the length is known, ``__len__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Samples elements sequentially, always in the same order.

    Args:
        data_source (Sized): data source to sample from. Must implement __len__.
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)

    def _index_list(self):
        return list(range(len(self.data_source)))


class RandomSampler(Sampler):
    """Samples elements randomly. If without replacement, then sample from a shuffled dataset.
    If with replacement, then user can specify :attr:`num_samples` to draw.

    Args:
        data_source (Sized): data source to sample from. Must implement __len__.
        replacement (bool): samples are drawn on-demand with replacement if ``True``,
            default=``False``
        num_samples (int): number of samples to draw, default=`len(dataset)`.
        generator (Generator): Generator used in sampling.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        n = self.num_samples
        if not isinstance(n, int) or n <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={n}"
            )

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = self.generator if self.generator is not None else _fresh_generator()
        ops = _ops()
        total = self.num_samples
        if self.replacement:
            for _ in range(total // _CHUNK):
                yield from ops.randint(high=n, size=(_CHUNK,), generator=g).tolist()
            yield from ops.randint(high=n, size=(total % _CHUNK,), generator=g).tolist()
        else:
            # num_samples > n: whole permutations, then a prefix of one more
            for _ in range(total // n):
                yield from ops.randperm(n, generator=g).tolist()
            yield from ops.randperm(n, generator=g).tolist()[: total % n]

    def __len__(self):
        return self.num_samples

    def _index_list(self):
        """All indices of one pass at once (BatchSampler's fast path), drawing exactly what
        ``__iter__`` draws; None where ``__iter__`` draws lazily in several steps."""
        n = len(self.data_source)
        if self.replacement or self.num_samples > n:
            return None
        g = self.generator if self.generator is not None else _fresh_generator()
        return _ops().randperm(n, generator=g).tolist()[: self.num_samples]


class SubsetRandomSampler(Sampler):
    """Samples elements randomly from a given list of indices, without replacement.

    Args:
        indices (sequence): a sequence of indices
        generator (Generator): Generator used in sampling.
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _ops().randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Samples elements from ``[0,..,len(weights)-1]`` with given probabilities (weights).

    Args:
        weights (sequence)   : a sequence of weights, not necessary summing up to one
        num_samples (int): number of samples to draw
        replacement (bool): if ``True``, samples are drawn with replacement.
            If not, they are drawn without replacement, which means that when a
            sample index is drawn for a row, it cannot be drawn again for that row.
        generator (Generator): Generator used in sampling.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ... import _dtype as D

        _positive_int(num_samples, "num_samples")
        if not isinstance(replacement, bool):
            raise ValueError(  # noqa: TRY004
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = _ops().as_tensor(weights, dtype=D.float64)
        if w.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _ops().multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Wraps another sampler to yield a mini-batch of indices.

    Args:
        sampler (Sampler or Iterable): Base sampler. Can be any iterable object
        batch_size (int): Size of mini-batch.
        drop_last (bool): If ``True``, the sampler will drop the last batch if
            its size would be less than ``batch_size``

    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        _positive_int(batch_size, "batch_size")
        if not isinstance(drop_last, bool):
            msg = f"drop_last should be a boolean value, but got drop_last={drop_last}"
            raise ValueError(msg)  # noqa: TRY004
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        bs = self.batch_size
        if type(self.sampler) in (SequentialSampler, RandomSampler):
            # slice one index list instead of pulling every index through a generator
            indices = self.sampler._index_list()
            if indices is not None:
                end = len(indices) - (len(indices) % bs if self.drop_last else 0)
                for i in range(0, end, bs):
                    yield indices[i:i + bs]
                return
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
