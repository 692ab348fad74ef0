"""The DataLoader's iterators that run in this process: the shared base (sampler, seed, pinning)
and the single-process one; ``_multiprocessing.py`` builds the worker-process one on the base."""

import warnings

from . import _pin, _worker


def _pin_available():
    from ..._backend import cuda_device_count

    return cuda_device_count() > 0


class _BaseDataLoaderIter:
    def __init__(self, loader):
        from ... import _dtype as D
        from ... import _ops

        self._dataset = loader.dataset
        self._is_iterable = loader._dataset_kind == "iterable"
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._timeout = loader.timeout
        self._persistent_workers = loader.persistent_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            from ..._backend import cuda_device_count

            if not cuda_device_count():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                              "then device pinned memory won't be used.", stacklevel=3)
        # batches go to page-locked memory only where an accelerator exists (as torch)
        self._pin = bool(loader.pin_memory) and _pin_available()
        self._sampler_iter = iter(self._index_sampler)
        # drawn after the sampler's iterator, like torch: one seed per epoch from `generator`
        self._base_seed = int(
            _ops.empty((), dtype=D.int64).random_(generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the epoch

    def __next__(self):
        data = self._next_data()
        if self._pin:
            data = _pin.pin_memory(data)
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.create_fetcher(self._is_iterable, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())
