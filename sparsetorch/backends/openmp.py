"""torch.backends.openmp: whether CPU kernels run on a thread pool."""

__all__ = ["is_available"]


def is_available():
    """True when numba imports: sparsetorch's parallel CPU kernels run on its thread pool
    (OpenMP, TBB or numba's own workqueue, whichever numba picks)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True
