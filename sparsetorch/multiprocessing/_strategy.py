"""Sharing strategies (``file_descriptor``, ``file_system``): see ``sparsetorch/_shm.py``."""

from .. import _shm

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors.

    Args:
        new_strategy (str): Name of the selected strategy. Should be one of
            the values returned by :func:`get_all_sharing_strategies()`.
    """
    _shm.set_strategy(new_strategy)


def get_sharing_strategy():
    """Return the current strategy for sharing CPU tensors."""
    return _shm.get_strategy()


def get_all_sharing_strategies():
    """Return a set of sharing strategies supported on a current system."""
    return set(_shm.STRATEGIES)
