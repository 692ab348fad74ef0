"""Old home of the thread policy of the parallel kernels, which lives in ``sparsetorch._jit`` (one
copy); nothing inside the package imports this name any more, it stays for code that did."""

from .._jit import PAR_MIN_WORK, limit

__all__ = ["PAR_MIN_WORK", "limit"]
