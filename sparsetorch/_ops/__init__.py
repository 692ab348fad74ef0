"""Every public op, declared once in the module of its family, re-exported here: the one index.

The op modules import each other in one direction (a DAG; imports inside functions count), lowest
first: helpers (``_util``, ``_data``, ``_ranges``, ...), ``sparse_core``, ``creation``,
``sparse_values`` / ``sparse_elementwise``, ``pointwise``, the shape family (``sparse_shape``,
``shape``, ``_join``), the indexing family (``_sparse_slicing``, ``indexing``, ``_masked``,
``_scatter``, ``_index_ops``, ``_slicing``), ``conversion``, the reduction family (``sorting``,
``sparse_reduction``, ``_reduce``, ``reduction``, ``statistics``), the linalg family
(``einsum``, ``matrix``, ``sparse_linalg``, ``linalg``, ``sparse_mm``), then the rest. Where a lower module
needs an op declared above it, it calls the Tensor method (``t.nonzero()``, ``v.mul(c)``).
"""

from .pointwise import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .conversion import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from ._join import *  # noqa: F401,F403
from ._slicing import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from ._masked import *  # noqa: F401,F403
from ._scatter import *  # noqa: F401,F403
from ._index_ops import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .einsum import *  # noqa: F401,F403
from .matrix import *  # noqa: F401,F403
from .sparse_core import *  # noqa: F401,F403
from .sparse_shape import *  # noqa: F401,F403
from ._sparse_slicing import *  # noqa: F401,F403
from .sparse_core import _indices, _nnz, _values, dense_dim, sparse_dim  # noqa: F401
from .conversion import (  # noqa: F401 - Tensor-method helpers (not public torch names)
    array_protocol, index_value, item, payload_numpy, scalar_value, tensor_repr, to_bool,
    to_numpy, tolist, type_,
    deepcopy_tensor, dlpack, dlpack_device, reduce_tensor,
)
from .pointwise import rdiv, rfloordiv, rpow, rremainder, rsub  # noqa: F401 - reflected operators
from .set_ops import *  # noqa: F401,F403
from .predicates import *  # noqa: F401,F403
from .arranging import *  # noqa: F401,F403
from .complex_views import *  # noqa: F401,F403
from .quantile_cov import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403 - pdist, cdist, cosine_similarity, pairwise_distance
from .tensor_inplace import fill_diagonal_, set_  # noqa: F401 - Tensor methods only
from .logexp_gcd import *  # noqa: F401,F403
from .special_fns import *  # noqa: F401,F403 - i0, igamma, igammac, mvlgamma (torch top-level)
from .pinning import is_pinned as _is_pinned, pin_memory as _pin_memory  # noqa: F401 - methods only
from .sharing import is_shared, share_memory_  # noqa: F401 - Tensor methods (shared memory)
from .storage import is_storage  # noqa: F401 - read-only storage views (storage.py)
from .storage import storage as _tensor_storage, untyped_storage as _untyped_storage  # noqa: F401
from .sparse_legacy import *  # noqa: F401,F403 - spmm, smm, hspmm, sspaddmm
from . import sparse_mm as _sparse_mm, sparse_scipy as _sparse_scipy  # noqa: F401,E402 - loaded
# now, not at the first sparse.mm / from_scipy call (a training loop's first step; ~1 ms)
from .legacy import tensor_ctor, tensor_new, tensor_new_zeros  # noqa: F401 - Tensor(...), x.new(...)
from ._aten import ops  # noqa: F401,E402 - torch.ops / torch._ops.ops: operator namespaces
from .._variants import FUNCTIONS as _INPLACE  # noqa: E402 - the op_ forms declared with their ops

globals().update(_INPLACE)  # torch.abs_ ... (those in _METHOD_ONLY stay methods only)
del _INPLACE

# The public face: ``from ._ops import *`` (sparsetorch/__init__.py) takes ``__all__`` only. The op
# modules and the Tensor-method helpers above stay reachable as ``_ops.X`` (the methods forward to
# them) but are not torch top-level names; tests/test_namespaces.py keeps the face equal to torch's.
_METHOD_ONLY = frozenset("""
    absolute_ add_ addcdiv_ addcmul_ addbmm_ addmm_ addr_ array_protocol atan2_ baddbmm_ bernoulli_
    bitwise_and_ bitwise_not_ bitwise_or_ bitwise_xor_ cauchy_ coalesce col_indices contiguous copy_
    copysign_ crow_indices data_ptr deepcopy_tensor dense_dim digamma_ div_ divide_ dlpack
    dlpack_device eq_ erfinv_ expand expand_as exponential_ fill_diagonal_ floor_divide_ fmod_ ge_
    geometric_ getitem gt_ hypot_ index_add_ index_copy_ index_fill_ index_value indices
    is_coalesced is_contiguous is_shared item le_ lerp_ lgamma_ log_normal_ logical_and_
    logical_not_ logical_or_ logical_xor_ lt_ mask_grad masked_fill_ masked_scatter_ mul_ multiply_
    ne_ normal_ payload_numpy pow_ random_ rdiv reduce_tensor remainder_ repeat reshape_as rfloordiv
    rmatmul rpow rremainder scalar_value scatter_ scatter_add_ scatter_reduce_ set_ setitem sgn_
    share_memory_ sign_ sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_ squeeze_
    stride sub_ subtract_ t_ tensor_ctor tensor_new tensor_new_zeros tensor_repr to to_bool
    to_numpy to_scipy to_sparse to_sparse_coo to_sparse_csr tolist transpose_ tril_ triu_
    true_divide_ type_ unfold uniform_ unsqueeze_ values values_at view view_as with_values
""".split())  # noqa: SIM905 - a word list reads and diffs better
__all__ = [  # sorted: globals() keeps import order
    _n for _n, _v in sorted(globals().items())
    if not _n.startswith("_") and _n not in _METHOD_ONLY and type(_v).__name__ != "module"
]
