"""Slicing views and copying reshapes of the shape family (above :mod:`.shape` and the
indexing family, whose ``put_key``/``index_select`` it uses):
narrow/select/split/chunk/unbind/unfold (views) and flip/roll/repeat/tile/repeat_interleave
(copies). A slicing view's gradient is ``grad`` put into zeros at the slice."""

import numbers

from .. import _dispatch
from .. import _dtype as D
from .._dispatch import call, composite, defop
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from .._variants import method
from . import _sparse_slicing as _sps
from ._util import check_tensor, norm_dim
from .shape import _ints, reshape, unsqueeze

__all__ = [
    "chunk", "flip", "fliplr", "flipud", "narrow", "repeat", "repeat_interleave", "roll", "select",
    "split", "tile", "unbind", "unfold",
]

S = (strided,)

# ---- slicing views: narrow / select / split / chunk / unbind / unfold ----

def _key_view_backward(grad, key, in_shape):
    from .indexing import put_key

    return put_key(grad.new_zeros(in_shape), key, grad, False, True)


def _key_kernel(be, x, key, in_shape):
    return x[key]


_SLICE = dict(kernels={S: _key_kernel, (sparse_coo,): composite(_sps.coo_narrow),
                       (sparse_csr,): composite(_sps.csr_narrow)}, params=("key", "in_shape"),
              grads={"input": _key_view_backward}, view=True)
_SELECT = dict(kernels={S: _key_kernel, (sparse_coo,): composite(_sps.coo_select),
                        (sparse_csr,): composite(_sps.csr_select)}, params=("key", "in_shape"),
               grads={"input": _key_view_backward}, view=True)
_slice_op = defop("slice", **_SLICE)
_select_op = defop("select", **_SELECT)
# the pieces of split / chunk / unbind under torch's node names (torch: one node for all pieces)
_split_op = defop("slice", node_name="SplitBackward0", **_SLICE)
_split_sizes_op = defop("slice", node_name="SplitWithSizesBackward0", **_SLICE)
_unbind_op = defop("select", node_name="UnbindBackward0", **_SELECT)


@method
def narrow(input, dim, start, length):
    """A view of ``length`` elements of dim ``dim`` starting at ``start``."""
    check_tensor(input, "narrow")
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.ndim, "narrow")
    start = int(start.item()) if isinstance(start, Tensor) else start
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return call(_slice_op, (input,), (key, tuple(input.shape)))


@method
def select(input, dim, index):
    """A view of ``input`` at ``index`` along ``dim`` (that dim removed). COO and CSR input give
    a COO result (a copy)."""
    check_tensor(input, "select")
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.ndim, "select")
    index = int(index.item()) if isinstance(index, Tensor) else index
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"select(): argument 'index' must be an int, not {type(index).__name__}")
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    key = (slice(None),) * d + (index % size, Ellipsis)
    return call(_select_op, (input,), (key, tuple(input.shape)))


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces of ``tensor`` along ``dim``: of size ``split_size`` (the last
    may be smaller) or of the sizes in a list."""
    check_tensor(tensor, "split", "tensor")
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = norm_dim(dim, tensor.ndim, "split")
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = _ints((split_size_or_sections,), "split", "split_size")
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                f"at dimension {d}), but got split_sizes={list(sizes)}"
            )
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        n = max(-(-size // step), 1) if step else 1
        sizes = tuple(min(step, size - i * step) for i in range(n))
    op = _split_sizes_op if isinstance(split_size_or_sections, (list, tuple)) else _split_op
    shape = tuple(tensor.shape)
    lead = (slice(None),) * d
    out = []
    start = 0
    for s in sizes:
        out.append(call(op, (tensor,), (lead + (slice(start, start + s),), shape)))
        start += s
    return tuple(out)


@method
def chunk(input, chunks, dim=0):
    """Split ``input`` into ``chunks`` views of (nearly) equal size along ``dim``."""
    check_tensor(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = norm_dim(dim, input.ndim, "chunk")
    size = input.shape[d]
    if size == 0:
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-size // chunks), d)


@method
def unbind(input, dim=0):
    """All slices of ``input`` along ``dim``, as a tuple of views."""
    check_tensor(input, "unbind")
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = norm_dim(dim, input.ndim, "unbind")
    shape = tuple(input.shape)
    lead = (slice(None),) * d
    return tuple(call(_unbind_op, (input,), (lead + (i, Ellipsis), shape)) for i in range(shape[d]))


def _unfold_kernel(be, x, dim, size, step, in_shape):
    n = x.shape[dim]
    nwin = (n - size) // step + 1
    shape = x.shape[:dim] + (nwin,) + x.shape[dim + 1:] + (size,)
    st = x.strides
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    return be.xp.lib.stride_tricks.as_strided(x, shape, strides)


def _unfold_input_backward(grad, dim, size, step, in_shape):
    """Add each window's gradient back at the positions it was read from (windows may overlap)."""
    nwin = grad.shape[dim]
    from .creation import arange

    pos = (arange(nwin, device=grad.device) * step).unsqueeze(1) + arange(size, device=grad.device)
    g = grad.movedim(-1, dim + 1).flatten(dim, dim + 1)
    return grad.new_zeros(in_shape).index_add(dim, pos.reshape(-1), g)


_unfold_op = defop("unfold", {S: _unfold_kernel}, params=("dim", "size", "step", "in_shape"),
                   grads={"input": _unfold_input_backward}, view=True)


@method
def unfold(input, dimension, size, step):
    """A view of all windows of length ``size`` along ``dimension``, ``step`` apart (as a new last dim)."""
    check_tensor(input, "unfold")
    d = norm_dim(dimension, input.ndim, "unfold")
    n = input.shape[d] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return unsqueeze(input, 0)
    return call(_unfold_op, (input,), (d, size, step, tuple(input.shape)))


# ---- copies: flip / roll / repeat / tile / repeat_interleave ----

_flip_op = defop(
    "flip", {S: lambda be, x, dims: be.xp.flip(x, dims).copy()}, params=("dims",),
    grads={"input": lambda grad, dims: grad.flip(dims)}, zero_preserving=True,
)


def flip(input, *args, dims=None):
    """A copy of ``input`` with the order of elements reversed along ``dims``."""
    check_tensor(input, "flip")
    dims = _ints(args if dims is None else (dims,), "flip", "dims")
    norm = {norm_dim(d, input.ndim, "flip") for d in dims}
    if len(norm) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    dims = tuple(sorted(norm)) if input.ndim else ()
    return call(_flip_op, (input,), (dims,))


@method
def fliplr(input):
    """fliplr(input) -> Tensor

    ``input`` (at least 2-D) with its columns reversed (``flip(input, (1,))``, a copy)."""
    check_tensor(input, "fliplr")
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@method
def flipud(input):
    """flipud(input) -> Tensor

    ``input`` (at least 1-D) with its rows reversed (``flip(input, (0,))``, a copy)."""
    check_tensor(input, "flipud")
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


_roll_op = defop(
    "roll", {S: lambda be, x, shifts, dims: be.xp.roll(x, shifts, dims)}, params=("shifts", "dims"),
    grads={"input": lambda grad, shifts, dims: grad.roll(_neg(shifts), dims)}, zero_preserving=True,
)


def _neg(shifts):
    return tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts


@method
def roll(input, shifts, dims=None):
    """Roll ``input`` by ``shifts`` along ``dims`` (elements shifted past the end wrap around);
    without ``dims`` the flattened tensor is rolled and the shape restored."""
    check_tensor(input, "roll")
    shifts = _ints((shifts,), "roll", "shifts") if not isinstance(shifts, numbers.Integral) else (int(shifts),)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return call(_roll_op, (input,), (shifts[0], None))
    dims = _ints((dims,), "roll", "dims") if not isinstance(dims, numbers.Integral) else (int(dims),)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(norm_dim(d, input.ndim, "roll") for d in dims)
    return call(_roll_op, (input,), (shifts, dims))


def _repeat_input_backward(grad, repeats, in_shape):
    """Sum the tiles: view the gradient as (r0, s0, r1, s1, ...) and sum over the r's."""
    lead = len(repeats) - len(in_shape)
    shape = (1,) * lead + tuple(in_shape)
    inter = []
    for r, s in zip(repeats, shape):
        inter += [r, s]
    g = grad.reshape(inter).sum(tuple(range(0, 2 * len(shape), 2)))
    return g.reshape(in_shape)


_repeat_op = defop(
    "repeat", {S: lambda be, x, repeats, in_shape: be.xp.tile(x, repeats)}, params=("repeats", "in_shape"),
    grads={"input": _repeat_input_backward}, zero_preserving=True,
)


def repeat(input, *sizes, repeats=None):
    """``input`` tiled ``sizes[i]`` times along each dim (leading new dims allowed)."""
    check_tensor(input, "repeat")
    sizes = _ints(sizes if repeats is None else (repeats,), "repeat", "repeats")
    if len(sizes) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    out = [a * b for a, b in zip(shape, sizes)]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    return call(_repeat_op, (input,), (sizes, tuple(input.shape)))


def tile(input, dims):
    """Like :func:`repeat`, but ``dims`` shorter than ``input.ndim`` is padded with leading ones."""
    check_tensor(input, "tile")
    dims = _ints((dims,), "tile", "dims")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (an int, or one count per element along ``dim``).

    ``repeat_interleave(repeats)`` with a 1-D count tensor returns the repeated indices.
    """
    from .creation import arange
    from ._index_ops import index_select

    check_tensor(input, "repeat_interleave")
    if repeats is None:  # torch.repeat_interleave(repeats): indices 0..n-1 repeated
        return repeat_interleave(arange(input.numel(), device=input.device), input, 0)
    if dim is None:
        input = reshape(input, (-1,))
        dim = 0
    d = norm_dim(dim, input.ndim, "repeat_interleave")
    n = input.shape[d] if input.ndim else 1
    xp = _dispatch.get_backend(input.device).xp
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype.is_floating_point or repeats.dtype.is_complex or repeats.dtype is D.bool:
            raise RuntimeError(f"repeat_interleave(): repeats must be an integer tensor, got {repeats.dtype.name}")
        counts = repeats._data.reshape(-1)
        if counts.size == 1:
            counts = xp.broadcast_to(counts, (n,))
        elif counts.size != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{counts.size} and input.size({d}) = {n}"
            )
        if counts.size and int(counts.min()) < 0:
            raise RuntimeError("repeats can not be negative")
    else:
        if int(repeats) < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = int(repeats)
    idx = xp.repeat(xp.arange(n), counts)
    index = _dispatch.wrap(idx.astype(D.int64.np), D.int64, input.device, strided)
    if input.ndim == 0:
        input = reshape(input, (1,))
    return index_select(input, d, index)
