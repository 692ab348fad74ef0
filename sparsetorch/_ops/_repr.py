"""torch's tensor repr: ``tensor([1., 2.], dtype=sparsetorch.float64, requires_grad=True)``.

Sparse tensors print their index and value arrays as dense tensors inside one ``tensor(...)``
(``_sparse_repr``), as torch does.

One format per tensor (``_Fmt``): integer-valued floats print as ``3.``, a wide range of
magnitudes switches to scientific notation, otherwise fixed-point with ``precision`` decimals;
more than ``threshold`` elements are summarised with ``...``. Layout (line width, padding,
suffix wrapping) follows torch exactly, computed as if the dtype read ``torch.<name>``.
"""

import math

import numpy as np  # host-side formatting; not a kernel

from .. import _dtype as D
from .._layout import strided

__all__ = ["set_printoptions"]


def _host(t):
    return _host_array(t._data)


def _host_array(a):
    return a if isinstance(a, np.ndarray) else a.get()


# ---- repr (torch's format: precision 4, summarised above 1000 elements) ----


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Set options for printing tensors (torch.set_printoptions).

    ``profile`` is one of ``'default'``, ``'short'``, ``'full'``; ``sci_mode`` forces (True) or
    forbids (False) scientific notation, None lets the values decide.
    """
    if profile is not None:
        p = _PROFILES[profile]
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = p
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Fmt:
    """Chooses one format for every element: integer-valued floats print as ``3.``, a wide
    range of magnitudes switches to scientific notation, others use fixed ``precision``."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci = False
        p = PRINT_OPTS.precision
        if not floating:
            self.width = max((len(str(v)) for v in values.ravel().tolist()), default=1)
            return
        flat = values.ravel()
        nz = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if nz.size:
            mags = np.abs(nz)
            lo, hi = float(mags.min()), float(mags.max())
            self.int_mode = bool(np.all(nz == np.ceil(nz)))
            wide = hi / lo > 1000.0 or hi > 1.0e8
            self.sci = wide if self.int_mode else (wide or lo < 1.0e-4)
        else:
            self.width = 1  # only zeros, infs and nans: each prints at its own width
            return
        if PRINT_OPTS.sci_mode is not None:
            self.sci = PRINT_OPTS.sci_mode
        # the width comes from the nonzero finite values only (torch's rule)
        vals = nz.tolist()
        if self.sci:
            self.width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.width = max(len(f"{v:.{p}f}") for v in vals)

    def __call__(self, v):
        if not self.floating:
            s = str(v)
        elif self.sci:
            s = f"{v:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            s = f"{v:.0f}"
            if math.isfinite(v):
                s += "."
        else:
            s = f"{v:.{PRINT_OPTS.precision}f}"
        return " " * (self.width - len(s)) + s


def _summarized(a):
    """The elements that will be shown (edges of every summarised dim), for width choice."""
    e = PRINT_OPTS.edgeitems
    for ax in range(a.ndim):
        if a.shape[ax] > 2 * e:
            a = np.concatenate(
                [a.take(range(e), ax), a.take(range(a.shape[ax] - e, a.shape[ax]), ax)], ax
            )
    return a


def _fmt_value(v, f1, f2):
    if f2 is None:
        return f1(v)
    real = f1(v.real)
    imag = (f2(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector(a, indent, summarize, f1, f2):
    width = f1.width + 2 + (f2.width + 1 if f2 is not None else 0)
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / width))
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        items = (
            [_fmt_value(v, f1, f2) for v in a[:e].tolist()]
            + [" ..."]
            + [_fmt_value(v, f1, f2) for v in a[-e:].tolist()]
        )
    else:
        items = [_fmt_value(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _fmt_value(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = (
            [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(e)]
            + ["..."]
            + [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n - e, n)]
        )
    else:
        rows = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(a, dt, indent):
    summarize = a.size > PRINT_OPTS.threshold
    if dt is D.float16:
        a = a.astype(np.float32)
    shown = _summarized(a) if summarize else a
    if dt.is_complex:
        f1 = _Fmt(shown.real, True)
        f2 = _Fmt(shown.imag, True)
        return _nested(a, indent, summarize, f1, f2)
    return _nested(a, indent, summarize, _Fmt(shown, dt.is_floating_point), None)


def _with_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        # lay out as torch would print "torch.<dtype>", so both reprs wrap at the same places
        n = len(s) - 6 if "sparsetorch." in s else len(s)
        if last + n + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + n
        else:
            out.append(", " + s)
            last += n + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t):
    """torch's repr: ``tensor([1., 2.], dtype=sparsetorch.float64, requires_grad=True)``."""
    if t.layout is not strided:
        return _sparse_repr(t)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        dev = t.device
        suffixes.append(f"device='{dev.type}:{dev.index or 0}'")  # torch always shows the index
    dt = t.dtype
    a = _host(t) if t.layout is strided else _host(t.to_dense())
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt is not D.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if dt not in (D.get_default_dtype(), D.default_complex(), D.int64, D.bool):
            suffixes.append(f"dtype={dt!r}")
        body = _body(a, dt, indent)
    if t.layout is not strided:
        suffixes.append(f"layout={t.layout!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)


# ---- sparse tensors: indices/values printed as dense tensors ----

def _inner(arr, dt, indent):
    """An index/values array as torch prints it inside a sparse repr (no dtype suffix)."""
    if arr.size == 0:
        return f"tensor([], size={tuple(arr.shape)})"
    return "tensor(" + _body(_host_array(arr), dt, indent + len("tensor(")) + ")"


def _sparse_repr(t):
    p = t._data
    tail = [f"size={tuple(p.shape)}", f"nnz={p.nnz}"]
    if t.dtype not in (D.get_default_dtype(), D.int64, D.bool):
        tail.append(f"dtype={t.dtype!r}")
    tail.append(f"layout={t.layout!r}")
    if t.device.type != "cpu":
        tail.append(f"device='{t.device.type}:{t.device.index or 0}'")
    if t.grad_fn is not None:
        tail.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        tail.append("requires_grad=True")
    pad = " " * 7
    if t.layout.name == "sparse_coo":
        idx = _inner(p.indices, D.int64, 15)
        vals = _inner(p.values, t.dtype, 14)
        return (f"tensor(indices={idx},\n{pad}values={vals},\n{pad}" + ", ".join(tail) + ")")
    crow = _inner(p.crow, D.from_numpy_dtype(p.crow.dtype), 20)
    col = _inner(p.col, D.from_numpy_dtype(p.col.dtype), 19)
    vals = _inner(p.values, t.dtype, 14)
    head = f"tensor(crow_indices={crow},\n{pad}col_indices={col},\n{pad}values={vals}"
    return _with_suffixes(head, tail, 7)
