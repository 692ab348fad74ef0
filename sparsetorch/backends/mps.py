"""torch.backends.mps: Apple's Metal backend, which sparsetorch does not have."""

__all__ = ["get_core_count", "get_name", "is_available", "is_built", "is_macos13_or_newer",
           "is_macos_or_newer"]


def is_built():
    """Whether sparsetorch was built with MPS support: never."""
    return False


def is_available():
    """Whether an MPS device can be used: never."""
    return False


def _no_mps(what):
    raise RuntimeError(f"Cannot execute {what} without MPS backend.")


def is_macos_or_newer(major, minor):
    _no_mps("isOnMacOSorNewer()")


def is_macos13_or_newer(minor=0):
    _no_mps("isOnMacOSorNewer()")


def get_name():
    return ""


def get_core_count():
    return 0
