"""The multi-process DataLoader iterator.

Protocol: each worker has an index queue; all share one result queue. The main process keeps
``prefetch_factor * num_workers`` tasks in flight, handed to the active workers round robin,
and returns results in task order (``in_order=True``), buffering those that arrive early. A
worker's exception comes back as an ``ExceptionWrapper`` and is re-raised here with the worker's
traceback. Blocking reads poll every ``STATUS_CHECK_INTERVAL`` seconds so that a dead worker
raises instead of hanging; ``timeout > 0`` bounds the wait for each batch.

Start method. The default is ``fork`` where the platform has it: fastest start, no pickling of
the dataset, ``collate_fn`` or ``worker_init_fn`` (lambdas and closures work, as with torch on
Linux). One hazard is specific to us: once numba's GNU-OpenMP thread pool has run in this process
(a parallel sparsetorch kernel: EmbeddingBag, coalesce, spmm, optimizers), a forked child that
runs a parallel numba kernel is terminated by numba ("fork() called from a process already using
GNU OpenMP"). Workers forked from such a process therefore switch sparsetorch's kernels to their
NumPy/SciPy paths (same results). Pass ``multiprocessing_context="forkserver"`` (or ``"spawn"``)
to give workers fresh processes with numba available; the dataset and functions must then be
picklable.
"""

import atexit
import itertools
import multiprocessing
import queue
import sys
import time
import weakref

from . import _worker
from ._worker import STATUS_CHECK_INTERVAL, ExceptionWrapper
from ._iterators import _BaseDataLoaderIter

__all__ = []

# seconds to wait for a worker to exit on shutdown before terminating it (SIGTERM)
_JOIN_TIMEOUT = 5.0
# seconds a worker gets to exit after SIGTERM before SIGKILL (a worker stuck in C code, or one
# that ignores SIGTERM, must never keep the main process waiting, at exit included)
_KILL_GRACE = 0.5


# iterators with live workers; shut down at interpreter exit, while modules still work
_LIVE = weakref.WeakSet()
_EXITING = [False]


@atexit.register
def _shutdown_all():
    _EXITING[0] = True
    for it in list(_LIVE):
        it._shutdown_workers(join_timeout=1.0)  # a healthy worker exits at once on None


def _join_all(workers, seconds):
    """Join ``workers`` within ``seconds`` in all (not each)."""
    end = time.monotonic() + seconds
    for w in workers:
        w.join(timeout=max(0.0, end - time.monotonic()))


def _stop(workers):
    """SIGTERM the live workers, then SIGKILL those still alive after ``_KILL_GRACE``."""
    alive = [w for w in workers if w.is_alive()]
    if not alive:
        return
    for w in alive:
        try:
            w.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    _join_all(alive, _KILL_GRACE)
    for w in alive:
        if w.is_alive():
            try:
                w.kill()
            except (OSError, ValueError, AttributeError):
                pass
    _join_all(alive, _KILL_GRACE)


def _default_context():
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _numba_pool_started():
    par = sys.modules.get("numba.np.ufunc.parallel")
    return bool(getattr(par, "_is_initialized", False))


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        ctx = loader.multiprocessing_context or _default_context()
        no_numba = ctx.get_start_method() == "fork" and _numba_pool_started()
        self._worker_result_queue = _worker.ResultQueue(ctx)
        self._workers_done_event = _worker.DoneFlag(ctx)
        _LIVE.add(self)
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()  # never block our exit on tasks nobody will read
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(self._is_iterable, self._dataset, iq, self._worker_result_queue,
                          self._workers_done_event, self._auto_collation, self._collate_fn,
                          self._drop_last, self._base_seed, loader.worker_init_fn, i,
                          self._num_workers, no_numba),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    # ---- epoch bookkeeping ----

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next task index to send
        self._rcvd_idx = 0  # next task index to return
        # task index -> (worker_id,) while in flight, (worker_id, data) once arrived early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: start a new epoch in every worker
            for iq in self._index_queues:
                iq.put(_worker._ResumeIteration())
            acks = 0
            while acks < self._num_workers:
                data = self._get_data()[0]
                if isinstance(data, _worker._ResumeIteration):
                    acks += 1  # results of the previous epoch are discarded
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has finished its IterableDataset stream
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # ---- receiving ----

    def _try_get_data(self, timeout):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            pass
        dead = [w.pid for i, w in enumerate(self._workers)
                if self._workers_status[i] and not w.is_alive()]
        if dead:
            self._shutdown_workers(join_timeout=0.0)
            pids = ", ".join(str(p) for p in dead)
            raise RuntimeError(
                f"DataLoader worker (pid(s) {pids}) exited unexpectedly; if it was killed (out "
                f"of memory?), try fewer workers or a smaller batch_size")
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            # wait in slices so that a dead worker is reported at once, not after the timeout
            end = time.monotonic() + self._timeout
            while True:
                left = end - time.monotonic()
                ok, data = self._try_get_data(max(0.0, min(left, STATUS_CHECK_INTERVAL)))
                if ok or left <= STATUS_CHECK_INTERVAL:
                    break
            if not ok:
                # the workers are stuck: stop them now (SIGTERM, then SIGKILL after a grace
                # period), so the error arrives promptly and nothing is left to hang at exit
                self._shutdown_workers(join_timeout=0.0)
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks that were consumed out of order or belong to finished workers
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                del self._task_info[idx]  # answered (by "no more data")
                self._mark_worker_done(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data)
            self._task_info[idx] += (data,)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_done(self, worker_id):
        """The worker's IterableDataset is exhausted: it answers no more tasks this epoch."""
        self._workers_status[worker_id] = False
        unanswered = sum(1 for info in self._task_info.values()
                         if len(info) == 1 and info[0] == worker_id)
        self._tasks_outstanding -= unanswered

    # ---- shutdown ----

    def _shutdown_workers(self, join_timeout=_JOIN_TIMEOUT):
        """Stop the workers: ask (``None`` on their queues), wait up to ``join_timeout`` seconds
        in all, then SIGTERM, and SIGKILL whatever is alive ``_KILL_GRACE`` seconds later."""
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for iq in self._index_queues:
                try:
                    iq.put(None)
                except (ValueError, OSError):  # queue already closed
                    pass
            _join_all(self._workers, join_timeout)
            for iq in self._index_queues:
                iq.cancel_join_thread()
                iq.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            _stop(self._workers)

    def __del__(self):
        if not _EXITING[0] and not getattr(self, "_shutdown", True):
            self._shutdown_workers()
