"""layer_norm over the last dim, fused, for the Transformer layers' LayerNorms (``use_fused``):
the ``native_layer_norm`` table op (one node, torch's ``NativeLayerNormBackward0``; forward and
backward a few NumPy / CuPy passes over the rows, double backward through sparsetorch ops)."""

from ..._dispatch import call
from ..._layout import strided
from ._fused_norm_ops import layer_norm_op

__all__ = ["layer_norm_last", "use_fused"]


def layer_norm_last(x, weight, bias, eps):
    """``F.layer_norm(x, (x.shape[-1],), weight, bias, eps)`` fused (float32 / float64 CPU and
    CUDA arrays)."""
    return call(layer_norm_op, (x, weight, bias), (1, eps))


def use_fused(mod, x):
    """True when ``mod`` is a plain LayerNorm over the last dim with no hooks: the fused path gives
    the same values; anything else (subclasses, hooks, other shapes, dtypes) runs ``mod(x)``."""
    return (type(mod).__name__ == "LayerNorm" and type(mod).__module__.startswith("sparsetorch.")
            and not mod._forward_hooks and not mod._forward_pre_hooks
            and len(mod.normalized_shape) == 1 and x.ndim >= 1
            and x.shape[-1] == mod.normalized_shape[0] and x.dtype.name in ("float32", "float64")
            and x.layout is strided and (mod.weight is None or mod.weight.dtype is x.dtype))
