"""torch-style repr of sparse tensors (indices/values printed as dense tensors)."""

from .. import _dtype as D
from .._dispatch import wrap
from .._layout import strided

__all__ = ["sparse_repr"]


def _dense(arr, t):
    return wrap(arr, D.from_numpy_dtype(arr.dtype), t.device, strided)


def _indent(text, n):
    return text.replace("\n", "\n" + " " * n)


def sparse_repr(t):
    p = t._data
    tail = [f"size={tuple(p.shape)}", f"nnz={p.nnz}"]
    if t.dtype is not D.get_default_dtype():
        tail.append(f"dtype={t.dtype!r}")
    tail.append(f"layout={t.layout!r}")
    if t.device.type != "cpu":
        tail.append(f"device='{t.device}'")
    if t.grad_fn is not None:
        tail.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        tail.append("requires_grad=True")
    vals = repr(_dense(p.values, t))
    if t.layout.name == "sparse_coo":
        idx = repr(_dense(p.indices, t))
        head = (f"tensor(indices={_indent(idx, 15)},\n"
                f"       values={_indent(vals, 14)},\n")
    else:
        crow, col = repr(_dense(p.crow, t)), repr(_dense(p.col, t))
        head = (f"tensor(crow_indices={_indent(crow, 20)},\n"
                f"       col_indices={_indent(col, 19)},\n"
                f"       values={_indent(vals, 14)},\n")
    return head + "       " + ", ".join(tail) + ")"
