"""Indexing: ``x[key]``, ``x[key] = value``, index_put: the lowest dense module of the indexing
family (``x[key]`` of a sparse tensor is ``_sparse_slicing.py``'s, below it).

torch indexes in two steps: integers, slices, ``None`` and ``...`` give a *view*; index tensors
(integer or bool) then give a *copy* (advanced indexing, with NumPy's placement rules). The
key is parsed once into payload-level items (``_parse_key``) and applied by ops whose params
carry the key. Gradients: a view's is ``grad`` put into zeros at the key; an advanced index's
is ``grad`` *accumulated* there (repeated indices add up). The masked ops and nonzero live in
:mod:`._masked`, gather/scatter in :mod:`._scatter`, the index_* ops and take in
:mod:`._index_ops` (each above this one; ``_ops/__init__.py`` is the index).
"""

import math
import numbers

from .. import _dispatch
from .. import _dtype as D
from .. import _torch_warnings
from .._dispatch import call, defop
from .._layout import strided
from .._tensor import Tensor
from .._xpcompat import assign
from ..autograd.grad_mode import GRAD_ENABLED
from .._variants import method
from ._util import check_tensor
from ._sparse_slicing import sparse_getitem

__all__ = [
    "getitem", "index_put", "setitem",
]

S = (strided,)
SS = (strided, strided)
_grad_enabled = GRAD_ENABLED.get
_INT_INDEX = (D.int64, D.int32)
_BAD_TYPE = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
             "valid indices (got {})")
_BAD_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


# ---- parsing a key ----

def _as_index_tensor(k, device):
    """A list index -> Tensor (an empty list is an empty int64 index, as in torch)."""
    from .creation import tensor

    if len(k) == 0 and isinstance(k, (list, tuple)):
        return tensor([], dtype=D.int64, device=device)
    try:
        return tensor(k, device=device)
    except (TypeError, ValueError):
        raise IndexError(_BAD_TYPE.format(type(k).__name__)) from None


def _check_range(arr, d, size):
    """IndexError naming the first out-of-range value of an integer index payload."""
    if arr.size == 0:
        return
    hi = int(arr.max())
    lo = int(arr.min())
    if hi >= size or lo < -size:
        bad = hi if hi >= size else lo
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _parse_key(x, key, zero_d_as_int=True):
    """Parse ``key`` for tensor ``x`` into ``(basic, adv)`` payload keys (torch's two steps).

    ``basic`` (ints, slices, None, ...) is applied first and gives a view; ``adv`` (with index
    arrays, applied to that view) gives a copy. Either may be None.
    """
    if key.__class__ is not tuple:
        key = (key,)
    shape = x._data.shape
    ndim = len(shape)
    if len(key) <= ndim and _plain_basic(key, shape):
        return key + (Ellipsis,), None
    kinds = []  # (kind, value, dims consumed); kinds: i(nt) s(lice) n(one) e(llipsis) a(rray) m(ask)
    used = 0
    ell = False
    n_int = n_adv = 0
    # NumPy bounds-checks index arrays itself before reading or writing (errors are translated
    # in the kernels); other backends (CuPy wraps silently) are checked here
    check_arrays = x.device.type != "cpu"
    for k in key:
        if k is None:
            kinds.append(("n", None))
        elif k is Ellipsis:
            if ell:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ell = True
            kinds.append(("e", None))
        elif isinstance(k, bool):
            kinds.append(("m", _dispatch.get_backend(x.device).xp.asarray(k)))
            n_adv += 1
        elif isinstance(k, numbers.Integral):
            kinds.append(("i", int(k)))
            used += 1
            n_int += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                if k.step == 0:
                    raise ValueError("slice step cannot be zero")
                raise ValueError("step must be greater than zero")
            kinds.append(("s", k))
            used += 1
        else:
            if isinstance(k, (list, tuple)) or (hasattr(k, "__array_interface__") and not isinstance(k, Tensor)):
                k = _as_index_tensor(k, x.device)  # lists and NumPy arrays, as torch converts them
            if not isinstance(k, Tensor):
                raise IndexError(_BAD_TYPE.format(type(k).__name__))
            if k.device is not x.device:  # as torch: CPU index tensors index any device
                if k.device.type != "cpu":
                    raise RuntimeError("indices should be either on cpu or on the same device as "
                                       f"the indexed tensor ({x.device})")
                k = k.to(x.device)
            dt = k.dtype
            if dt is D.bool or dt is D.uint8:
                if dt is D.uint8:
                    _torch_warnings.uint8_index()
                m = k._data if dt is D.bool else k._data.astype(bool)
                kinds.append(("m", m))
                used += k.ndim
                n_adv += 1
            elif dt in _INT_INDEX:
                if k.ndim == 0 and zero_d_as_int:
                    kinds.append(("i", int(k.item())))
                    used += 1
                    n_int += 1
                else:
                    kinds.append(("a", k._data))
                    used += 1
                    n_adv += 1
            else:
                raise IndexError(_BAD_DTYPE)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    # second pass: check every item against the dim it indexes
    d = 0
    basic = []  # step 1 (ints applied, index arrays kept as full slices)
    adv = []  # step 2 on the step-1 view (ints gone)
    full = []  # the whole key in one step (used when there are no ints)
    for kind, v in kinds:
        if kind == "e":
            d += ndim - used
            basic.append(Ellipsis)
            adv.append(Ellipsis)
            full.append(Ellipsis)
        elif kind == "n":
            basic.append(None)
            adv.append(slice(None))
            full.append(None)
        elif kind == "i":
            size = shape[d]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {d} with size {size}")
            basic.append(v)
            d += 1
        elif kind == "s":
            basic.append(v)
            adv.append(slice(None))
            full.append(v)
            d += 1
        elif kind == "a":
            if check_arrays:
                _check_range(v, d, shape[d])
            basic.append(slice(None))
            adv.append(v)
            full.append(v)
            d += 1
        else:  # mask: its shape must match the dims it covers
            m = v.ndim
            if tuple(v.shape) != tuple(shape[d:d + m]):
                j = next(i for i in range(m) if v.shape[i] != shape[d + i])
                raise IndexError(
                    f"The shape of the mask {list(v.shape)} at index {j} does not match the shape "
                    f"of the indexed tensor {list(shape)} at index {d + j}"
                )
            basic.extend([slice(None)] * m)
            nz = v.nonzero() if m else (v,)
            adv.extend(nz)
            full.extend(nz)
            d += m
    if not ell:  # x[0, 1] must stay a (0-d) array view, not a NumPy scalar
        basic.append(Ellipsis)
        adv.append(Ellipsis)
        full.append(Ellipsis)
    if not n_adv:
        return tuple(basic), None
    _check_broadcast(adv)
    if not n_int:
        return None, tuple(full)
    return tuple(basic), tuple(adv)


def _plain_basic(key, shape):
    """Fast path: a key of in-range ints and forward slices only (the common ``x[i, :, j]``)."""
    for d, k in enumerate(key):
        c = k.__class__
        if c is int:
            if not -shape[d] <= k < shape[d]:
                return False
        elif c is not slice or (k.step is not None and (k.step.__class__ is not int or k.step <= 0)):
            return False
    return True


def _check_broadcast(items):
    shapes = [tuple(a.shape) for a in items if not isinstance(a, slice) and a is not Ellipsis and a.ndim]
    if len(shapes) < 2:
        return
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        for k, v in enumerate(s):
            j = n - len(s) + k
            if out[j] == 1:
                out[j] = v
            elif v != 1 and v != out[j]:
                raise IndexError(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes "
                    + ", ".join(str(list(t)) for t in shapes)
                )


# ---- ops on payload keys ----

def _index_backward(grad, key, in_shape):
    return put_key(grad.new_zeros(in_shape), key, grad, True, False)


def _index_view_backward(grad, key, in_shape):
    return put_key(grad.new_zeros(in_shape), key, grad, False, True)


def index_error(e):
    """NumPy's out-of-bounds IndexError in torch's words ("dimension", not "axis")."""
    return IndexError(str(e).replace(" axis ", " dimension "))


def _key_kernel(be, x, key, in_shape):
    try:
        return x[key]
    except IndexError as e:
        raise index_error(e) from None


# basic key: a view; advanced key: a copy
_index_view_op = defop("slice", {S: _key_kernel}, params=("key", "in_shape"),
                       grads={"input": _index_view_backward}, view=True)
_index_op = defop("index", {S: _key_kernel}, params=("key", "in_shape"),
                  grads={"input": _index_backward}, zero_preserving=True)
# the same view under torch's node names: its basic indexing is a chain of select / slice /
# unsqueeze steps (full slices skipped) and the result's node is the last step's
_VIEW = dict(kernels={S: _key_kernel}, params=("key", "in_shape"),
             grads={"input": _index_view_backward}, view=True)
_index_select_view_op = defop("slice", node_name="SelectBackward0", **_VIEW)
_index_unsqueeze_view_op = defop("slice", node_name="UnsqueezeBackward0", **_VIEW)
_index_alias_view_op = defop("slice", node_name="AliasBackward0", **_VIEW)


def _basic_view_op(key, shape):
    """The declaration whose node torch records for the basic (view-only) key ``key``."""
    if key.__class__ is not tuple:  # one item: a slice is always sliced, even a full one
        return (_index_view_op if key.__class__ is slice else _index_unsqueeze_view_op
                if key is None else _index_alias_view_op if key is Ellipsis
                else _index_select_view_op)
    ndim = len(shape)
    dims = sum(1 for k in key if k is not None and k is not Ellipsis)
    op = _index_alias_view_op
    d = 0
    for k in key:
        if k is None:
            op = _index_unsqueeze_view_op
        elif k is Ellipsis:
            d += ndim - dims
        elif k.__class__ is slice:
            if k.indices(shape[d]) != (0, shape[d], 1):
                op = _index_view_op
            d += 1
        else:
            op = _index_select_view_op
            d += 1
    return op


def _put_kernel(be, x, v, key, accumulate, basic):
    out = x.copy()
    try:
        if not accumulate:
            assign(be, out, key, v)  # the last of repeated indices wins, on every device
        elif basic:
            out[key] += v
        else:
            be.xp.add.at(out, key, v)  # repeated indices accumulate
    except IndexError as e:
        raise index_error(e) from None
    return out


def _put_input_backward(grad, key, accumulate, basic):
    return grad if accumulate else put_key(grad, key, 0, False, basic)


_put_op = defop(
    "index_put", {SS: _put_kernel}, inputs=("input", "values"), params=("key", "accumulate", "basic"),
    grads={"input": _put_input_backward,
           "values": lambda grad, key, basic: take_key(grad, key, basic)},
)


def take_key(x, key, basic):
    """``x[key]`` for a parsed payload key (a view when ``basic``)."""
    return call(_index_view_op if basic else _index_op, (x,), (key, tuple(x.shape)))


def put_key(x, key, values, accumulate, basic):
    """A copy of ``x`` with ``values`` written (or added) at the parsed payload ``key``."""
    return call(_put_op, (x, values), (key, accumulate, basic))


# ---- x[key] and x[key] = value ----

def getitem(input, key):
    """``input[key]``: a view for basic keys, a copy when index tensors are involved."""
    if key.__class__ is int and input.layout is strided and input._data.ndim:
        size = input._data.shape[0]
        if -size <= key < size:
            return call(_index_select_view_op, (input,), ((key, Ellipsis), input._data.shape))
    if input.layout is not strided:
        return sparse_getitem(input, key)
    basic, adv = _parse_key(input, key)
    t = input
    if basic is not None:
        op = _index_view_op if adv is not None else _basic_view_op(key, t._data.shape)
        t = call(op, (t,), (basic, t._data.shape))
    if adv is not None:
        t = call(_index_op, (t,), (adv, t._data.shape))
    return t


_READONLY = ("unsupported operation: more than one element of the written-to tensor refers to a "
             "single memory location. Please clone() the tensor before performing the operation.")


def _value_for(input, value, fname):
    """The value to write: a Tensor cast to ``input``'s dtype, or a checked Python scalar."""
    if isinstance(value, Tensor):
        return value if value.dtype is input.dtype else value.to(input.dtype)
    if not isinstance(value, numbers.Number):
        raise TypeError(f"can't assign a {type(value).__name__} to a {input.dtype.name} tensor")
    dt = input.dtype
    if isinstance(value, complex) and not dt.is_complex:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    if dt is D.bool:
        return bool(value)
    if not (dt.is_floating_point or dt.is_complex):
        if isinstance(value, float) and not math.isfinite(value):
            raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
        value = int(value)
        info = D.iinfo(dt)
        if not info.min <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    return value


def _fit_value(value, region_shape):
    """Drop leading size-1 dims of ``value`` beyond the region's rank; check broadcasting."""
    vs = tuple(value.shape)
    rs = tuple(region_shape)
    extra = len(vs) - len(rs)
    if extra > 0 and all(s == 1 for s in vs[:extra]):
        value = value.reshape(vs[extra:])
        vs = vs[extra:]
    ok = len(vs) <= len(rs) and all(a == 1 or a == b for a, b in zip(vs[::-1], rs[::-1]))
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
            f"indexing result of shape {list(rs)}"
        )
    return value


def setitem(input, key, value):
    """``input[key] = value`` (value broadcast and cast to ``input``'s dtype), differentiably."""
    if input.layout is not strided:
        raise NotImplementedError(
            f"setitem: not implemented for layout {input.layout.name}; convert with .to_dense() first"
        )
    value = _value_for(input, value, "setitem")
    basic, adv = _parse_key(input, key)
    target = input
    if adv is not None:
        if basic is not None:
            target = call(_index_view_op, (input,), (basic, input._data.shape))
        key, is_basic = adv, False
    else:
        key, is_basic = basic, True
    data = target._data
    if not getattr(data.flags, "writeable", True):
        raise RuntimeError(_READONLY)
    vt = isinstance(value, Tensor)
    try:
        if vt:
            value = _fit_value(value, data[key].shape)
        if _grad_enabled() and (target._rg or (vt and value._rg)):
            _dispatch.inplace(_setitem_functional, target, (key, is_basic, value), None, "setitem")
            return
        if is_basic or target.device.type == "cpu":
            data[key] = value._data if vt else value
        else:
            assign(_dispatch.get_backend(target.device), data, key, value._data if vt else value)
    except IndexError as e:
        raise index_error(e) from None
    _dispatch.bump_version(target)


def _setitem_functional(input, key, basic, value):
    return put_key(input, key, value, False, basic)


@method(inplace=True)
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at the index tensors ``indices`` (added when
    ``accumulate``, so repeated indices sum)."""
    check_tensor(input, "index_put")
    check_tensor(values, "index_put", "values")
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{input.dtype.name} for the destination and {values.dtype.name} for the source."
        )
    basic, adv = _parse_key(input, tuple(indices), zero_d_as_int=False)
    key = adv if adv is not None else basic
    try:
        values = _fit_value(values, input._data[key].shape)
    except IndexError as e:
        raise index_error(e) from None
    return put_key(input, key, values, bool(accumulate), adv is None)
