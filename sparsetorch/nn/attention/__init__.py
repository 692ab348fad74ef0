"""torch.nn.attention: choosing the kernels of ``scaled_dot_product_attention``.

sparsetorch has one attention implementation per layout (no flash / memory-efficient / cuDNN
kernels), so the selection is recorded, as ``torch.backends.cuda``'s ``*_sdp_enabled`` flags,
and read back there; results do not depend on it.
"""

import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The attention backends torch can pick (torch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enables only ``backends`` (one SDPBackend or a list) for the block, then restores the
    previous selection."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    chosen = {_FLAG[b] for b in backends if b in _FLAG}
    old = dict(_cuda._SDP)
    _cuda._SDP.update({name: name in chosen for name in _FLAG.values()})
    try:
        yield {}
    finally:
        _cuda._SDP.update(old)
