"""torch-style repr of sparse tensors (indices/values printed as dense tensors)."""

from .. import _dtype as D
from .._ops import _repr as R

__all__ = ["sparse_repr"]


def _inner(arr, dt, indent):
    """An index/values array as torch prints it inside a sparse repr (no dtype suffix)."""
    if arr.size == 0:
        return f"tensor([], size={tuple(arr.shape)})"
    return "tensor(" + R._body(R._host_array(arr), dt, indent + len("tensor(")) + ")"


def sparse_repr(t):
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
    return R._with_suffixes(head, tail, 7)
