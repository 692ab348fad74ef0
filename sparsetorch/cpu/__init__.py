"""torch.cpu: the CPU device module (its ``amp`` namespace and the device queries torch has)."""

from . import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available():
    """The CPU is always available."""
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: CPU kernels run synchronously."""
