"""What runs inside a DataLoader worker process, and what it shares with the main process.

A worker owns a copy of the dataset; it reads ``(task_index, sampler_index)`` tasks from its own
index queue, fetches and collates the batch, and puts ``(task_index, batch)`` on the result
queue shared by all workers. ``None`` on the index queue stops it; ``_ResumeIteration`` starts a
new epoch (persistent workers). Errors travel as an ``ExceptionWrapper`` that the main process
re-raises with the worker's traceback in its message.
"""

import multiprocessing.queues
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

__all__ = ["WorkerInfo", "get_worker_info"]

# How often (seconds) a blocked worker checks that the main process is alive, and a blocked main
# process checks that its workers are alive.
STATUS_CHECK_INTERVAL = 1.0


@dataclass(frozen=True)
class WorkerInfo:
    """Information about the current DataLoader worker process (see :func:`get_worker_info`).

    Attributes:
        id: The current worker id (0 to num_workers - 1)
        num_workers: Total number of workers
        seed: Random seed set for this worker (``base_seed + id``)
        dataset: Copy of the dataset object in this worker
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker, or ``None`` in the main process.

    Use it in ``worker_init_fn`` or in an ``IterableDataset.__iter__`` to give each worker its
    own share of the data, e.g. ``itertools.islice(stream, info.id, None, info.num_workers)``.
    """
    return _worker_info


# ---- messages between the main process and the workers ----


class _ResumeIteration:
    """Start a new epoch (persistent workers); the worker answers ``(_ResumeIteration, None)``."""


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """This worker's copy of an IterableDataset is exhausted."""

    worker_id: int


class KeyErrorMessage(str):
    """A KeyError message shown as is (KeyError would otherwise print its repr)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable, to re-raise in another process."""

    def __init__(self, exc_info=None, where="in background", batch=None):
        exc_type, exc, tb = exc_info if exc_info is not None else sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where
        try:
            pickle.dumps(exc_type)
        except Exception as e:  # noqa: BLE001 - e.g. an exception class defined in a function
            # the class can't travel to the main process: a RuntimeError naming it does
            at = "" if batch is None else f" (batch index {batch})"
            self.exc_type = RuntimeError
            self.exc_msg = (f"{exc_type!r}{at}, an exception class that cannot be pickled to reach "
                            f"the main process ({type(e).__name__}: {e}); define it at module "
                            f"level to get it back as is.\n{self.exc_msg}")

    def reraise(self):
        """Raise the wrapped exception's type with "Caught <Type> <where>" and its traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exc


# ---- the result queue ----


def _unpicklable_part(obj, depth=0):
    """The innermost part of ``obj`` that plain pickle refuses (containers and instance
    attributes are searched), or None. Tensors are skipped: they travel by their own reducer."""
    from ..._tensor import Tensor

    if isinstance(obj, Tensor) or depth > 20:
        return None
    if isinstance(obj, dict):
        parts = list(obj.keys()) + list(obj.values())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        parts = list(obj)
    else:
        try:
            pickle.dumps(obj)
            return None
        except Exception:  # noqa: BLE001 - any refusal makes this the culprit
            pass
        parts = [] if isinstance(obj, type) else list(getattr(obj, "__dict__", {}).values())
        for p in parts:
            inner = _unpicklable_part(p, depth + 1)
            if inner is not None:
                return inner
        return obj
    for p in parts:
        inner = _unpicklable_part(p, depth + 1)
        if inner is not None:
            return inner
    return None


class DoneFlag:
    """The main process's "shutting down" signal to its workers: one byte of shared memory, read
    and written without a lock.

    A ``multiprocessing.Event`` (torch's choice) takes a lock shared with every worker on each
    ``is_set()``. A worker SIGKILLed inside that call (the OOM killer, a user's ``kill -9``)
    leaves the lock held for good, and the main process's ``set()`` at shutdown then waits for it
    forever: the soak test hung so, once in ~4,000 worker kills. A byte needs no lock: the
    workers only read it, the main process only sets it."""

    __slots__ = ("_byte",)

    def __init__(self, ctx):
        self._byte = ctx.RawValue("b", 0)

    def set(self):
        self._byte.value = 1

    def is_set(self):
        return self._byte.value != 0


class ResultQueue(multiprocessing.queues.Queue):
    """The queue workers put ``(task_index, result)`` on. A result the feeder thread cannot
    pickle (a lambda inside a batch) is replaced by an error naming the batch index and the type
    of the part that failed; a plain Queue prints the error and drops the item, and the main
    process would wait for it forever."""

    def __init__(self, ctx):
        super().__init__(ctx=ctx)

    def _on_queue_feeder_error(self, e, obj):
        if not (isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], int)):
            return super()._on_queue_feeder_error(e, obj)
        idx, data = obj
        part = _unpicklable_part(data)
        what = "" if part is None else f": the part that fails is {type(part)!r} ({_short(part)})"
        info = _worker_info
        wid = "" if info is None else f" process {info.id}"
        msg = (f"DataLoader worker{wid} could not pickle the result of batch index {idx} to send "
               f"it to the main process{what}. {type(e).__name__}: {e}. Return only picklable "
               f"objects from the dataset and collate_fn (no lambdas or local classes).")
        wrapped = ExceptionWrapper.__new__(ExceptionWrapper)
        wrapped.exc_type, wrapped.exc_msg = RuntimeError, msg
        wrapped.where = f"in DataLoader worker{wid}"
        self.put((idx, wrapped))


def _short(x):
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001
        r = object.__repr__(x)
    return r if len(r) <= 120 else r[:117] + "..."


# ---- fetchers: sampler index -> collated data ----


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None
        self.tensors, self.subset = _tensor_source(dataset) if auto_collation else (None, None)
        if collate_fn is not _default_collate():
            self.tensors = None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.tensors is not None:
            return self._gather(index)
        if self.getitems is not None:
            data = self.getitems(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)

    def _gather(self, index):
        """``default_collate([ds[i] for i in index])`` for a TensorDataset of dense tensors (or a
        Subset of one): one gather per tensor instead of a getitem per sample and a stack."""
        import numpy as np

        from ..._ops.creation import from_numpy

        idx = np.asarray(index, dtype=np.int64)
        if self.subset is not None:
            if not isinstance(self.subset, np.ndarray):
                self.subset = np.asarray(self.subset, dtype=np.int64)
            idx = self.subset[idx]
        n = len(self.tensors[0])
        if idx.size and idx.min() < 0:  # negative indices count from the end, as t[i] does
            idx = np.where(idx < 0, idx + n, idx)
        idx = from_numpy(idx)
        return [t.index_select(0, idx) for t in self.tensors]


def _default_collate():
    from .collate import default_collate

    return default_collate


def _tensor_source(dataset):
    """``(tensors, subset_indices)`` when ``dataset`` is a TensorDataset of dense tensors, or a
    Subset of one (exact types only: a subclass may override ``__getitem__``)."""
    from ..._layout import strided
    from .dataset import Subset, TensorDataset

    subset = None
    if type(dataset) is Subset:
        subset, dataset = dataset.indices, dataset.dataset
    if type(dataset) is not TensorDataset:
        return None, None
    if not all(t.layout is strided and t.dim() > 0 for t in dataset.tensors):
        return None, None
    return dataset.tensors, subset


class _IterableFetcher:
    """Draws from ``iter(dataset)``; a batch "index" is only a count. StopIteration: the end."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        data = []
        for _ in index:
            try:
                data.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---- seeding ----


def numpy_seed(base_seed, worker_id):
    """NumPy's global seed for a worker: mixes base seed and worker id so that workers and
    epochs get unrelated NumPy streams (``base_seed + id`` would overlap between them). The words
    go in torch's order (worker id, low and high halves of the base seed, 0), so a worker draws
    the same NumPy numbers as under torch (dlrm's random data with ``--num-workers``)."""
    import numpy as np

    b = base_seed & (2**64 - 1)
    ss = np.random.SeedSequence([worker_id, b & 0xFFFFFFFF, b >> 32, 0])
    return ss.generate_state(4)


def seed_worker(base_seed, worker_id):
    """Seed Python's ``random``, sparsetorch's default generator and NumPy's global RNG."""
    from ..._generator import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    import numpy as np

    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


# ---- the worker loop ----


def worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, no_numba):
    """The target of a worker process (see the module docstring).

    ``no_numba``: a forked child of a process whose numba GNU-OpenMP pool has started would be
    terminated by numba on its first parallel kernel, so sparsetorch's kernels run on their
    NumPy/SciPy paths in that worker (same results).
    """
    import multiprocessing

    global _worker_info
    from ..._ops.sharing import set_send_threshold

    set_send_threshold(1 << 18)  # small batches go through the pipe (faster than a new segment)
    if no_numba:
        from ...sparse._spmm import use_numba

        use_numba(False)
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - re-raised in the main process
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = multiprocessing.parent_process()
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    break  # the main process died: nobody will read our results
                continue
            if task is None:
                break
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                if init_error is None:
                    fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn,
                                             drop_last)
                continue
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or this epoch's stream is exhausted: no answer
            idx, index = task
            if init_error is not None:  # worker_init_fn failed: every task reports it
                data = init_error
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not is_iterable:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:  # noqa: BLE001 - re-raised in the main process
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}",
                                            batch=idx)
            data_queue.put((idx, data))
            del data, index, task  # don't hold a batch while blocked on the next task
    except KeyboardInterrupt:  # the main process handles Ctrl-C and shuts the workers down
        data_queue.cancel_join_thread()
    if done_event.is_set():
        # the main process no longer reads results: don't block exit flushing them
        data_queue.cancel_join_thread()
        data_queue.close()
