"""sparsetorch.sparse: torch.sparse's public API.

The kernels live in this package's private modules (``_payload``, ``_convert``, ...), which the
op modules import; the public names are resolved on first access, because the op modules are
still being imported when this package first loads.
"""

_PUBLIC = {
    "check_sparse_tensor_invariants": "._api",
    "from_scipy": "._api",
    "to_scipy": "._api",
    "mm": ".._ops.sparse_linalg",
    "addmm": ".._ops.sparse_linalg",
    "sampled_addmm": ".._ops.sparse_linalg",
    "sum": "._api",
    "softmax": "._api",
    "log_softmax": "._api",
    "set_densify_limit": ".._memory",
    "get_densify_limit": ".._memory",
    "densify_limit": ".._memory",
    "DenseAllocationError": ".._memory",
}
_FROM_OPS = ("sparse_coo_tensor", "sparse_csr_tensor")
# torch.sparse.FloatTensor & co. (sparsetorch/_legacy.py; no BoolTensor, as torch)
_LEGACY = ("BFloat16Tensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")

__all__ = sorted(set(_PUBLIC) | set(_FROM_OPS) | set(_LEGACY))


def __getattr__(name):
    import importlib

    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
        globals()[name] = value  # resolved once: later accesses skip this hook (hot path)
        return value
    if name in _LEGACY:
        from .._legacy import SPARSE_TYPES

        globals()[name] = SPARSE_TYPES[name]
        return SPARSE_TYPES[name]
    if name in _FROM_OPS:
        from .. import _ops

        return getattr(_ops, name)
    raise AttributeError(f"module 'sparsetorch.sparse' has no attribute '{name}'")


def __dir__():
    return __all__
