"""Shape and view ops: view/reshape, transpose/permute, squeeze/unsqueeze, expand, flatten,
movedim, and the strided-layout queries (stride, is_contiguous): the lowest module of the shape
family.

A *view* op (declared ``view=True``) returns a tensor that shares memory and the version counter
with its input: its strided kernel returns a ``be.xp`` view. Gradients take shapes from params
(``in_shape``), never from a saved input, so modifying the input in place later does not
invalidate the graph (torch saves sizes only, too). Slicing views and copying reshapes (narrow,
split, unfold, flip, repeat, ...) live in :mod:`._slicing`, joining and broadcasting ops (cat,
stack, meshgrid, broadcast_tensors, atleast_*d) in :mod:`._join`; both import from this one
(``_ops/__init__.py`` is the index).
"""

import numbers

from .. import _dispatch
from .. import _dtype as D
from .._dispatch import call, composite, defop, link_view, record_if_grad, wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._tensor import Tensor
from .._variants import method
from ..autograd import profiler as _profiler
from ..autograd.grad_mode import GRAD_ENABLED
from . import sparse_shape as _sps
from ._util import check_tensor, norm_dim, norm_dims

__all__ = [
    "broadcast_to", "data_ptr", "expand", "expand_as", "flatten", "is_contiguous", "moveaxis",
    "movedim", "permute", "ravel", "reshape", "reshape_as", "squeeze", "squeeze_", "stride",
    "swapaxes", "swapdims", "t", "t_", "transpose", "transpose_", "unflatten", "unsqueeze",
    "unsqueeze_", "view", "view_as",
]

S = (strided,)
O, R = (sparse_coo,), (sparse_csr,)
_grad_enabled = GRAD_ENABLED.get


# ---- argument helpers ----

def _ints(args, fname, arg="size"):
    """Sizes given as ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(Size)`` -> tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for s in args:  # fast path: plain Python ints
        if s.__class__ is not int:
            break
    else:
        return tuple(args)
    out = []
    for i, s in enumerate(args):
        if isinstance(s, Tensor) and s.ndim == 0 and not (s.dtype.is_floating_point or s.dtype.is_complex):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(
                f"{fname}(): argument '{arg}' must be a tuple of ints, but found element of type "
                f"{type(s).__name__} at pos {i}"
            )
        out.append(int(s))
    return tuple(out)


def _infer_shape(shape, numel):
    """Resolve one ``-1`` in ``shape`` from ``numel``; torch's errors for impossible shapes."""
    infer = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if infer >= 0:
        if known == 0:
            if numel == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous"
                )
        elif numel % known == 0:
            return shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known == numel:
        return shape
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _shares_memory(r, x):
    """True when ``r`` (from ``x.reshape``) is a view of ``x``'s memory, not a fresh copy."""
    b = r.base
    return b is x or (b is not None and b is x.base)


def _alias(input):
    """A view of ``input`` with the same shape (torch's alias)."""
    return call(_permute_op, (input,), (tuple(range(input.ndim)),))


def _lean_view(op, input, data, params):
    """The result of view op ``op`` over the strided ``input`` whose kernel gave ``data``: what
    ``call`` does for it (link the view, record the node), without the dispatch (issue 14)."""
    t = wrap(data, input.dtype, input.device, strided)
    link_view(t, input, op, params, call)
    if input._rg:
        record_if_grad(op, t, (input,), params)
    return t


# ---- view / reshape ----

_VIEW_MSG = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def _view_kernel(be, x, shape, in_shape):
    r = x.reshape(shape)
    if not _shares_memory(r, x):
        raise RuntimeError(_VIEW_MSG)
    return r


_SPARSE_RESHAPE = {O: composite(_sps.coo_reshape), R: composite(_sps.csr_reshape)}
_view_op = defop("view", {S: _view_kernel, **_SPARSE_RESHAPE}, params=("shape", "in_shape"),
                 grads={"input": lambda grad, in_shape: grad.reshape(in_shape)}, view=True)
# reshape that must copy: a new tensor (torch's _unsafe_view), not a view
_reshape_copy_op = defop("_unsafe_view", {S: lambda be, x, shape, in_shape: be.xp.reshape(x, shape),
                                          **_SPARSE_RESHAPE},
                         params=("shape", "in_shape"),
                         grads={"input": lambda grad, in_shape: grad.reshape(in_shape)})


def _view_dtype_kernel(be, x, np_dtype):
    if x.ndim == 0 and x.itemsize != np_dtype.itemsize:
        raise RuntimeError("view(dtype): a 0-dim tensor can only be viewed as a dtype of the same element size")
    if x.itemsize != np_dtype.itemsize and x.ndim and (x.shape[-1] * x.itemsize) % np_dtype.itemsize:
        raise RuntimeError(
            f"self.size(-1) must be divisible by {np_dtype.itemsize // x.itemsize or 1} to view "
            f"{x.dtype} as {np_dtype} (different element sizes), but got {x.shape[-1]}"
        )
    try:
        return x.view(np_dtype)
    except ValueError as e:
        raise RuntimeError(f"view(dtype): {e}; call .contiguous() first") from None


_view_dtype_op = defop("view_dtype", {S: _view_dtype_kernel}, params=("np_dtype",), view=True)


def view(input, *shape, size=None):
    """A view of ``input`` with shape ``shape`` (one entry may be -1), sharing its memory.

    ``view(dtype)`` reinterprets the bytes as another dtype. Raises RuntimeError when the
    strides make a view impossible; use :func:`reshape` then.

    >>> import sparsetorch as torch
    >>> torch.arange(6).view(2, -1).shape
    sparsetorch.Size([2, 3])
    """
    check_tensor(input, "view")
    if size is not None:
        shape = (size,)
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        dt = shape[0]
        if input.layout is not strided:
            raise NotImplementedError(f"view(dtype): not implemented for layout {input.layout.name}")
        return call(_view_dtype_op, (input,), (dt.np,), dt)
    in_shape = input._data.shape
    shape = _infer_shape(_ints(shape, "view"), input.numel())
    return call(_view_op, (input,), (shape, in_shape))


@method
def view_as(input, other):
    """``input.view(other.shape)``."""
    check_tensor(other, "view_as", "other")
    return view(input, tuple(other.shape))


def reshape(input, *shape, **kwargs):
    """``input`` with shape ``shape``: a view when the strides allow it, else a copy."""
    if input.__class__ is Tensor and not kwargs and input.layout is strided \
            and _profiler.ACTIVE is None:
        x = input._data
        if x.flags.c_contiguous:  # a view (issue 14: no dispatch)
            shape = _ints(shape, "reshape", "shape")
            try:  # NumPy resolves one -1; any other negative size or mismatch: the checked path
                r = x.reshape(shape) if -1 in shape or min(shape, default=0) >= 0 else None
            except ValueError:
                r = None
            if r is not None:
                return _lean_view(_view_op, input, r, (r.shape, x.shape))
    check_tensor(input, "reshape")
    if "shape" in kwargs:
        shape = (kwargs.pop("shape"),)
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    shape = _infer_shape(_ints(shape, "reshape", "shape"), input.numel())
    params = (shape, input._data.shape)
    if input.layout is strided:
        x = input._data
        if x.flags.c_contiguous or _shares_memory(x.reshape(shape), x):
            return call(_view_op, (input,), params)
    return call(_reshape_copy_op, (input,), params)


@method
def reshape_as(input, other):
    check_tensor(other, "reshape_as", "other")
    return reshape(input, tuple(other.shape))


@method
def flatten(input, start_dim=0, end_dim=-1):
    """Flatten dims ``start_dim..end_dim`` into one (a view when possible)."""
    check_tensor(input, "flatten")
    if input.ndim == 0:
        return reshape(input, (1,))
    n = input.ndim
    s = norm_dim(start_dim, n, "flatten")
    e = norm_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (-1,) + shape[e + 1:])


@method
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1)."""
    check_tensor(input, "unflatten")
    d = norm_dim(dim, input.ndim, "unflatten")
    sizes = _ints((sizes,), "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[d]
    try:
        inner = _infer_shape(sizes, size)
    except RuntimeError:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({size}) in the input tensor"
        ) from None
    shape = tuple(input.shape)
    return reshape(input, shape[:d] + inner + shape[d + 1:])


@method
def ravel(input):
    """The elements of ``input`` as a 1-D tensor (a view when contiguous)."""
    check_tensor(input, "ravel")
    return reshape(input, (-1,))


# ---- transpose / permute ----

_TRANSPOSE = dict(
    kernels={S: lambda be, x, dim0, dim1: be.xp.swapaxes(x, dim0, dim1),
             O: composite(_sps.coo_transpose), R: composite(_sps.csr_transpose)},
    params=("dim0", "dim1"),
    grads={"input": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)}, view=True,
)
_transpose_op = defop("transpose", **_TRANSPOSE)
_t_op = defop(  # x.t(): torch's TBackward0 (0-D and 1-D: the input's view)
    "t", {S: lambda be, x, dim0, dim1: be.xp.swapaxes(x, dim0, dim1) if x.ndim == 2 else x.view(),
          O: _TRANSPOSE["kernels"][O], R: _TRANSPOSE["kernels"][R]},
    params=("dim0", "dim1"), grads={"input": lambda grad: grad.t()}, view=True,
)


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


_permute_op = defop(
    "permute", {S: lambda be, x, dims: be.xp.transpose(x, dims),
                O: composite(_sps.coo_permute), R: composite(_sps.csr_permute)}, params=("dims",),
    grads={"input": lambda grad, dims: grad.permute(_inverse_perm(dims))}, view=True,
)


@method
def transpose(input, dim0, dim1):
    """A view of ``input`` with dims ``dim0`` and ``dim1`` swapped (COO and CSR: same layout)."""
    if input.__class__ is Tensor and dim0.__class__ is int and dim1.__class__ is int \
            and input.layout is strided and _profiler.ACTIVE is None:
        x = input._data
        n = x.ndim
        if -n <= dim0 < n and -n <= dim1 < n:  # (issue 14: no dispatch)
            d0 = dim0 % n
            d1 = dim1 % n
            return _lean_view(_transpose_op, input, x.swapaxes(d0, d1), (d0, d1))
    check_tensor(input, "transpose")
    n = input.ndim
    d0 = norm_dim(dim0, n, "transpose")
    d1 = norm_dim(dim1, n, "transpose")
    if n == 0:
        return _alias(input)
    return call(_transpose_op, (input,), (d0, d1))


swapaxes = transpose
swapdims = method(transpose, "swapdims")


@method
def t(input):
    """Transpose of a tensor with at most 2 dims (0-D and 1-D are returned as views). COO and CSR
    input give a result of the same layout (torch gives CSC for CSR)."""
    if input.__class__ is Tensor and input.layout is strided and _profiler.ACTIVE is None \
            and input._data.ndim == 2:  # (issue 14: no dispatch)
        return _lean_view(_t_op, input, input._data.T, (0, 1))
    check_tensor(input, "t")
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    if input.ndim < 2 and input.layout is not strided:
        return _alias(input)
    return call(_t_op, (input,), (0, 1))


def permute(input, *args, dims=None):
    """A view of ``input`` with its dims reordered: ``permute(x, (1, 0))`` or ``x.permute(1, 0)``.
    COO and CSR input give a result of the same layout."""
    check_tensor(input, "permute")
    dims = _ints(args if dims is None else (dims,), "permute", "dims")
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(
            "permute(): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(norm_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return call(_permute_op, (input,), (dims,))


@method
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or sequences), keeping the others' order."""
    check_tensor(input, "movedim")
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
            f"the same number of dims as destination ({list(dst)} dims)"
        )
    n = input.ndim
    src = tuple(norm_dim(d, n, "movedim") for d in src)
    dst = tuple(norm_dim(d, n, "movedim") for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    rest = [d for d in range(n) if d not in src]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    it = iter(rest)
    order = tuple(next(it) if o is None else o for o in order)
    return call(_permute_op, (input,), (order,))


moveaxis = method(movedim, "moveaxis")


# ---- squeeze / unsqueeze / expand ----

_SQUEEZE = dict(
    kernels={S: lambda be, x, dims, in_shape: be.xp.squeeze(x, axis=dims),
             O: composite(_sps.coo_squeeze), R: composite(_sps.csr_squeeze)}, params=("dims", "in_shape"),
    grads={"input": lambda grad, in_shape: grad.reshape(in_shape)}, view=True,
)
# one op, three overloads as torch's nodes name them: squeeze(), squeeze(int), squeeze(dims)
_squeeze_op = defop("squeeze", **_SQUEEZE)
_squeeze_dim_op = defop("squeeze", node_name="SqueezeBackward1", **_SQUEEZE)
_squeeze_dims_op = defop("squeeze", node_name="SqueezeBackward2", **_SQUEEZE)
_unsqueeze_op = defop(
    "unsqueeze", {S: lambda be, x, dim: x.reshape(x.shape[:dim] + (1,) + x.shape[dim:]),
                  O: composite(_sps.coo_unsqueeze), R: composite(_sps.csr_unsqueeze)}, params=("dim",),
    grads={"input": lambda grad, dim: grad.squeeze(dim)}, view=True,
)


@method
def squeeze(input, dim=None):
    """A view of ``input`` without its size-1 dims (all of them, or those in ``dim``). COO and
    CSR input give a result of the same layout."""
    if input.__class__ is Tensor and dim.__class__ is int and input.layout is strided \
            and _profiler.ACTIVE is None:
        x = input._data
        shape = x.shape
        n = len(shape)
        if -n <= dim < n:  # (issue 14: no dispatch)
            d = dim % n
            dims = (d,) if shape[d] == 1 else ()
            return _lean_view(_squeeze_dim_op, input, x.squeeze(d) if dims else x.view(),
                              (dims, shape))
    check_tensor(input, "squeeze")
    shape = input.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = tuple(d for d in norm_dims(dim, input.ndim, "squeeze") if d < len(shape) and shape[d] == 1)
    op = _squeeze_op if dim is None else _squeeze_dims_op if isinstance(dim, (tuple, list)) else _squeeze_dim_op
    return call(op, (input,), (dims, tuple(shape)))


@method
def unsqueeze(input, dim):
    """A view of ``input`` with a size-1 dim inserted at ``dim`` (COO and CSR: same layout)."""
    if input.__class__ is Tensor and dim.__class__ is int and input.layout is strided \
            and _profiler.ACTIVE is None:
        x = input._data
        shape = x.shape
        n = len(shape) + 1
        if -n <= dim < n:  # (issue 14: no dispatch)
            d = dim % n
            return _lean_view(_unsqueeze_op, input, x.reshape(shape[:d] + (1,) + shape[d:]), (d,))
    check_tensor(input, "unsqueeze")
    n = len(input._data.shape) + 1
    if dim.__class__ is not int or not -n <= dim < n:
        dim = norm_dim(dim, n, "unsqueeze")
    return call(_unsqueeze_op, (input,), (dim % n,))


def _expand_input_backward(grad, in_shape):
    """Sum the gradient over the dims that expand broadcast (new leading dims and size-1 dims)."""
    lead = grad.ndim - len(in_shape)
    gshape = grad.shape
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(in_shape) if s == 1 and gshape[lead + i] != 1
    )
    if not dims:
        return grad
    g = grad.sum(dims, keepdim=True)
    return g.reshape(in_shape) if lead else g


_expand_op = defop(
    "expand", {S: lambda be, x, shape, in_shape: be.xp.broadcast_to(x, shape)}, params=("shape", "in_shape"),
    grads={"input": _expand_input_backward}, view=True,
)


def _expand_shape(input, sizes):
    shape = tuple(input.shape)
    n, m = len(sizes), len(shape)
    if n < m:
        raise RuntimeError(
            f"expand({input.dtype.name} tensor of shape {list(shape)}, size={list(sizes)}): the "
            f"number of sizes provided ({n}) must be greater or equal to the number of dimensions "
            f"in the tensor ({m})"
        )
    out = list(sizes)
    for i in range(n):
        j = i - (n - m)
        s = sizes[i]
        if j < 0:
            if s == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
        elif s == -1:
            out[i] = shape[j]
        elif shape[j] != s and shape[j] != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({shape[j]}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shape)}"
            )
        elif s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    return tuple(out)


def expand(input, *sizes, size=None):
    """A broadcast view of ``input`` with shape ``sizes`` (-1 keeps a dim's size).

    The view is read-only: writing into it raises (its elements share memory).
    """
    check_tensor(input, "expand")
    shape = _expand_shape(input, _ints(sizes if size is None else (size,), "expand"))
    return call(_expand_op, (input,), (shape, tuple(input.shape)))


@method
def expand_as(input, other):
    check_tensor(other, "expand_as", "other")
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    """``input.expand(size)``."""
    return expand(input, size)


# ---- in-place metadata ops (change self's shape) ----

def _inplace_view(self, r, name):
    """Make ``self`` the view ``r`` of itself: new payload, bumped version, history of ``r``."""
    self._data = r._data
    _dispatch.bump_version(self)
    if r.grad_fn is not None:
        self.grad_fn = r.grad_fn
    ex = self._extra
    if ex and ex.get("base") is not None:  # self is itself a view: keep rebasing consistent
        ex["view_fn"] = r._extra["view_fn"]
    return self


def _check_meta_inplace(self, name):
    if _grad_enabled() and self._rg:
        _dispatch.check_inplace_allowed(self, name)


@method
def t_(input):
    _check_meta_inplace(input, "t_")
    return _inplace_view(input, t(input), "t_")


@method
def transpose_(input, dim0, dim1):
    _check_meta_inplace(input, "transpose_")
    return _inplace_view(input, transpose(input, dim0, dim1), "transpose_")


@method
def squeeze_(input, dim=None):
    _check_meta_inplace(input, "squeeze_")
    return _inplace_view(input, squeeze(input, dim), "squeeze_")


@method
def unsqueeze_(input, dim):
    _check_meta_inplace(input, "unsqueeze_")
    return _inplace_view(input, unsqueeze(input, dim), "unsqueeze_")


# ---- strided-layout queries ----

def _dense_only(input, fname):
    check_tensor(input, fname)
    if input.layout is not strided:
        raise RuntimeError(f"{fname}(): {input.layout.name} tensors do not have strides")


def stride(input, dim=None):
    """Strides of ``input`` in elements (torch's convention), or the stride of dim ``dim``."""
    _dense_only(input, "stride")
    x = input._data
    isz = x.itemsize
    st = [s // isz for s in x.strides]
    shape = x.shape
    for d in range(len(st) - 1, -1, -1):
        # NumPy gives a new axis (x[:, None]) stride 0; torch gives the stride unsqueeze would.
        # A size-1 dim's stride never addresses memory, so only the reported value changes.
        if shape[d] == 1 and st[d] == 0:
            st[d] = st[d + 1] * shape[d + 1] if d + 1 < len(st) else 1
    st = tuple(st)
    if dim is None:
        return st
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return st[norm_dim(dim, input.ndim, "stride")]


def is_contiguous(input):
    """True if ``input``'s elements are laid out in row-major order without gaps."""
    check_tensor(input, "is_contiguous")
    if input.layout is not strided:
        return False
    return bool(input._data.flags.c_contiguous)


@method
def data_ptr(input):
    """Address of the first element (0 for an empty tensor)."""
    _dense_only(input, "data_ptr")
    x = input._data
    if x.size == 0:
        return 0
    iface = getattr(x, "__cuda_array_interface__", None) or x.__array_interface__
    return iface["data"][0]
