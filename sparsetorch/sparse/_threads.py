"""The thread policy of the parallel kernels lives in ``sparsetorch._jit`` (one copy); this name
stays for the kernels and optimizers that import it from here."""

from .._jit import PAR_MIN_WORK, limit

__all__ = ["PAR_MIN_WORK", "limit"]
