"""Every public op, declared once in the module of its family, re-exported here."""

from .pointwise import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .conversion import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .sparse_core import *  # noqa: F401,F403
from .sparse_shape import *  # noqa: F401,F403
from .sparse_core import _indices, _nnz, _values, dense_dim, sparse_dim  # noqa: F401
from .conversion import (  # noqa: F401 - Tensor-method helpers (not public torch names)
    array_protocol, index_value, item, payload_numpy, scalar_value, tensor_repr, to_bool,
    to_numpy, tolist, type_,
    deepcopy_tensor, dlpack, dlpack_device, reduce_tensor,
)
from .pointwise import rdiv, rfloordiv, rpow, rremainder, rsub  # noqa: F401 - reflected operators
from .set_ops import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .misc_stats import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403 - pdist
from .tensor_inplace import fill_diagonal_, set_  # noqa: F401 - Tensor methods only
from .misc_pointwise import *  # noqa: F401,F403
from .special_fns import *  # noqa: F401,F403 - i0, igamma, igammac, mvlgamma (torch top-level)
from .pinning import is_pinned as _is_pinned, pin_memory as _pin_memory  # noqa: F401 - methods only
from .sharing import is_shared, share_memory_  # noqa: F401 - Tensor methods (shared memory)
from .sparse_legacy import *  # noqa: F401,F403 - spmm, smm, hspmm, sspaddmm
from .legacy import tensor_ctor, tensor_new, tensor_new_zeros  # noqa: F401 - Tensor(...), x.new(...)
from ._aten import ops  # noqa: F401,E402 - torch.ops / torch._ops.ops: operator namespaces
