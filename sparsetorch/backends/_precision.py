"""torch.set_float32_matmul_precision / get_float32_matmul_precision.

NumPy's (and CuPy's default) float32 products are full float32 ("highest"); the setting is
recorded and read back, and ``backends.cuda.matmul.allow_tf32`` is its view, as in torch."""

import warnings

from .. import _flags

__all__ = ["get_float32_matmul_precision", "set_float32_matmul_precision"]

_VALID = ("highest", "high", "medium")


def set_float32_matmul_precision(precision):
    """Sets the internal precision of float32 matrix products: ``"highest"`` (the default),
    ``"high"`` or ``"medium"``. Another string warns and changes nothing, as in torch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _VALID:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _flags.STATE["matmul_precision"] = precision


def get_float32_matmul_precision():
    """Returns the current float32 matmul precision (``"highest"`` by default)."""
    return _flags.STATE["matmul_precision"]
