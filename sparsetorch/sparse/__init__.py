"""sparsetorch.sparse: torch.sparse's public API.

This package also holds the sparse kernels (``_payload``, ``_convert``, ``_spmm``, ...: payloads
and a backend in, arrays out), which load before the ops. So the public names that are ops
(declared in ``_ops/``) are imported on first access (PEP 562, once: later accesses skip the hook).
"""

from .._memory import DenseAllocationError, densify_limit, get_densify_limit, set_densify_limit

# torch.sparse.FloatTensor & co. (sparsetorch/_legacy.py; no BoolTensor, as torch)
_LEGACY = ("BFloat16Tensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")
_OPS = ("addmm", "check_sparse_tensor_invariants", "from_scipy", "log_softmax", "mm",
        "sampled_addmm", "softmax", "sparse_coo_tensor", "sparse_csr_tensor", "sum", "to_scipy")

__all__ = [  # sorted
    "BFloat16Tensor", "ByteTensor", "CharTensor", "DenseAllocationError", "DoubleTensor",
    "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "addmm",
    "check_sparse_tensor_invariants", "densify_limit", "from_scipy", "get_densify_limit",
    "log_softmax", "mm", "sampled_addmm", "set_densify_limit", "softmax", "sparse_coo_tensor",
    "sparse_csr_tensor", "sum", "to_scipy",
]


def _ops_names():
    from .._ops.sparse_core import sparse_coo_tensor, sparse_csr_tensor
    from .._ops.sparse_mm import addmm, mm, sampled_addmm
    from .._ops.sparse_reduction import sparse_log_softmax, sparse_softmax, sparse_sum
    from .._ops.sparse_scipy import check_sparse_tensor_invariants, from_scipy, to_scipy

    return {"addmm": addmm, "check_sparse_tensor_invariants": check_sparse_tensor_invariants,
            "from_scipy": from_scipy, "log_softmax": sparse_log_softmax, "mm": mm,
            "sampled_addmm": sampled_addmm, "softmax": sparse_softmax,
            "sparse_coo_tensor": sparse_coo_tensor, "sparse_csr_tensor": sparse_csr_tensor,
            "sum": sparse_sum, "to_scipy": to_scipy}


def __getattr__(name):
    if name in _OPS:
        value = _ops_names()[name]
    elif name in _LEGACY:
        from .._legacy import SPARSE_TYPES

        value = SPARSE_TYPES[name]
    else:
        raise AttributeError(f"module 'sparsetorch.sparse' has no attribute '{name}'")
    globals()[name] = value  # resolved once: later accesses skip this hook (hot path)
    return value


def __dir__():
    return __all__
