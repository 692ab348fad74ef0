"""DataLoader (torch.utils.data.DataLoader): batches from a dataset, in the main process or in
worker processes.

Worker processes (``num_workers > 0``) are real processes started with ``fork`` where the
platform has it (Linux: no pickling of the dataset, closures work, as with torch on Linux), else
with the platform's default (``spawn``); ``multiprocessing_context`` overrides it. See
``_multiprocessing.py`` for why ``fork`` is safe with sparsetorch's numba kernels.
"""

import multiprocessing
import os
import warnings

from . import _worker
from ._iterators import (  # noqa: F401 - torch's names in torch.utils.data.dataloader
    _BaseDataLoaderIter, _SingleProcessDataLoaderIter, _pin_available,
)
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info

# attributes that fix the iteration plan: setting them after __init__ is an error, as in torch
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset decides when to end)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Combines a dataset and a sampler, and provides an iterable over the given dataset.

    Args:
        dataset (Dataset): dataset from which to load the data.
        batch_size (int, optional): how many samples per batch to load (default: ``1``);
            ``None`` disables automatic batching.
        shuffle (bool, optional): set to ``True`` to have the data reshuffled at every epoch.
        sampler (Sampler or Iterable, optional): defines the strategy to draw samples from the
            dataset. If specified, :attr:`shuffle` must not be specified.
        batch_sampler (Sampler or Iterable, optional): like :attr:`sampler`, but returns a batch of
            indices at a time. Mutually exclusive with :attr:`batch_size`, :attr:`shuffle`,
            :attr:`sampler`, and :attr:`drop_last`.
        num_workers (int, optional): how many worker processes to use for data loading. ``0``
            means that the data will be loaded in the main process. (default: ``0``)
        collate_fn (Callable, optional): merges a list of samples to form a mini-batch
            (default: :func:`default_collate`, which also batches sparse COO samples).
        pin_memory (bool, optional): accepted; without an accelerator it only warns, as torch.
        drop_last (bool, optional): drop the last incomplete batch. (default: ``False``)
        timeout (numeric, optional): if positive, the timeout in seconds for collecting a batch
            from workers; ``RuntimeError`` when it passes. (default: ``0``)
        worker_init_fn (Callable, optional): called with the worker id in each worker after
            seeding and before data loading. (default: ``None``)
        multiprocessing_context (str or multiprocessing.context.BaseContext, optional): start
            method for the workers (default: ``fork`` where available).
        generator (sparsetorch.Generator, optional): used by :class:`RandomSampler` to shuffle
            and to draw each epoch's ``base_seed`` (worker ``i`` is seeded ``base_seed + i``).
        prefetch_factor (int, optional, keyword-only arg): batches loaded in advance by each
            worker (default: ``2`` with workers, ``None`` without).
        persistent_workers (bool, optional): keep the worker processes alive between epochs.
        pin_memory_device (str, optional): deprecated, as in torch.
        in_order (bool, optional): if ``False``, batches may come back in completion order.
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True
        self._check_worker_number()

    # ---- configuration ----

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid start method in "
                        f"{methods!r}, but got multiprocessing_context={ctx!r}"
                    )
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    f"string specifying the start method, but got multiprocessing_context={ctx}"
                )
        self._mp_context = ctx

    def __setattr__(self, name, value):
        if self._initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # the sampler whose items go to the fetcher: index lists with automatic batching
        return self.batch_sampler if self._auto_collation else self.sampler

    def _check_worker_number(self):
        if not self.num_workers:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our "
                f"suggested max number of worker in current system is {cpus}, which is smaller "
                f"than what this DataLoader is going to create. Please be aware that excessive "
                f"worker creation might get DataLoader running slow or even freeze, lower the "
                f"worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=3,
            )

    # ---- iteration ----

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from ._multiprocessing import _MultiProcessingDataLoaderIter

        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)  # TypeError when the dataset has no length
            if self.batch_size is not None:
                q, r = divmod(length, self.batch_size)
                length = q if self.drop_last or not r else q + 1
            return length
        return len(self._index_sampler)
