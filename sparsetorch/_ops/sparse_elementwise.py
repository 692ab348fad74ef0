"""Binary elementwise ops with sparse operands: the kernel-table entries of add/sub/mul/div.

Semantics (DESIGN.md section 4; each result equals the dense answer, except where noted):

- sparse ± sparse: union of the patterns, coalesced result (entries that cancel to 0 stay
  stored: the pattern is the union, so gradients and later ops see every input position).
- sparse ± dense, dense ± sparse: a DENSE result (as ``torch.add(dense, sparse)``).
- sparse ± scalar: only ``0`` keeps the implicit zeros zero; anything else raises.
- sparse * sparse: intersection of the patterns.
- sparse * dense, dense * sparse: full broadcasting; the result is sparse with the sparse
  operand's pattern, broadcast where the sparse operand is (e.g. COO ``(3, 1) * dense (3, 4)``
  stores every column of each stored row). torch gets this wrong (#116633, #158861).
- sparse * scalar, sparse / scalar (a Python number or a one-element tensor): where the scalar
  makes an implicit zero nonzero (``x * nan``, ``x * inf``, ``x * -inf``, ``x / 0``, ``x / nan``,
  integer ``x / 0``) the dense answer has NaN at every implicit entry, so it raises with the
  ``.to_dense()`` hint (torch returns a sparse tensor that disagrees with the dense computation).
  A tensor whose every entry is stored (coalesced) is computed as usual.
- sparse / dense: computed at the stored entries only. An implicit zero divided by a zero of a
  many-element divisor stays 0 (the dense answer is nan): as in torch, implicit entries are not
  computed. dense / sparse and sparse / sparse divide by the implicit zeros and raise.
- Mixed COO and CSR operands go through COO (the result is COO).
- Type promotion is the dense rule; CSR operands give CSR results where the result is 2-D/3-D.

Gradients: composites of the differentiable primitives, or ops whose formulas mask the gradient
to each sparse input's pattern (O(nnz), never dense-sized).

``pointwise.py`` declares add/sub/mul/div with these entries (it imports this module), so the
entries combine dense values through Tensor methods (``a.mul(b)``, ``a.div(b)``, ...).
"""

from .. import _dispatch
from .. import _dtype as D
from .._dispatch import SCALAR, call, composite, defop, wrap
from .._layout import sparse_coo, sparse_csr, strided
from ..sparse import _convert as C
from ..sparse import _merge as M
from ..sparse._payload import COO
from .sparse_core import to_dense, to_sparse_coo, to_sparse_csr, values_at, with_values
from .sparse_values import dense_result_error, map_values, stored

__all__ = ["add_kernels", "div_kernels", "expand_sparse", "mul_kernels"]

O, R, S = sparse_coo, sparse_csr, strided


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _coo_indices(be, p):
    """``[sparse_dim, nnz]`` int64 indices of a COO or CSR payload (CSR rows expanded)."""
    if p.__class__ is COO:
        return p.indices
    if p.crow.ndim == 1:
        return be.xp.stack([M.rows_of(be, p), p.col.astype(be.xp.int64, copy=False)])
    return C.csr_to_coo(be, p).indices


# The gradient (sparse, with the union pattern) is masked to each input's pattern by the engine.
_sparse_add_op = defop(
    "add", {(O, O): M.coo_add, (R, R): M.csr_add},
    inputs=("input", "other"), params=("beta",),
    grads={"input": lambda grad: grad, "other": lambda grad, beta: grad if beta == 1 else -grad},
    zero_preserving=True,
)


def _same_shape(a, b, name):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{name}(): expected sparse operands of the same size, but got {list(a.shape)} and "
            f"{list(b.shape)} (two sparse operands do not broadcast; expand one with .to_dense() "
            "or reshape it first)"
        )


def _common(a, b, name):
    """Operands in one sparse layout (COO unless both are CSR) and one sparse_dim."""
    if a.layout is not b.layout:
        a, b = to_sparse_coo(a), to_sparse_coo(b)
    if a.layout is O and a._data.sparse_dim != b._data.sparse_dim:
        raise RuntimeError(
            f"{name}(): expected sparse operands with the same sparse_dim, but got "
            f"{a._data.sparse_dim} and {b._data.sparse_dim}"
        )
    return a, b


def _add_sparse_sparse(a, b, beta):
    name = "add" if beta == 1 else "sub"
    _same_shape(a, b, name)
    dt = D.promote_types(a.dtype, b.dtype)
    a = a if a.dtype is dt else a.to(dt)
    b = b if b.dtype is dt else b.to(dt)
    a, b = _common(a, b, name)
    return call(_sparse_add_op, (a, b), (beta,))


def _add_scalar(x, c, beta):
    if c != 0:
        op = "+" if beta == 1 else "-"
        raise dense_result_error(
            "add" if beta == 1 else "sub",
            f"x {op} {c} makes every implicit zero of x nonzero", f"x.to_dense() {op} {c}")
    return map_values(lambda v: v + c, x, (), True)


def _sub_scalar_sparse(c, x):
    if c != 0:
        raise dense_result_error("sub", f"{c} - x makes every implicit zero of x nonzero",
                                 f"{c} - x.to_dense()")
    return map_values(lambda v: v.__rsub__(c), x, (), True)  # c - v (c may be a NumPy scalar)


def add_kernels(beta):
    """Sparse entries of ``add`` (beta=1) and ``sub`` (beta=-1)."""
    def fn(a, b):
        return a.add(b) if beta == 1 else a.sub(b)

    ss = composite(lambda a, b: _add_sparse_sparse(a, b, beta))
    sd = composite(lambda a, b: fn(to_dense(a), b))  # sparse ± dense: dense, as torch.add(dense, sparse)
    ds = composite(lambda a, b: fn(a, to_dense(b)))
    sc = composite(lambda x, c: _add_scalar(x, c, beta))
    cs = composite(lambda c, x: _add_scalar(x, c, 1) if beta == 1 else _sub_scalar_sparse(c, x))
    return {(O, O): ss, (R, R): ss, (O, R): ss, (R, O): ss, (O, S): sd, (R, S): sd, (S, O): ds,
            (S, R): ds, (O, SCALAR): sc, (R, SCALAR): sc, (SCALAR, O): cs, (SCALAR, R): cs}


# ---- intersection (sparse * sparse) ----

def _mul_sparse_sparse(a, b):
    _same_shape(a, b, "mul")
    both_csr = a.layout is R and b.layout is R
    a, b = _common(a, b, "mul")
    be = _dispatch.get_backend(a.device)
    p = M.intersect(be, a._data, b._data)
    pattern = wrap(p, a.dtype, a.device, O)
    r = with_values(pattern, values_at(a, pattern).mul(values_at(b, pattern)))
    return to_sparse_csr(r) if both_csr else r


# ---- sparse with dense: broadcasting ----

def _broadcast_shape(a, b, name):
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        x = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        y = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"{name}(): " + _dispatch.broadcast_message([a, b]))
        out.append(y if x == 1 else x)
    return tuple(out)


def _expand_pattern(be, p, shape):
    """Indices of COO payload ``p`` broadcast to ``shape`` (new leading dims and size-1 sparse
    dims are repeated), and ``rep``: the stored entry each result entry copies (None: same)."""
    xp = be.xp
    sd = p.sparse_dim
    lead = len(shape) - len(p.shape)
    exp = list(range(lead)) + [lead + i for i in range(sd) if p.shape[i] == 1 and shape[lead + i] != 1]
    if not exp:
        return p.indices, None, p.coalesced
    sizes = [shape[i] for i in exp]
    c, nnz = _prod(sizes), p.nnz
    combos = xp.tile(xp.indices(sizes, dtype=xp.int64).reshape(len(sizes), -1), (1, nnz))
    rep = xp.repeat(xp.arange(nnz, dtype=xp.int64), c)
    idx = xp.empty((lead + sd, nnz * c), dtype=xp.int64)
    for d in range(lead + sd):
        idx[d] = combos[exp.index(d)] if d in exp else xp.repeat(p.indices[d - lead], c)
    if p.coalesced and nnz * c > 1:
        (keys,), _ = C.joint_keys(be, [idx], shape[: lead + sd])
        if not bool((keys[1:] > keys[:-1]).all()):
            order = xp.argsort(keys)
            idx, rep = idx[:, order], rep[order]
    return idx, rep, p.coalesced


def expand_sparse(x, shape):
    """Sparse ``x`` broadcast to ``shape`` as a COO tensor (differentiable; stored entries are
    repeated along the broadcast sparse dims, values along the broadcast dense dims)."""
    if x.layout is R:
        x = to_sparse_coo(x)
    be = _dispatch.get_backend(x.device)
    x, v = stored(x, linear=True)
    p = x._data
    idx, rep, coalesced = _expand_pattern(be, p, shape)
    if rep is not None:
        v = v.index_select(0, wrap(rep, D.int64, x.device, S))
    target = (idx.shape[1],) + tuple(shape[len(shape) - p.dense_dim:])
    if tuple(v.shape) != target:
        v = v.expand(target).contiguous()
    pattern = wrap(COO(idx, v._data, shape, coalesced), v.dtype, x.device, O)
    return with_values(pattern, v)


def _gather_key(be, p, lead, k, shape):
    """Index of a dense operand of ``shape`` at the stored entries of ``p`` (its first ``k``
    dims line up with sparse dims ``lead..lead+k`` of ``p``): (linear index or None, key)."""
    full = all(shape[j] != 1 for j in range(k))
    if full and k == len(shape) and lead == 0 and k == (p.indices.shape[0] if p.__class__ is COO else len(p.shape)):
        return M.keys_of(be, p), None  # the same shape: the pattern's own linear index (the hot case)
    idx = _coo_indices(be, p)
    if full and k == len(shape):
        return C.linear_index(be, idx[lead: lead + k], shape), None
    return None, tuple(idx[j + lead] if shape[j] != 1 else 0 for j in range(k))


def _gather_kernel(be, d, p, lead, k, in_shape):
    lin, key = _gather_key(be, p, lead, k, d.shape)
    if lin is not None:
        return be.xp.take(d.reshape(-1), lin)  # reshape copies only a non-contiguous d
    return d[key]


def _scatter_kernel(be, g, p, lead, k, in_shape):
    xp = be.xp
    lin, key = _gather_key(be, p, lead, k, in_shape)
    if lin is not None and g.dtype.kind == "f" and g.ndim == 1:
        n = _prod(in_shape)
        return xp.bincount(lin, weights=g, minlength=n).astype(g.dtype, copy=False).reshape(in_shape)
    out = xp.zeros(in_shape, dtype=g.dtype)
    if lin is not None:
        xp.add.at(out.reshape(-1), lin, g)
    else:
        xp.add.at(out, key, g)
    return out


_gather_op = defop(
    "_sparse_gather", {(S, O): _gather_kernel, (S, R): _gather_kernel},
    inputs=("input", "pattern"), params=("lead", "k", "in_shape"),
    grads={"input": lambda grad, pattern, lead, k, in_shape: call(
        _scatter_op, (grad, pattern), (lead, k, in_shape))},
)
_scatter_op = defop(
    "_sparse_scatter_add", {(S, O): _scatter_kernel, (S, R): _scatter_kernel},
    inputs=("input", "pattern"), params=("lead", "k", "in_shape"),
    grads={"input": lambda grad, pattern, lead, k: call(
        _gather_op, (grad, pattern), (lead, k, tuple(grad.shape)))},
)


def _dense_at(d, s):
    """The dense operand ``d`` at the stored entries of sparse ``s`` (whose shape is the
    broadcast shape): ``[nnz, *rest]``, or ``d`` itself reshaped when no stored index selects it."""
    r, m = s.ndim, d.ndim
    lead = r - m
    sd = s._data.sparse_dim if s.layout is O else r
    k = min(m, max(0, sd - lead))
    if all(d.shape[j] == 1 for j in range(k)):  # also k == 0: d lines up with the dense dims
        return d.reshape(tuple(d.shape[k:])) if k else d
    return call(_gather_op, (d, s), (lead, k, tuple(d.shape)))


def _fully_stored(x):
    """True if no entry of sparse ``x`` is implicit (every position stored once)."""
    p = x._data
    if x.layout is O:
        if not p.coalesced:
            return False
        return p.nnz == _prod(p.shape[:p.sparse_dim])
    return p.nnz == _prod(p.shape)


def _check_scalar(x, c, name, swap=False):
    """Refuse ``x * c`` / ``x / c`` when ``c`` makes an implicit zero nonzero (0 * nan, 0 * inf,
    0 / 0, 0 / nan are NaN) and ``x`` has implicit entries: the sparse result would disagree with
    the dense one."""
    if isinstance(c, bool):
        c = int(c)
    try:
        z = complex(c)
    except (TypeError, ValueError):
        return
    nan = z != z
    inf = z.real in (float("inf"), float("-inf")) or z.imag in (float("inf"), float("-inf"))
    bad = nan or (z == 0 if name == "div" else inf)
    if not bad or _fully_stored(x):
        return
    if name == "div":
        why, ex = f"x / {c} is nan at every implicit zero of x (0 / {c})", f"x.to_dense() / {c}"
    elif swap:
        why, ex = f"{c} * x is nan at every implicit zero of x ({c} * 0)", f"{c} * x.to_dense()"
    else:
        why, ex = f"x * {c} is nan at every implicit zero of x (0 * {c})", f"x.to_dense() * {c}"
    raise dense_result_error(name, why, ex)


def _scalar_of(d):
    """The Python value of a one-element dense tensor (else None)."""
    if d._data.size != 1:
        return None
    return d._data.reshape(()).item()


def _with_dense(s, d, fn, name, swap=False):
    """``fn(s, d)`` (or ``fn(d, s)``) at the stored entries of sparse ``s`` broadcast with ``d``."""
    if name in ("mul", "div") and d.dtype.is_floating_point | d.dtype.is_complex | (name == "div"):
        c = _scalar_of(d)
        if c is not None:
            _check_scalar(s, c, name, swap)
    shape = _broadcast_shape(s.shape, d.shape, name)
    was_csr = s.layout is R
    if tuple(s.shape) != shape:
        s = expand_sparse(s, shape)
    s, v = stored(s, linear=True)
    dv = _dense_at(d, s)
    r = with_values(s, fn(dv, v) if swap else fn(v, dv))
    if was_csr and r.layout is not R and len(shape) in (2, 3):
        r = to_sparse_csr(r)
    return r


# ---- kernel-table entries ----

def _by_scalar(fn, name):
    def entry(x, c):
        _check_scalar(x, c, name)
        return map_values(lambda v: fn(v, c), x, (), True)

    return composite(entry)


def _scalar_times(c, x):
    _check_scalar(x, c, "mul", True)
    return map_values(lambda v: v.mul(c), x, (), True)


def _mul(a, b):
    return a.mul(b)


def _div(a, b):
    return a.div(b)  # true division (rounding_mode=None)


def mul_kernels():
    ss = composite(_mul_sparse_sparse)
    sd = composite(lambda s, d: _with_dense(s, d, _mul, "mul"))
    ds = composite(lambda d, s: _with_dense(s, d, _mul, "mul", True))
    sc = _by_scalar(_mul, "mul")
    cs = composite(_scalar_times)
    return {(O, O): ss, (R, R): ss, (O, R): ss, (R, O): ss, (O, S): sd, (R, S): sd, (S, O): ds,
            (S, R): ds, (O, SCALAR): sc, (R, SCALAR): sc, (SCALAR, O): cs, (SCALAR, R): cs}


def _div_by_sparse(*args):
    raise dense_result_error(
        "div", "dividing by a sparse tensor divides by its implicit zeros (x / 0 is inf or nan)",
        "a / b.to_dense()")


def div_kernels():
    sd = composite(lambda s, d: _with_dense(s, d, _div, "div"))
    sc = _by_scalar(_div, "div")
    bad = composite(_div_by_sparse)
    return {(O, S): sd, (R, S): sd, (O, SCALAR): sc, (R, SCALAR): sc,
            (O, O): bad, (R, R): bad, (O, R): bad, (R, O): bad, (S, O): bad, (S, R): bad,
            (SCALAR, O): bad, (SCALAR, R): bad}
