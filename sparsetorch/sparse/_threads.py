"""Small work runs numba's parallel kernels on one thread.

Entering a ``parallel=True`` region wakes every worker of numba's OpenMP pool and waits for the
slowest; for a few thousand elements that costs more than the work, and on a busy machine (more
runnable threads than cores) a worker that is descheduled stalls the region for a whole time slice
(an EmbeddingBag step measured 81 ms instead of 1.5 ms under a load of 10 on 2 cores). Below
``PAR_MIN_WORK`` element-operations the kernels therefore run with ``numba.set_num_threads(1)``
for the call (thread-local, restored afterwards), which runs the region on the calling thread.
"""

import contextlib

__all__ = ["PAR_MIN_WORK", "limit"]

PAR_MIN_WORK = 1 << 16


class _OneThread:
    __slots__ = ("numba", "old")

    def __enter__(self):
        import numba

        self.numba = numba
        self.old = numba.get_num_threads()
        if self.old != 1:
            numba.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self.old != 1:
            self.numba.set_num_threads(self.old)


_NULL = contextlib.nullcontext()


def limit(work):
    """A context manager: one thread for ``work < PAR_MIN_WORK``, numba's setting otherwise."""
    return _NULL if work >= PAR_MIN_WORK else _OneThread()
