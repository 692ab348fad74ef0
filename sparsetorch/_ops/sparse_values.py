"""Values-only sparse ops: ONE mechanism for every zero-preserving elementwise op on every layout.

A zero-preserving ``f`` (``f(0) == 0``) maps a sparse tensor to a sparse tensor with the same
pattern: ``f(x) = with_values(x, f(values(x)))``. The kernel-table entries made here are
composites of the differentiable primitives (``values``, ``with_values``, ``coalesce``) and of
the dense op itself, so

- COO, hybrid COO and CSR share the code (the payloads differ only in how they store the pattern);
- dtype rules are the dense op's (``sqrt`` of an int tensor is float, ``isnan`` is bool);
- the gradient comes for free and is masked (it has the input's pattern, O(nnz) memory).

Uncoalesced COO: duplicate entries sum, so a NON-LINEAR ``f`` must see the summed value
(``f(a) + f(b) != f(a + b)``) and the input is coalesced first. Linear ops (``neg``, scalar
``mul``/``div``, ``to(dtype)``, ``deg2rad``) map the duplicates as they are (O(nnz), no sort)
when no gradient is recorded; with a gradient they coalesce too, because the gradient of a
sparse tensor is defined on its coalesced pattern (``mask_grad``).
"""

from .._dispatch import composite
from .._layout import sparse_coo, sparse_csr
from .sparse_core import _values, coalesce, values, with_values
from ..autograd.grad_mode import GRAD_ENABLED

__all__ = ["dense_result_error", "map_values", "stored", "values_kernels"]

_COO, _CSR = (sparse_coo,), (sparse_csr,)
_grad_enabled = GRAD_ENABLED.get


def stored(x, linear=False):
    """``(x, v)``: sparse ``x`` (coalesced first where needed) and its stored values ``v``,
    differentiable. ``linear``: the caller maps the values linearly, so an uncoalesced COO that
    needs no gradient keeps its duplicates (sum of f(duplicates) == f(sum))."""
    if x.layout is sparse_coo and not x._data.coalesced:
        if linear and not (x._rg and _grad_enabled()):
            return x, _values(x)
        x = coalesce(x)
    return x, values(x)


def map_values(fn, x, params=(), linear=False):
    """``fn(values, *params)`` on the stored values of sparse ``x``; same pattern (differentiable)."""
    x, v = stored(x, linear)
    return with_values(x, fn(v, *params))


def values_kernels(fn, linear=False, check=None):
    """Kernel-table entries ``{(sparse_coo,): ..., (sparse_csr,): ...}`` that map ``fn`` over the
    stored values. ``check(x, *params)`` may raise where the params make the op non-zero-preserving
    (``clamp(x, 1, 2)``, ``pow(x, 0)``)."""
    if check is None:
        def run(x, *params):
            return map_values(fn, x, params, linear)
    else:
        def run(x, *params):
            check(x, *params)
            return map_values(fn, x, params, linear)
    entry = composite(run)
    return {_COO: entry, _CSR: entry}


def dense_result_error(name, why, example):
    """The NotImplementedError of an op whose result on a sparse input would be dense."""
    return NotImplementedError(
        f"{name}: not implemented for sparse layouts: {why}, so the result would be dense. "
        f"sparsetorch never densifies silently; if that is what you want, call .to_dense() on "
        f"the sparse input first, e.g. {example}."
    )
