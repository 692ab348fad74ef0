"""Small top-level utilities torch code reaches for: predicates (numel, is_tensor, ...), the
thread/determinism switches, splitting and arranging helpers (tensor_split, rot90, block_diag,
cartesian_prod, combinations), diff, trapezoid and unravel_index. (logaddexp2, logcumsumexp,
gcd and lcm are in misc_pointwise.py.)

The differentiable ops here are compositions of differentiable sparsetorch ops (narrow, cat,
flip, ...), so their gradients come from their parts, higher derivatives included.
"""

import itertools
import math
import numbers

from .. import _dtype as D
from .. import _flags
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from . import pointwise as _pw
from . import _join
from .sparse_values import values_kernels
from ._util import check_tensor, norm_dim

__all__ = [
    "are_deterministic_algorithms_enabled",
    "block_diag",
    "cartesian_prod",
    "combinations",
    "detach",
    "diff",
    "dsplit",
    "get_deterministic_debug_mode",
    "get_num_threads",
    "hsplit",
    "is_complex",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_floating_point",
    "is_nonzero",
    "is_same_size",
    "is_tensor",
    "numel",
    "rot90",
    "row_stack",
    "set_deterministic_debug_mode",
    "set_num_threads",
    "tensor_split",
    "trapezoid",
    "trapz",
    "unravel_index",
    "use_deterministic_algorithms",
    "view_as_complex",
    "view_as_real",
    "real",
    "imag",
    "vsplit",
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


def is_nonzero(input):
    """Returns True if the single-element ``input`` is not equal to zero after type conversions."""
    check_tensor(input, "is_nonzero")
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


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
    return numba


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations (numba's)."""
    nb = _numba()
    if nb is not None:
        return int(nb.get_num_threads())
    return _STATE["threads"] or 1


def set_num_threads(int):
    """Sets the number of threads used for intraop parallelism on CPU (numba's thread count,
    capped at the number numba was started with)."""
    n = int
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): argument 'int' must be int, not {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"set_num_threads(): number of threads must be positive, got {n}")
    _STATE["threads"] = n
    nb = _numba()
    if nb is not None:
        nb.set_num_threads(min(n, nb.config.NUMBA_NUM_THREADS))


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


# ---- splitting and arranging ----

def _split_at(input, indices, d):
    n = input.shape[d]
    bounds = [min(max(i if i >= 0 else i + n, 0), n) for i in indices]
    starts = [0] + bounds
    ends = bounds + [n]
    return tuple(input.narrow(d, s, max(e - s, 0)) if e > s else input.narrow(d, min(s, n), 0)
                 for s, e in zip(starts, ends))


def tensor_split(input, indices_or_sections, dim=0):
    """Splits a tensor into multiple sub-tensors (views), all along ``dim``, according to the
    indices or number of sections specified by ``indices_or_sections``."""
    check_tensor(input, "tensor_split")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = norm_dim(dim, input.ndim, "tensor_split")
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.is_floating_point or ios.dtype.is_complex or ios.dtype is D.bool:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {ios.dtype}")
        if ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, numbers.Integral) and not isinstance(ios, bool):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        n = input.shape[d]
        q, r = divmod(n, ios)
        idx, at = [], 0
        for i in range(ios - 1):
            at += q + (1 if i < r else 0)
            idx.append(at)
        return _split_at(input, idx, d)
    if not isinstance(ios, (list, tuple)):
        raise TypeError("tensor_split(): argument 'indices_or_sections' must be an int, a "
                        f"sequence of ints or a Tensor, not {type(ios).__name__}")
    return _split_at(input, [int(i) for i in ios], d)


def _nsplit(input, ios, d, fname, min_dims):
    check_tensor(input, fname)
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{fname} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, numbers.Integral) and not isinstance(ios, bool):
        n = input.shape[d]
        if ios == 0 or n % ios:
            raise RuntimeError(f"torch.{fname} attempted to split along dimension {d}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{ios}!")
    return tensor_split(input, ios, d)


def hsplit(input, indices_or_sections):
    """Splits ``input`` horizontally (dim 1, or dim 0 for a 1-D tensor) with tensor_split."""
    check_tensor(input, "hsplit")
    return _nsplit(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """Splits ``input`` (at least 2-D) vertically, along dim 0, with tensor_split."""
    return _nsplit(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """Splits ``input`` (at least 3-D) depthwise, along dim 2, with tensor_split."""
    return _nsplit(input, indices_or_sections, 2, "dsplit", 3)


def row_stack(tensors, *, out=None):
    """Alias of :func:`vstack`."""
    return _join.vstack(tensors, out=out)


def rot90(input, k=1, dims=(0, 1)):
    """Rotate ``input`` by 90 degrees ``k`` times in the plane given by ``dims`` (from the first
    towards the second)."""
    check_tensor(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (norm_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k = k % 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def block_diag(*tensors):
    """Create a block diagonal matrix from the provided tensors (0-d, 1-d or 2-d each)."""
    from .creation import zeros

    mats = []
    for i, t in enumerate(tensors):
        check_tensor(t, "block_diag", f"tensors[{i}]")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
        mats.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    if not mats:
        return zeros(1, 0)
    dt = D.result_type(*mats) if len(mats) > 1 else mats[0].dtype
    cols = sum(m.shape[1] for m in mats)
    dev = mats[0].device
    rows, at = [], 0
    for m in mats:
        r, c = m.shape
        parts = [zeros(r, at, dtype=dt, device=dev), m.to(dt),
                 zeros(r, cols - at - c, dtype=dt, device=dev)]
        rows.append(_join.cat(parts, 1))
        at += c
    return _join.cat(rows, 0)


def cartesian_prod(*tensors):
    """Cartesian product of the given 1-D tensors (rows of the result are the tuples)."""
    for i, t in enumerate(tensors):
        check_tensor(t, "cartesian_prod", f"tensors[{i}]")
        if t.ndim != 1:
            raise RuntimeError("Expect a 1D vector, but got shape " + str(list(t.shape)))
    if len(tensors) == 1:
        return tensors[0]
    grids = _join.meshgrid(*tensors, indexing="ij")
    return _join.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Compute combinations of length ``r`` of the elements of the 1-D ``input`` (as Python's
    itertools.combinations / combinations_with_replacement, in the same order)."""
    from .creation import empty, tensor

    check_tensor(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(gen(range(n), r))
    if r == 0 or not combos:
        return empty(0, dtype=input.dtype, device=input.device) if r == 0 else \
            empty(0, r, dtype=input.dtype, device=input.device)
    idx = tensor(combos, dtype=D.int64, device=input.device)  # (m, r) host-built index
    return input.index_select(0, idx.reshape(-1)).reshape(len(combos), r)


# ---- diff, trapezoid ----

def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Computes the n-th forward difference along ``dim`` (``prepend``/``append`` are joined to
    ``input`` along ``dim`` first). Bool input gives the logical xor of neighbours."""
    check_tensor(input, "diff")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = norm_dim(dim, input.ndim, "diff")
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        check_tensor(extra, "diff", name)
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None:
        parts.append(prepend)
    parts.append(input)
    if append is not None:
        parts.append(append)
    x = _join.cat(parts, d) if len(parts) > 1 else input
    is_bool = x.dtype is D.bool
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = _pw.logical_xor(a, b) if is_bool else a - b
    return x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Computes the trapezoidal rule along ``dim``: with sample points ``x`` or a constant
    spacing ``dx`` (default 1). Integer ``y`` integrates in the default float dtype."""
    check_tensor(y, "trapezoid", "y")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = norm_dim(dim, y.ndim, "trapezoid")
    if not (y.dtype.is_floating_point or y.dtype.is_complex):
        y = y.to(D.get_default_dtype())
    n = y.shape[d]
    if n == 0:
        return y.sum(d) * 0
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))
    if x is None:
        return mid.sum(d) * ((1.0 if dx is None else dx) / 2)
    if dx is not None:
        raise TypeError("trapezoid(): pass either 'x' or 'dx', not both")
    check_tensor(x, "trapezoid", "x")
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point "
                               f"(got {x.shape[0]} x values and {n} y values)")
        dxs = diff(x).reshape([n - 1 if i == d else 1 for i in range(y.ndim)])
    else:
        dxs = diff(x, dim=dim)
    return (mid * dxs).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- unravel_index ----

def unravel_index(indices, shape):
    """Converts a tensor of flat indices into a tuple of coordinate tensors that index into an
    arbitrary tensor of the specified ``shape``."""
    check_tensor(indices, "unravel_index", "indices")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    total = math.prod(shape)
    idx = indices.long()
    idx = _pw.remainder(idx, total) if total else idx  # torch wraps out-of-range indices
    coords = []
    for s in reversed(shape):
        coords.append(_pw.remainder(idx, s) if s else idx)
        idx = _pw.floor_divide(idx, s) if s else idx
    return tuple(reversed(coords))


# ---- complex views ----

def _as_real_kernel(be, x):
    real = x.real.dtype  # complex64 -> float32, complex128 -> float64
    return x.reshape(x.shape or (1,)).view(real).reshape(x.shape + (2,))


def _as_complex_kernel(be, x):
    cplx = be.xp.result_type(x.dtype, be.xp.complex64)
    return x.view(cplx).reshape(x.shape[:-1])


_view_as_real_op = defop("view_as_real", {(strided,): _as_real_kernel}, view=True,
                         grads={"input": lambda grad: view_as_complex(grad.contiguous())})
_view_as_complex_op = defop("view_as_complex", {(strided,): _as_complex_kernel}, view=True,
                            grads={"input": lambda grad: view_as_real(grad)},
                            holomorphic=False)  # complex grad -> its (re, im) pairs, no conj


def view_as_real(input):
    """Returns a view of the complex ``input`` as a real tensor with a last dimension of size 2
    holding the real and imaginary parts."""
    check_tensor(input, "view_as_real")
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors (got "
                           f"{input.dtype}); build one with torch.complex(real, imag)")
    real = D.float32 if input.dtype is D.complex64 else D.float64
    return call(_view_as_real_op, (input,), (), real)


def view_as_complex(input):
    """Returns a view of ``input`` (float or double, last dimension of size 2 and stride 1) as
    a complex tensor."""
    check_tensor(input, "view_as_complex")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.layout is strided and input._data.size and input._data.strides[-1] != input._data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1 (call .contiguous() "
                           "first)")
    cplx = D.complex64 if input.dtype is D.float32 else D.complex128
    return call(_view_as_complex_op, (input,), (), cplx)


# ---- real / imag: views of a complex tensor's parts (Tensor.real / Tensor.imag) ----

def _part_kernel(part):
    def kernel(be, x, cdt):
        return getattr(x, part)  # a strided view of the complex buffer (NumPy and CuPy alike)
    return kernel


def _sparse_part(part):
    return lambda v, cdt: (real if part == "real" else imag)(v)


_real_op = defop("real", {(strided,): _part_kernel("real")}, params=("cdt",), view=True, holomorphic=False,
                 grads={"input": lambda grad, cdt: grad.to(cdt)})
_imag_op = defop("imag", {(strided,): _part_kernel("imag")}, params=("cdt",), view=True, holomorphic=False,
                 grads={"input": lambda grad, cdt: grad.to(cdt) * 1j})
for _op, _part in ((_real_op, "real"), (_imag_op, "imag")):
    _op.kernels.update(values_kernels(_sparse_part(_part), linear=True))
del _op, _part


def real(input):
    """The real part of a complex ``input`` as a view sharing its memory (a real tensor is returned
    as it is; COO and CSR: of the stored values)."""
    check_tensor(input, "real")
    if not input.dtype.is_complex:
        return input
    return call(_real_op, (input,), (input.dtype,), input.dtype.to_real())


def imag(input):
    """The imaginary part of a complex ``input`` as a view sharing its memory (COO and CSR: of
    the stored values)."""
    check_tensor(input, "imag")
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return call(_imag_op, (input,), (input.dtype,), input.dtype.to_real())
