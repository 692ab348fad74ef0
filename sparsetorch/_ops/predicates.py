"""Top-level predicates and global switches torch code reaches for: numel, is_tensor,
is_floating_point, is_complex, is_nonzero, is_same_size, detach; the thread count and the
determinism flags. They return Python values (``detach``: a tensor sharing the input's data,
outside the graph), so none is an op.
"""

import numbers

from .. import _flags, _jit
from .._tensor import Tensor
from .._variants import method
from ._util import check_tensor

__all__ = [
    "are_deterministic_algorithms_enabled",
    "detach",
    "get_deterministic_debug_mode",
    "get_num_threads",
    "is_complex",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_floating_point",
    "is_nonzero",
    "is_same_size",
    "is_tensor",
    "numel",
    "set_deterministic_debug_mode",
    "set_num_threads",
    "use_deterministic_algorithms",
]


# ---- predicates ----

def numel(input):
    """Returns the total number of elements in the ``input`` tensor."""
    return check_tensor(input, "numel").numel()


def is_tensor(obj):
    """Returns True if ``obj`` is a sparsetorch tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Returns True if the data type of ``input`` is a floating point data type."""
    return check_tensor(input, "is_floating_point").dtype.is_floating_point


def is_complex(input):
    """Returns True if the data type of ``input`` is a complex data type."""
    return check_tensor(input, "is_complex").dtype.is_complex


@method
def is_nonzero(input):
    """Returns True if the single-element ``input`` is not equal to zero after type conversions."""
    check_tensor(input, "is_nonzero")
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


@method
def is_same_size(input, other):
    """True if ``input`` and ``other`` have the same shape."""
    check_tensor(input, "is_same_size")
    check_tensor(other, "is_same_size", "other")
    return tuple(input.shape) == tuple(other.shape)


def detach(input):
    """Returns a new tensor, detached from the current graph (sharing storage)."""
    return check_tensor(input, "detach").detach()


# ---- threads and determinism ----

_STATE = {"threads": None}


def _numba():
    try:
        import numba
    except ImportError:  # numba is optional: the count is then only recorded
        return None
    _jit.start_pool()  # the pool starts here with its workers told not to spin (_jit.py)
    return numba


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations (numba's)."""
    nb = _numba()
    if nb is not None:
        return int(nb.get_num_threads())
    return _STATE["threads"] or 1


def set_num_threads(int):
    """Sets the number of threads used for intraop parallelism on CPU: numba's thread count
    (capped at the number numba was started with) and, as torch's setting covers its BLAS, the
    thread pools of the BLAS libraries NumPy and SciPy loaded (through ``threadpoolctl``)."""
    n = int
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): argument 'int' must be int, not {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"set_num_threads(): number of threads must be positive, got {n}")
    _STATE["threads"] = n
    nb = _numba()
    if nb is not None:
        nb.set_num_threads(min(n, nb.config.NUMBA_NUM_THREADS))
    try:
        import threadpoolctl
    except ImportError:  # a dependency; without it the BLAS keeps its own count
        return
    threadpoolctl.threadpool_limits(limits=n, user_api="blas")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Sets whether operations must use deterministic algorithms. Every CPU kernel of
    sparsetorch is deterministic already; on CUDA the flag replaces the atomic scatter-adds
    (``scatter_add``, ``index_add``, ``index_put`` with accumulate, embedding and sparse
    gradients) by a sorted segment sum with a fixed order (docs/design-notes.md)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, "
                        f"not {type(mode).__name__}")
    _flags.STATE["deterministic"] = mode
    _flags.STATE["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled():
    """Returns True if the global deterministic flag is turned on."""
    return _flags.STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Returns True if the global deterministic flag is set to warn only."""
    return _flags.STATE["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """Sets the debug mode for deterministic operations: ``"default"`` / 0 (off), ``"warn"`` / 1
    (deterministic, warn only), ``"error"`` / 2 (deterministic)."""
    if isinstance(debug_mode, str):
        names = ("default", "warn", "error")
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names.index(debug_mode)
    elif not isinstance(debug_mode, numbers.Integral) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The current debug mode for deterministic operations (0, 1 or 2; see the setter)."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
