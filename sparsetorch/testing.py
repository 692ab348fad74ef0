"""Testing helpers: ``assert_close`` and ``make_tensor`` (torch.testing).

Values are compared on the host with NumPy (this is test support code, not a kernel), in the
dtype of the inputs, so float32 differences are reported as float32 numbers, as torch does.
"""

import math as _math
import numbers as _numbers
from collections import abc as _abc

import numpy as _np

from . import _dtype as _D
from ._layout import strided as _strided
from ._tensor import Tensor as _Tensor

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) per dtype name: torch.testing's defaults. Anything else compares exactly.
_DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class _Mismatch(Exception):
    """Internal: carries an error type and message up through nested containers."""

    def __init__(self, error_type, message):
        super().__init__(message)
        self.error_type = error_type
        self.message = message


# ---- assert_close ----

def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                 msg=None):
    """Asserts that ``actual`` and ``expected`` are close.

    Tensors (and NumPy arrays) are close elementwise if
    ``|actual - expected| <= atol + rtol * |expected|`` (NaNs equal only with ``equal_nan``), and
    their shape, device, dtype and layout match (each check can be disabled). Python numbers,
    and sequences or mappings of all these (compared item by item), are accepted too. Default
    tolerances depend on the dtype: float16 (1e-3, 1e-5), float32 (1.3e-6, 1e-5), float64
    (1e-7, 1e-7), complex like their real counterpart, integers and bool exact; with mixed
    dtypes the larger of each applies.

    ``msg`` replaces the generated message (a callable gets the generated one and returns the
    new one).

    >>> assert_close(sparsetorch.tensor([1.0, 2.0]), sparsetorch.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    opts = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
            "equal_nan": equal_nan, "check_device": check_device, "check_dtype": check_dtype,
            "check_layout": check_layout, "check_stride": check_stride}
    try:
        _compare(actual, expected, (), opts)
    except _Mismatch as m:
        if m.error_type is not AssertionError:
            raise m.error_type(m.message) from None
        message = m.message
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise AssertionError(message) from None


def _is_sequence(x):
    return isinstance(x, _abc.Sequence) and not isinstance(x, (str, bytes))


def _compare(actual, expected, path, opts):
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for k, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (k,), opts)
        return
    Mapping = _abc.Mapping
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        akeys, ekeys = set(actual.keys()), set(expected.keys())
        if akeys != ekeys:
            missing = sorted(ekeys - akeys, key=repr)
            extra = sorted(akeys - ekeys, key=repr)
            _fail(
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {missing}\n"
                f"Additional keys in the actual mapping: {extra}",
                path,
            )
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), opts)
        return
    _compare_leaf(actual, expected, path, opts)


def _fail(message, path, error_type=AssertionError):
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in path)
    raise _Mismatch(error_type, message)


def _unsupported(actual, expected, path):
    _fail(
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.",
        path,
        TypeError,
    )


def _compare_leaf(actual, expected, path, opts):
    if actual is None or expected is None:
        if actual is not expected:
            _fail(f"None mismatch: {actual} is not {expected}", path)
        return
    if isinstance(actual, (bool, _np.bool_)) and isinstance(expected, (bool, _np.bool_)):
        if bool(actual) != bool(expected):
            _fail(f"Booleans mismatch: {actual} is not {expected}", path)
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, path, opts)
        return
    both_tensors = isinstance(actual, _Tensor) and isinstance(expected, _Tensor)
    both_arrays = isinstance(actual, _np.ndarray) and isinstance(expected, _np.ndarray)
    if not (both_tensors or both_arrays):
        _unsupported(actual, expected, path)
    if not opts["allow_subclasses"] and type(actual) is not type(expected):
        _unsupported(actual, expected, path)
    if both_tensors:
        _compare_tensors(actual, expected, path, opts)
    else:
        _compare_arrays(actual, expected, path, opts)


# ---- numbers ----

def _is_number(x):
    return isinstance(x, _numbers.Number) and not isinstance(x, (bool, _np.bool_))


def _number_kind(x):
    if isinstance(x, _numbers.Integral):
        return int
    if isinstance(x, _numbers.Real):
        return float
    return complex


_NUMBER_DTYPE = {int: "int64", float: "float64", complex: "complex128"}


def _compare_numbers(actual, expected, path, opts):
    ka, ke = _number_kind(actual), _number_kind(expected)
    if opts["check_dtype"] and ka is not ke:
        _fail(f"The (d)types do not match: {ka} != {ke}.", path)
    rtol, atol = _tolerances(opts, _NUMBER_DTYPE[ka], _NUMBER_DTYPE[ke])
    a, e = complex(actual) if ka is complex or ke is complex else actual, expected
    if _number_close(a, e, rtol, atol, opts["equal_nan"]):
        return
    abs_diff = abs(a - e)
    rel_diff = _safe_div(abs_diff, abs(e))
    exact = rtol == 0 and atol == 0
    _fail(
        f"Scalars are not {'equal' if exact else 'close'}!\n\n"
        f"Expected {expected} but got {actual}.\n"
        + _diff_line("Absolute", abs_diff, None, atol) + "\n"
        + _diff_line("Relative", rel_diff, None, rtol),
        path,
    )


def _number_close(a, e, rtol, atol, equal_nan):
    if a == e:
        return True
    if _isnan(a) or _isnan(e):
        return equal_nan and _isnan(a) and _isnan(e)
    if _isinf(a) or _isinf(e):
        return False
    return abs(a - e) <= atol + rtol * abs(e)


def _isnan(x):
    return isinstance(x, complex) and (_math.isnan(x.real) or _math.isnan(x.imag)) or (
        not isinstance(x, complex) and isinstance(x, float) and _math.isnan(x))


def _isinf(x):
    if isinstance(x, complex):
        return _math.isinf(x.real) or _math.isinf(x.imag)
    return isinstance(x, float) and _math.isinf(x)


def _safe_div(a, b):
    if b == 0:
        return _math.nan if a == 0 or (isinstance(a, float) and _math.isnan(a)) else _math.inf
    return a / b


def _diff_line(kind, diff, index, tol):
    line = f"Greatest {kind.lower()} difference: {diff} at index {index}" if index is not None \
        else f"{kind} difference: {diff}"
    if tol > 0:
        line += f" (up to {tol} allowed)"
    return line


def _tolerances(opts, *dtype_names):
    if opts["rtol"] is not None:
        return opts["rtol"], opts["atol"]
    rtols, atols = zip(*(_DEFAULT_TOLERANCES.get(n, (0.0, 0.0)) for n in dtype_names))
    return max(rtols), max(atols)


# ---- tensors and arrays ----

def _compare_tensors(actual, expected, path, opts):
    if actual.shape != expected.shape:
        _attr_fail("shape", actual.shape, expected.shape, path)
    if opts["check_device"] and actual.device != expected.device:
        _attr_fail("device", actual.device, expected.device, path)
    if opts["check_dtype"] and actual.dtype is not expected.dtype:
        _attr_fail("dtype", actual.dtype, expected.dtype, path)
    if opts["check_layout"] and actual.layout is not expected.layout:
        _attr_fail("layout", actual.layout, expected.layout, path)
    if (opts["check_stride"] and actual.layout is _strided and expected.layout is _strided
            and actual.stride() != expected.stride()):
        _attr_fail("stride()", actual.stride(), expected.stride(), path)
    rtol, atol = _tolerances(opts, actual.dtype.name, expected.dtype.name)
    if actual.layout is not _strided or expected.layout is not _strided:
        _compare_sparse(actual, expected, rtol=rtol, atol=atol, equal_nan=opts["equal_nan"],
                        path=path)
        return
    dt = _D.promote_types(actual.dtype, expected.dtype)
    a = _to_host(actual).astype(dt.np, copy=False)
    e = _to_host(expected).astype(dt.np, copy=False)
    _compare_values(a, e, rtol, atol, opts["equal_nan"], path)


def _compare_arrays(actual, expected, path, opts):
    if actual.shape != expected.shape:
        _attr_fail("shape", actual.shape, expected.shape, path)
    if opts["check_dtype"] and actual.dtype != expected.dtype:
        _attr_fail("dtype", actual.dtype, expected.dtype, path)
    rtol, atol = _tolerances(opts, actual.dtype.name, expected.dtype.name)
    dt = _np.promote_types(actual.dtype, expected.dtype)
    _compare_values(actual.astype(dt, copy=False), expected.astype(dt, copy=False), rtol, atol,
                    opts["equal_nan"], path)


def _attr_fail(name, a, e, path):
    _fail(f"The values for attribute '{name}' do not match: {a} != {e}.", path)


def _to_host(t):
    a = t._data
    return a if isinstance(a, _np.ndarray) else a.get()


def _compare_sparse(actual, expected, *, rtol, atol, equal_nan, path=()):
    """Sparse layouts, as torch.testing compares them.

    Both payloads must satisfy their invariants (a tensor that claims to be coalesced must have
    sorted, unique indices: a wrong flag silently breaks later ops). Then, as torch does, the
    tensors are compared *as stored*, without coalescing: COO compares sparse_dim and nnz, the
    ``[sparse_dim, nnz]`` indices exactly and the values with tolerances; CSR compares nnz,
    crow_indices and col_indices exactly (indices of different int dtypes are promoted) and the
    values. An uncoalesced tensor therefore differs from its coalesced form ("The number of
    specified values ... does not match"); call ``.coalesce()`` on both sides to compare
    patterns regardless of storage order. Layouts that differ (only reachable with
    ``check_layout=False``) are compared through their dense forms.
    """
    if actual.layout is not expected.layout:
        a, e = _dense_host(actual), _dense_host(expected)
        dt = _np.promote_types(a.dtype, e.dtype)
        _compare_values(a.astype(dt, copy=False), e.astype(dt, copy=False), rtol, atol,
                        equal_nan, path)
        return
    for t, who in ((actual, "actual"), (expected, "expected")):
        _check_sparse_invariants(t, who, path)
    pa, pe = actual._data, expected._data
    if actual.layout.name == "sparse_coo":
        name = "COO"
        if pa.sparse_dim != pe.sparse_dim:
            _fail("The number of sparse dimensions in sparse COO tensors does not match: "
                  f"{pa.sparse_dim} != {pe.sparse_dim}", path)
        index_pairs = (("indices", pa.indices, pe.indices),)
    else:
        name = "CSR"
        index_pairs = (("crow_indices", pa.crow, pe.crow), ("col_indices", pa.col, pe.col))
    if pa.nnz != pe.nnz:
        _fail(f"The number of specified values in sparse {name} tensors does not match: "
              f"{pa.nnz} != {pe.nnz}", path)
    for what, ia, ie in index_pairs:
        ia, ie = _host_array(ia), _host_array(ie)
        it = _np.promote_types(ia.dtype, ie.dtype)
        _compare_values(ia.astype(it, copy=False), ie.astype(it, copy=False), 0.0, 0.0, False,
                        path, identifier=f"Sparse {name} {what}")
    va, ve = _host_array(pa.values), _host_array(pe.values)
    dt = _np.promote_types(va.dtype, ve.dtype)
    _compare_values(va.astype(dt, copy=False), ve.astype(dt, copy=False), rtol, atol, equal_nan,
                    path, identifier=f"Sparse {name} values")


def _host_array(a):
    return a if isinstance(a, _np.ndarray) else a.get()


def _dense_host(t):
    if t.layout is _strided:
        return _to_host(t)
    from .autograd.grad_mode import no_grad

    with no_grad():
        return _to_host(t.to_dense())


def _check_sparse_invariants(t, who, path):
    """pydata/sparse's ``assert_eq`` idea: a payload must be canonical where it says it is."""
    from .sparse._payload import validate_coo, validate_csr

    p = t._data
    try:
        if t.layout.name == "sparse_coo":
            idx, vals = _host_array(p.indices), _host_array(p.values)
            validate_coo(_np, idx, vals, p.shape, "assert_close")
            if p.coalesced and p.nnz > 1:
                lin = _np.ravel_multi_index(tuple(idx), p.shape[: p.sparse_dim])
                if not bool((lin[1:] > lin[:-1]).all()):
                    raise ValueError(
                        "the tensor is flagged coalesced but its indices are not sorted and unique"
                    )
        else:
            validate_csr(_np, _host_array(p.crow), _host_array(p.col), _host_array(p.values),
                         p.shape, "assert_close")
    except (ValueError, TypeError) as exc:
        _fail(f"The {who} sparse tensor is invalid: {exc}", path)


def _compare_values(a, e, rtol, atol, equal_nan, path, identifier="Tensor-likes"):
    """Elementwise closeness of two host arrays of one dtype; raises the torch-style message
    (``identifier`` names what is compared: "Sparse COO indices are not equal!")."""
    inexact = a.dtype.kind in "fc" or _D.is_float_np(a.dtype)
    if not inexact:
        # integers and bools compare exactly; differences are computed in int64 (no overflow)
        a = a.astype(_np.int64)
        e = e.astype(_np.int64)
    with _np.errstate(all="ignore"):
        if inexact:
            diff = _np.abs(a - e)
            matches = (a == e) | (_np.isfinite(diff) & (diff <= atol + rtol * _np.abs(e)))
            if equal_nan:
                matches |= _np.isnan(a) & _np.isnan(e)
        else:
            diff = _np.abs(a - e)
            matches = diff <= atol + rtol * _np.abs(e) if (rtol or atol) else a == e
        if _np.all(matches):
            return
        exact = rtol == 0 and atol == 0
        if a.ndim == 0:
            abs_diff = diff.item()
            rel_diff = _safe_div(abs_diff, abs(e.item()))
            _fail(
                f"Scalars are not {'equal' if exact else 'close'}!\n\n"
                f"Expected {e.item()} but got {a.item()}.\n"
                + _diff_line("Absolute", abs_diff, None, atol) + "\n"
                + _diff_line("Relative", rel_diff, None, rtol),
                path,
            )
        flat_match = matches.reshape(-1)
        abs_flat = diff.reshape(-1).copy()
        abs_flat[flat_match] = 0
        rel_flat = abs_flat / _np.abs(e.reshape(-1))
        rel_flat[flat_match] = 0
        ia = int(_np.argmax(abs_flat))
        ir = int(_np.argmax(rel_flat))
        total = matches.size
        bad = total - int(_np.count_nonzero(matches))
        _fail(
            f"{identifier} are not {'equal' if exact else 'close'}!\n\n"
            f"Mismatched elements: {bad} / {total} ({bad / total:.1%})\n"
            + _diff_line("Absolute", abs_flat[ia].item(), _index(ia, a.shape), atol) + "\n"
            + _diff_line("Relative", rel_flat[ir].item(), _index(ir, a.shape), rtol),
            path,
        )


def _index(flat, shape):
    return tuple(int(i) for i in _np.unravel_index(flat, shape))


# ---- make_tensor ----

def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """Creates a tensor with the given ``shape``, ``device`` and ``dtype``, filled with values
    uniformly drawn from ``[low, high)``.

    Defaults for ``low`` / ``high``: bool [0, 2), unsigned [0, 10), signed integers [-9, 10),
    floating and complex [-9, 9). ``noncontiguous=True`` returns a non-contiguous tensor (when
    it has at least two elements); ``exclude_zero=True`` replaces zeros by the dtype's smallest
    positive normal number (1 for integers and bool).

    >>> make_tensor((2, 3), dtype=sparsetorch.float32, device="cpu", low=-1, high=1).shape
    sparsetorch.Size([2, 3])
    """
    from . import _ops
    from ._backend import get_backend
    from ._device import device as _device

    if len(shape) == 1 and isinstance(shape[0], _abc.Sequence):
        shape = shape[0]
    shape = tuple(int(s) for s in shape)
    if not isinstance(dtype, _D.dtype):
        raise TypeError(f"make_tensor(): dtype must be a sparsetorch dtype, got {dtype!r}")
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    exact = not (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and exact:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    dev = _device(device)
    if dtype is _D.bool:
        lo, hi = _low_high(low, high, 0, 2, 0, 2, dtype)
        t = _ops.randint(lo, hi, shape, dtype=_D.int64, device=dev).to(_D.bool)
    elif exact:
        info = _D.iinfo(dtype)
        dlo, dhi = (0, 10) if not dtype.is_signed else (-9, 10)
        lo, hi = _low_high(low, high, info.min, info.max, dlo, dhi, dtype)
        t = _ops.randint(lo, hi, shape, dtype=dtype, device=dev)
    else:
        real = dtype.to_real()
        info = _D.finfo(real)
        lo, hi = _low_high(low, high, info.min, info.max, -9, 9, dtype)
        t = _uniform(_ops, shape, lo, hi, real, dev)
    data = t._data
    xp = get_backend(dev).xp
    if dtype.is_complex:
        imag = _uniform(_ops, shape, lo, hi, real, dev)._data
        data = (data + 1j * imag).astype(dtype.np)
    if exclude_zero:
        if exact:
            repl = 1
        else:
            tiny = _D.finfo(dtype.to_real()).tiny
            repl = complex(tiny, tiny) if dtype.is_complex else tiny
        data = data.copy()
        data[data == 0] = repl
    n = 1
    for s in shape:
        n *= s
    if noncontiguous and n > 1:
        # every value twice along the last dim, then every other one: a strided view
        big = xp.repeat(data, 2, axis=-1)
        data = big[..., ::2]
    t = _wrap(data, dtype, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _wrap(data, dtype, dev):
    from ._dispatch import wrap

    return wrap(data, dtype, dev, _strided)


def _uniform(_ops, shape, lo, hi, real, dev):
    # draw in float64 so wide ranges (near finfo.max) don't overflow before casting down
    u = _ops.rand(shape, dtype=_D.float64, device=dev)
    return (u * (hi - lo) + lo).to(real)


def _low_high(low, high, lowest, highest, default_low, default_high, dtype):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and _math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        return low, high
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} "
            f"only supports [{lowest}, {highest})"
        )
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if not (dtype.is_floating_point or dtype.is_complex):
        return _math.ceil(low), _math.ceil(high)
    return low, high
