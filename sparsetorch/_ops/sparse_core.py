"""Sparse constructors, conversions, accessors, and the differentiable primitives under them.

Every sparse op with a gradient is built from four primitives, each with one formula:

- ``values(x)``            sparse -> its stored values (dense ``[nnz, *dense_dims]``)
- ``with_values(p, v)``    a sparse tensor with ``p``'s pattern and values ``v``
- ``values_at(x, p)``      any layout -> the values of ``x`` at ``p``'s stored positions
- ``coalesce(x)``          sum duplicates

so the gradient of a sparse input always has that input's pattern (masked semantics), and its
memory is O(nnz), never O(dense size).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _dtype as D
from .._backend import get_backend, move
from .._device import as_device
from .._dispatch import call, defop, register_payload, wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from ..sparse import _convert as C
from ..sparse._structure import coo_to_csr as _coo_to_csr
from ..sparse._payload import COO, CSR, validate_coo, validate_csr
from .._variants import method
from ._data import data_tensor
from ._util import check_tensor

if TYPE_CHECKING:
    from .._dtype import dtype
    from .._typing import DeviceLike, SizeLike

__all__ = [
    "sparse_coo_tensor", "sparse_csr_tensor", "to_dense", "to_sparse", "to_sparse_coo",
    "to_sparse_csr", "coalesce", "is_coalesced", "indices", "values", "crow_indices",
    "col_indices", "sparse_mask", "with_values", "values_at", "to_scipy", "mask_grad",
]

register_payload(COO, sparse_coo)
register_payload(CSR, sparse_csr)

S, O, R = (strided,), (sparse_coo,), (sparse_csr,)


# ---- primitives ----

def _values_kernel(be, p):
    return p.values


_values_op = defop("values", {O: _values_kernel, R: _values_kernel},
                   grads={"input": lambda grad, input: with_values(input, grad)})


def _with_values_kernel(be, p, v):
    return p.with_values(v)


_with_values_op = defop(
    "with_values", {(sparse_coo, strided): _with_values_kernel, (sparse_csr, strided): _with_values_kernel},
    inputs=("pattern", "values"),
    grads={"values": lambda grad, pattern: values_at(grad, pattern)},
)


def _values_at_dense(be, x, p):
    if p.__class__ is COO:
        return x[tuple(p.indices)]
    if p.crow.ndim == 1:
        return x[C.csr_row_indices(be, p.crow), p.col]
    q = C.csr_to_coo(be, p)
    return x[tuple(q.indices)].reshape(p.values.shape)


def _lookup(be, src, p):
    """Values of COO payload ``src`` at the positions stored in COO payload ``p`` (0 if absent)."""
    xp = be.xp
    src = C.coalesce(be, src)
    sizes = p.shape[: p.indices.shape[0]]
    out = xp.zeros((p.indices.shape[1],) + tuple(src.values.shape[1:]), dtype=src.values.dtype)
    if src.nnz == 0 or p.indices.shape[1] == 0:
        return out
    (a, b), _ = C.joint_keys(be, [src.indices, p.indices], sizes)  # ranks where packing overflows
    pos = xp.searchsorted(a, b)
    pos_c = xp.minimum(pos, a.shape[0] - 1)
    hit = a[pos_c] == b
    out[hit] = src.values[pos_c[hit]]
    return out


def _values_at_sparse(be, x, p):
    if x.__class__ is p.__class__ and (
            x.indices is p.indices and x.coalesced if x.__class__ is COO else x.col is p.col):
        return x.values  # the same (coalesced) pattern: no lookup needed
    xs = x if x.__class__ is COO else C.csr_to_coo(be, x)
    ps = p if p.__class__ is COO else C.csr_to_coo(be, p)
    if xs.indices.shape[0] != ps.indices.shape[0]:
        raise RuntimeError(
            f"values_at(): sparse_dim mismatch ({xs.indices.shape[0]} vs {ps.indices.shape[0]})"
        )
    v = _lookup(be, xs, ps)
    return v if p.__class__ is COO else v.reshape(p.values.shape)


_values_at_op = defop(
    "values_at",
    {(strided, sparse_coo): _values_at_dense, (strided, sparse_csr): _values_at_dense,
     (sparse_coo, sparse_coo): _values_at_sparse, (sparse_csr, sparse_csr): _values_at_sparse,
     (sparse_coo, sparse_csr): _values_at_sparse, (sparse_csr, sparse_coo): _values_at_sparse},
    inputs=("input", "pattern"),
    grads={"input": lambda grad, input, pattern: _values_at_input_backward(grad, input, pattern)},
)


def _values_at_input_backward(grad, input, pattern):
    s = with_values(pattern, grad)
    if input.layout is strided:
        return to_dense(s)
    return mask_grad(s if s.layout is input.layout else to_sparse_coo(s), input)


def values_at(input, pattern):
    """The values of ``input`` at the stored positions of the sparse ``pattern`` ([nnz, ...])."""
    _check_same_shape(input, pattern, "values_at")
    return call(_values_at_op, (input, pattern), (), input.dtype)


def with_values(pattern, values):
    """A sparse tensor with ``pattern``'s indices and the given ``values`` (differentiable)."""
    check_tensor(values, "with_values", "values")
    if values.layout is not strided:
        raise TypeError("with_values(): values must be a dense tensor")
    if tuple(values.shape) != tuple(pattern._data.values.shape):
        raise RuntimeError(
            f"with_values(): values of shape {list(values.shape)} do not fit the pattern's values "
            f"shape {list(pattern._data.values.shape)}"
        )
    return call(_with_values_op, (pattern, values), (), values.dtype)


def _check_same_shape(a, b, fname):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{fname}(): expected tensors of the same shape, got {list(a.shape)} and {list(b.shape)}"
        )


# ---- coalesce ----

# As a function of the tensor, coalesce is the identity: its gradient passes through (the engine
# masks it to the input's pattern).
_coalesce_op = defop(
    "coalesce", {O: C.coalesce, R: lambda be, p: p},
    grads={"input": lambda grad: grad},
    zero_preserving=True,
)


@method
def coalesce(input):
    """Sort the indices of a COO tensor and sum duplicate entries; ``input`` if already done."""
    check_tensor(input, "coalesce")
    if input.layout is strided:
        raise RuntimeError("coalesce(): expected a sparse COO tensor, but got a strided (dense) tensor")
    if input.layout is sparse_csr or input._data.coalesced:
        return input
    return call(_coalesce_op, (input,))


@method
def is_coalesced(input):
    if input.layout is strided:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")
    return input._data.coalesced


# ---- conversions ----

_to_dense_op = defop(
    "to_dense",
    {O: C.coo_to_dense, R: C.csr_to_dense},
    grads={"input": lambda grad, input: mask_grad(grad, input)},
)


@method
def to_dense(input, dtype=None, *, masked_grad=True):
    """The dense (strided) tensor; its gradient w.r.t. a sparse input is masked to its pattern."""
    check_tensor(input, "to_dense")
    r = input if input.layout is strided else call(_to_dense_op, (input,))
    return r if dtype is None else r.to(dtype)


def _back_to_layout(grad, input):
    """A gradient converted to ``input``'s layout (masked to its pattern when sparse)."""
    if input.layout is strided:
        return to_dense(grad)
    g = grad if grad.layout is input.layout else (
        to_sparse_coo(grad) if input.layout is sparse_coo else to_sparse_csr(grad))
    return mask_grad(g, input)


_to_coo_op = defop(
    "to_sparse_coo",
    {S: C.dense_to_coo, R: lambda be, p, sd: C.csr_to_coo(be, p)},
    params=("sparse_dim",),
    grads={"input": lambda grad, input: _back_to_layout(grad, input)},
)
_to_csr_op = defop(
    "to_sparse_csr",
    {S: lambda be, x: C.dense_to_csr(be, x), O: lambda be, p: _coo_to_csr(be, p)},
    grads={"input": lambda grad, input: _back_to_layout(grad, input)},
)


@method
def to_sparse_coo(input):
    check_tensor(input, "to_sparse_coo")
    if input.layout is sparse_coo:
        return input
    return call(_to_coo_op, (input,), (None,))


@method
def to_sparse_csr(input, dense_dim=None):
    check_tensor(input, "to_sparse_csr")
    if input.layout is sparse_csr:
        return input
    if dense_dim:
        raise NotImplementedError("to_sparse_csr(dense_dim=...): hybrid CSR is not supported; use COO")
    return call(_to_csr_op, (input,))


@method
def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``to_sparse(sparse_dim)`` -> COO with the first ``sparse_dim`` dims sparse (hybrid);
    ``to_sparse(layout=sparsetorch.sparse_csr)`` -> CSR."""
    check_tensor(input, "to_sparse")
    if blocksize is not None:
        raise NotImplementedError("to_sparse(blocksize=...): block layouts (BSR/BSC) are not supported")
    if layout is sparse_csr:
        return to_sparse_csr(input)
    if layout not in (None, sparse_coo):
        raise TypeError(f"to_sparse(): unsupported layout {layout!r}")
    if input.layout is sparse_coo:
        return input
    if input.layout is sparse_csr:
        return to_sparse_coo(input)
    if sparse_dim is not None:
        if not isinstance(sparse_dim, int) or not 0 <= sparse_dim <= input.ndim:
            raise RuntimeError(
                f"to_sparse(): sparse_dim must be an int in [0, {input.ndim}], got {sparse_dim!r}"
            )
    return call(_to_coo_op, (input,), (sparse_dim,))


def mask_grad(grad, input):
    """``grad`` restricted to the pattern of the sparse ``input``, as a tensor (coalesced).

    This is the gradient of a sparse input (masked semantics): densified, it equals the dense
    gradient times the pattern, whatever duplicates ``input`` stores.
    """
    if input.layout is sparse_coo and not input._data.coalesced:
        be = get_backend(input.device)
        input = wrap(C.coalesce(be, input._data), input.dtype, input.device, sparse_coo)
    return sparse_mask(grad, input)


@method
def sparse_mask(input, mask):
    """``input``'s values at the stored positions of the sparse ``mask`` (mask's values ignored).

    As in torch, the result keeps the mask's pattern, duplicates included.
    """
    check_tensor(input, "sparse_mask")
    check_tensor(mask, "sparse_mask", "mask")
    if mask.layout is strided:
        raise RuntimeError("sparse_mask(): mask is expected to be a sparse tensor (COO or CSR)")
    _check_same_shape(input, mask, "sparse_mask")
    v = values_at(input, mask)
    if mask.dtype is not v.dtype:
        mask = wrap(mask._data.astype(v.dtype), v.dtype, mask.device, mask.layout)
    return with_values(mask, v)


# ---- accessors ----

def _check_layout(input, lay, fname):
    if input.layout is not lay:
        raise RuntimeError(
            f"{fname} expected {'sparse coordinate' if lay is sparse_coo else 'sparse CSR'} tensor "
            f"layout but got {input.layout.name}"
        )


@method
def values(input):
    """Stored values (differentiable). COO must be coalesced, as in torch."""
    check_tensor(input, "values")
    if input.layout is strided:
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    if input.layout is sparse_coo and not input._data.coalesced:
        raise RuntimeError(
            "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
        )
    return call(_values_op, (input,))


@method
def _values(input):
    """Stored values without the coalesced check (duplicates included); detached, as in torch
    (the values of an uncoalesced tensor are a representation, not a function of the tensor).
    Use ``x.coalesce().values()`` for a differentiable result."""
    check_tensor(input, "_values")
    if input.layout is strided:
        raise RuntimeError("_values expected sparse tensor layout but got Strided")
    return wrap(input._data.values, input.dtype, input.device, strided)


def _index_tensor(arr, t):
    return wrap(arr, D.from_numpy_dtype(arr.dtype) if hasattr(arr, "dtype") else D.int64, t.device, strided)


@method
def indices(input):
    """The ``[sparse_dim, nnz]`` int64 indices of a coalesced COO tensor."""
    _check_layout(input, sparse_coo, "indices")
    if not input._data.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return _index_tensor(input._data.indices, input)


@method
def _indices(input):
    _check_layout(input, sparse_coo, "_indices")
    return _index_tensor(input._data.indices, input)


@method
def crow_indices(input):
    _check_layout(input, sparse_csr, "crow_indices")
    return _index_tensor(input._data.crow, input)


@method
def col_indices(input):
    _check_layout(input, sparse_csr, "col_indices")
    return _index_tensor(input._data.col, input)


@method
def _nnz(input):
    if input.layout is strided:
        raise RuntimeError("_nnz expected sparse tensor layout but got Strided")
    return int(input._data.nnz)


@method
def sparse_dim(input):
    if input.layout is sparse_coo:
        return input._data.sparse_dim
    if input.layout is sparse_csr:
        return 2
    return 0


@method
def dense_dim(input):
    if input.layout is sparse_coo:
        return input._data.dense_dim
    return 0


# ---- constructors ----

def _host_index(x, fname, arg, be, device=None):
    """Index data (Tensor, list, array) -> a backend int array. An index tensor on another
    device is an error, unless ``device=`` was given (then everything moves there, as torch)."""
    if isinstance(x, Tensor):
        if x.layout is not strided:
            raise TypeError(f"{fname}(): {arg} must be a dense tensor")
        if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype is D.bool:
            raise TypeError(
                f"{fname}(): {arg} must be an integer tensor (int64 or int32), but got {x.dtype.name}"
            )
        if get_backend(x.device) is not be:  # as torch: no silent mix of host and device arrays
            if device is not None:
                return move(x._data, get_backend(x.device), be)
            where = "cpu" if be.index is None else f"cuda:{be.index}"
            raise RuntimeError(f"{fname}(): device of {arg} ({x.device}) must match device of "
                               f"values ({where}); move them with .to(device) first")
        return x._data
    t = data_tensor(x)
    if not (t.dtype in (D.int64, D.int32, D.int16, D.int8, D.uint8)):
        if t.numel() == 0:
            return be.xp.asarray(t._data, dtype=be.xp.int64)
        raise TypeError(
            f"{fname}(): {arg} must contain integers, but got dtype {t.dtype.name}"
        )
    return be.xp.asarray(t._data)


def _values_tensor(values, dtype, device, fname):
    if isinstance(values, Tensor):
        if values.layout is not strided:
            raise TypeError(f"{fname}(): values must be a dense tensor")
        v = values
    else:
        v = data_tensor(values, device)
    if dtype is not None and v.dtype is not dtype:
        v = v.to(dtype)
    if device is not None and v.device != as_device(device):
        v = v.to(device)
    return v


def _size_arg(size, fname):
    if size is None:
        return None
    if isinstance(size, int):
        size = (size,)
    try:
        return tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}(): size must be a sequence of ints, got {size!r}") from None


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: SizeLike | None = None,
    *,
    dtype: dtype | None = None,
    device: DeviceLike | None = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> Tensor:
    """A COO tensor with ``values`` at ``indices`` (``[sparse_dim, nnz]``); duplicates sum.

    Invariants (index dtype/shape, range, size) are checked by default in O(nnz);
    ``check_invariants=False`` skips them for trusted input.
    """
    fname = "sparse_coo_tensor"
    v = _values_tensor(values, dtype, device, fname)
    be = get_backend(v.device)
    xp = be.xp
    idx = _host_index(indices, fname, "indices", be, device)
    if idx.ndim == 1 and idx.shape[0] == 0:
        idx = idx.reshape(1, 0)
    if idx.ndim != 2:
        raise ValueError(
            f"{fname}(): indices must be a 2-D tensor of shape [sparse_dim, nnz], but got shape "
            f"{list(idx.shape)}"
        )
    idx = idx.astype(xp.int64, copy=False)
    if v.ndim == 0:
        raise ValueError(f"{fname}(): values must have at least one dimension [nnz, ...], got a 0-d tensor")
    shape = _size_arg(size, fname)
    if shape is None:
        sd = idx.shape[0]
        if idx.shape[1] and idx.shape[0]:
            if int(idx.min()) < 0:
                raise ValueError(f"{fname}(): found negative index {int(idx.min())}; indices must be >= 0")
            hi = idx.max(axis=1) + 1
            shape = tuple(int(h) for h in hi) + tuple(v.shape[1:])
        else:
            shape = (0,) * sd + tuple(v.shape[1:])
    if check_invariants is None:
        check_invariants = _invariants_enabled()
    if check_invariants:
        validate_coo(xp, idx, v._data, shape, fname)
    elif len(shape) != idx.shape[0] + v.ndim - 1:  # O(1) shape sanity even when unchecked
        validate_coo(xp, idx[:, :0], v._data[:0], shape, fname)
    coalesced = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    if is_coalesced and check_invariants and idx.shape[1] > 1:
        (lin,), _ = C.joint_keys(be, [idx], shape[: idx.shape[0]])
        if bool((lin[1:] <= lin[:-1]).any()):
            raise ValueError(f"{fname}(): is_coalesced=True but the indices are not sorted and unique")
    pattern = wrap(COO(idx, v._data, shape, coalesced), v.dtype, v.device, sparse_coo)
    r = with_values(pattern, v) if v._rg else pattern
    if requires_grad:
        r.requires_grad_(True)
    return r


def sparse_csr_tensor(
    crow_indices: Any,
    col_indices: Any,
    values: Any,
    size: SizeLike | None = None,
    *,
    dtype: dtype | None = None,
    device: DeviceLike | None = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> Tensor:
    """A CSR tensor (2-D, or batched 3-D) from compressed row pointers, columns and values."""
    fname = "sparse_csr_tensor"
    v = _values_tensor(values, dtype, device, fname)
    be = get_backend(v.device)
    crow = _host_index(crow_indices, fname, "crow_indices", be, device)
    col = _host_index(col_indices, fname, "col_indices", be, device)
    if crow.dtype != col.dtype:
        raise TypeError(
            f"{fname}(): crow_indices and col_indices must have the same dtype, but got "
            f"{crow.dtype} and {col.dtype}"
        )
    shape = _size_arg(size, fname)
    if shape is None:
        if crow.ndim < 1:
            raise ValueError(f"{fname}(): crow_indices must have at least one dimension")
        ncols = int(col.max()) + 1 if col.size else 0
        shape = tuple(crow.shape[:-1]) + (crow.shape[-1] - 1, ncols)
    if check_invariants is None:
        check_invariants = _invariants_enabled()
    if check_invariants:
        validate_csr(be.xp, crow, col, v._data, shape, fname)
    pattern = wrap(CSR(crow, col, v._data, shape), v.dtype, v.device, sparse_csr)
    r = with_values(pattern, v) if v._rg else pattern
    if requires_grad:
        r.requires_grad_(True)
    return r


_INVARIANTS = [True]


def _invariants_enabled():
    return _INVARIANTS[0]


@method
def to_scipy(input):
    """A SciPy sparse array sharing this tensor's buffers (see :func:`sparsetorch.sparse.to_scipy`)."""
    return scipy_array(input)


def scipy_array(t):
    """A SciPy sparse array sharing ``t``'s buffers (2-D, scalar values, CPU)."""
    import scipy.sparse as sp

    if t.layout not in (sparse_coo, sparse_csr):
        raise TypeError("to_scipy(): expected a sparse COO or CSR tensor; use .to_sparse() first")
    if t.device.type != "cpu":
        raise TypeError("to_scipy(): the tensor must be on the CPU; call .cpu() first")
    if t.dtype.name == "bfloat16":
        raise TypeError("to_scipy(): scipy.sparse has no bfloat16; convert the values first, "
                        "e.g. t.float().to_scipy()")
    p = t._data
    if len(p.shape) != 2 or p.values.ndim != 1:
        raise ValueError(
            f"to_scipy(): SciPy holds 2-D matrices with scalar values; got shape {list(p.shape)} "
            f"with values of shape {list(p.values.shape)}"
        )
    if t.layout is sparse_coo:
        m = sp.coo_array((p.values, (p.indices[0], p.indices[1])), shape=p.shape, copy=False)
        m.has_canonical_format = p.coalesced
        return m
    m = sp.csr_array(p.shape, dtype=p.values.dtype)
    m.data, m.indices, m.indptr = p.values, p.col, p.crow  # assign: no index-dtype downcast copy
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m
