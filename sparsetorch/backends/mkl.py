"""torch.backends.mkl: oneMKL's switches. sparsetorch calls no oneMKL routine itself (NumPy's
BLAS does the dense products), so ``is_available()`` is False and ``verbose`` reports nothing."""

__all__ = ["VERBOSE_OFF", "VERBOSE_ON", "is_available", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """Whether sparsetorch is built with MKL support: no."""
    return False


class verbose:
    """oneMKL's on-demand verbose mode for a block: nothing to report here."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return None if self.enable == VERBOSE_OFF else self

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
