"""Structure ops on sparse COO and CSR tensors: transpose/permute, squeeze/unsqueeze,
reshape/view, clone, narrow_copy, and the helpers of the sparse slicing (``_sparse_slicing.py``)
and joining (cat/stack, in ``_join.py``) entries.

Each op is a *composite* (``_dispatch.composite``) in the kernel table of its dense op
(``shape.py``, ``conversion.py``; the slicing and joining ones in the modules named above): the new
indices are computed on the payload (``sparse/_structure.py``, no autograd), and the values are
the input's stored values passed through differentiable dense ops (``values``, a row gather,
``cat``) and attached with ``with_values``. So every op has masked gradients - the gradient of a
sparse input has that input's pattern, O(nnz) - without a derivative of its own. The CSR
transpose is the one payload kernel with a formula: it is on a measured path (a counting sort
that moves the values itself).

Differences from torch, by design:

- ``t()`` / ``transpose`` of a CSR tensor return the CSR of the transpose (torch returns a CSC
  tensor; sparsetorch has no CSC layout, and the arrays are the same).
- Sparse results are new tensors, not views (torch implements only ``narrow_copy`` and
  ``select`` on sparse; its sparse ``narrow`` and slicing fail). Where nothing needs copying a
  result shares buffers with its input: the indices of a COO ``t()`` are a reversed view of the
  input's (as SciPy's ``.T``), a CSR row slice shares the column and value buffers, and ops on
  the dense dims of a hybrid tensor view its values. ``narrow_copy`` and ``clone`` copy.
- Ops torch lacks on sparse give the dense answer: ``reshape``/``view``/``flatten`` (COO, and
  CSR to 2-D/3-D), ``squeeze``, ``narrow``, slicing with steps, index tensors in ``x[idx]``,
  CSR ``cat``/``stack``/``index_select``, ``unsqueeze(0)`` of a CSR (batched CSR), and
  transposing two dense dims of a hybrid COO tensor.
- Selecting away the last sparse dim gives a dense tensor (as torch's ``select``).
"""

from .. import _dtype as D
from .._backend import get_backend
from .._dispatch import call, defop, wrap
from .._layout import sparse_coo, sparse_csr, strided
from .._variants import method
from ..autograd.grad_mode import GRAD_ENABLED
from ..sparse import _structure as K
from ..sparse._convert import _unravel, linear_index
from ..sparse._payload import COO, CSR
from ._util import check_tensor
from .sparse_core import coalesce, to_sparse_coo, to_sparse_csr, values, with_values

__all__ = ["narrow_copy"]

_grad_enabled = GRAD_ENABLED.get
S2 = (strided, strided)


# ---- building results ----

def _be(x):
    return get_backend(x.device)


def _index_tensor(arr, x):
    return wrap(arr, D.int64, x.device, strided)


def _gather_rows_backward(grad, index, in_shape):
    return grad.new_zeros(in_shape).index_add(0, index, grad)


# rows ``index`` of a dense values tensor; no range checks (indices come from the kernels)
_gather_op = defop(
    "index_select", {S2: lambda be, v, i, in_shape: be.xp.take(v, i, axis=0)},
    inputs=("input", "index"), params=("in_shape",),
    grads={"input": _gather_rows_backward}, zero_preserving=True,
)


def _gather(v, src):
    """Rows ``src`` (an index array; None: all) of the values tensor ``v``, differentiably."""
    if src is None:
        return v
    return call(_gather_op, (v, _index_tensor(src, v)), (tuple(v.shape),))


def _prep(x):
    """``x`` ready for a structure kernel. An uncoalesced COO that needs a gradient is coalesced
    first: its stored values are a representation, not a function of the tensor, and gradients
    are the tensor's. Without autograd the duplicates are kept (no sort)."""
    if x._rg and x.layout is sparse_coo and not x._data.coalesced and _grad_enabled():
        return coalesce(x)
    return x


def _vals(x):
    """The stored values of a prepared ``x``: differentiable (``values``) when ``x`` needs a
    gradient, else the stored array itself."""
    if x._rg and _grad_enabled():
        return values(x)
    return wrap(x._data.values, x.dtype, x.device, strided)


def _result(x, v, make):
    """The sparse tensor whose payload ``make(values_array)`` builds, with the values tensor
    ``v`` attached differentiably (``with_values``) when ``v`` needs a gradient."""
    p = make(v._data)
    t = wrap(p, v.dtype, x.device, sparse_coo if p.__class__ is COO else sparse_csr)
    if v._rg and _grad_enabled():
        return with_values(t, v)
    return t


def _coo(x, indices, v, shape, coalesced):
    return _result(x, v, lambda a: COO(indices, a, shape, coalesced or indices.shape[1] <= 1))


def _csr(x, crow, col, v, shape):
    return _result(x, v, lambda a: CSR(crow, col, a, shape))


def _alias(x):
    """A new tensor with ``x``'s payload (the gradient flows through)."""
    x = _prep(x)
    p = x._data
    return _result(x, _vals(x), p.with_values)


def _via_coo(x, fn, *args, back=True):
    """Run ``fn`` on the COO form of the CSR ``x``; convert a 2-D/3-D result back to CSR."""
    r = fn(to_sparse_coo(x), *args)
    if back and r.layout is sparse_coo and r.ndim in (2, 3) and r._data.dense_dim == 0:
        return to_sparse_csr(r)
    return r


def _unsupported(fname, x, hint):
    return NotImplementedError(
        f"{fname}: not supported for a {x.ndim}-D {x.layout.name} tensor{hint}; convert with "
        f".to_sparse_coo() (or .to_dense()) first."
    )


# ---- transpose / permute ----

def _permute_rows(be, idx, perm):
    if len(perm) == 2 and perm[0] == 1:
        return idx[::-1]  # a view, as SciPy's .T: the t() -> to_sparse_csr() path copies nothing
    return be.xp.take(idx, perm, axis=0)


def _coo_permute(x, dims):
    x = _prep(x)
    p = x._data
    sd = p.indices.shape[0]
    sp_perm = list(dims[:sd])
    dn_perm = [d - sd for d in dims[sd:]]
    if sorted(sp_perm) != list(range(sd)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed. Only transpositions within sparse and dense dimensions are supported."
        )
    shape = tuple(p.shape[d] for d in dims)
    same_sparse = sp_perm == list(range(sd))
    idx = p.indices if same_sparse else _permute_rows(_be(x), p.indices, sp_perm)
    v = _vals(x)
    if dn_perm != sorted(dn_perm):
        v = v.permute([0] + [d + 1 for d in dn_perm]).contiguous()
    return _coo(x, idx, v, shape, p.coalesced and same_sparse)


def coo_permute(x, dims):
    if tuple(dims) == tuple(range(len(dims))):
        return _alias(x)
    return _coo_permute(x, dims)


def coo_transpose(x, dim0, dim1):
    if dim0 == dim1:
        return _alias(x)
    sd = x._data.indices.shape[0]
    if (dim0 < sd) != (dim1 < sd):
        raise RuntimeError(
            f"sparse transpose: transposed dimensions must be sparse (or both dense). Got "
            f"sparse_dim: {sd}, d0: {dim0}, d1: {dim1}"
        )
    dims = list(range(x.ndim))
    dims[dim0], dims[dim1] = dim1, dim0
    return _coo_permute(x, dims)


def _csr_t_backward(grad, input, result):
    if grad.layout is sparse_csr:
        g, r = grad._data, result._data
        if g.crow is r.crow and g.col is r.col:  # grad has the result's pattern: exact inverse
            return with_values(input, values(call(_csr_t_op, (grad,))))
    return grad.transpose(-2, -1)  # the engine masks it to the input's pattern


_csr_t_op = defop("transpose", {(sparse_csr,): K.csr_transpose},
                  grads={"input": _csr_t_backward}, zero_preserving=True)


def csr_transpose(x, dim0, dim1):
    if dim0 == dim1:
        return _alias(x)
    nb = x.ndim - 2
    if min(dim0, dim1) < nb:
        kinds = ["Batch" if d < nb else "Sparse" for d in (dim0, dim1)]
        raise RuntimeError(
            f"transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), "
            f"got {dim0}({kinds[0]}) and {dim1}({kinds[1]})"
        )
    return call(_csr_t_op, (x,))


def csr_permute(x, dims):
    n = len(dims)
    if tuple(dims) == tuple(range(n)):
        return _alias(x)
    if tuple(dims) == tuple(range(n - 2)) + (n - 1, n - 2):
        return call(_csr_t_op, (x,))
    raise _unsupported("permute", x, f" with dims {list(dims)} (only the last two dims can swap)")


# ---- squeeze / unsqueeze ----

def coo_unsqueeze(x, dim):
    x = _prep(x)
    p = x._data
    sd = p.indices.shape[0]
    shape = p.shape[:dim] + (1,) + p.shape[dim:]
    v = _vals(x)
    if dim <= sd:  # a new sparse dim: every entry has coordinate 0 there
        xp = _be(x).xp
        z = xp.zeros((1, p.indices.shape[1]), dtype=p.indices.dtype)
        idx = xp.concatenate([p.indices[:dim], z, p.indices[dim:]])
        return _coo(x, idx, v, shape, p.coalesced)
    return _coo(x, p.indices, v.unsqueeze(dim - sd + 1), shape, p.coalesced)


def csr_unsqueeze(x, dim):
    p = x._data
    if dim == 0 and p.crow.ndim == 1:  # a batch of one
        return _csr(x, p.crow[None], p.col[None], _vals(x).unsqueeze(0), (1,) + p.shape)
    raise _unsupported(f"unsqueeze(dim={dim})", x, "")


def coo_squeeze(x, dims, in_shape):
    x = _prep(x)
    if not dims:
        return _alias(x)
    p = x._data
    sd = p.indices.shape[0]
    keep = [d for d in range(sd) if d not in dims]
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    v = _vals(x)
    if dense_axes:
        v = v.squeeze(dense_axes)
    if not keep:  # no sparse dim left: the (summed) values are the dense answer
        return v.sum(0, dtype=v.dtype)
    shape = tuple(s for i, s in enumerate(p.shape) if i not in dims)
    idx = p.indices if len(keep) == sd else _be(x).xp.take(p.indices, keep, axis=0)
    return _coo(x, idx, v, shape, p.coalesced)


def csr_squeeze(x, dims, in_shape):
    p = x._data
    if not dims:
        return _alias(x)
    if tuple(dims) == (0,) and p.crow.ndim == 2:
        return _csr(x, p.crow[0], p.col[0], _vals(x).squeeze(0), p.shape[1:])
    return coo_squeeze(to_sparse_coo(x), dims, in_shape)


# ---- reshape / view ----

def coo_reshape(x, shape, in_shape):
    x = _prep(x)
    p = x._data
    sd, dd = p.indices.shape[0], p.values.ndim - 1
    dense = p.shape[sd:]
    lead = len(shape) - dd
    if lead < 0 or tuple(shape[lead:]) != tuple(dense):
        raise RuntimeError(
            f"reshape(): a hybrid COO tensor keeps its dense dimensions {list(dense)}: the new "
            f"shape {list(shape)} must end with them (reshape the sparse dims only, or call "
            ".to_dense() first)"
        )
    new = tuple(shape[:lead])
    if new == p.shape[:sd]:
        return _alias(x)
    if not new:
        raise RuntimeError(
            "reshape(): the result would have no sparse dimensions; call .to_dense() first"
        )
    n = 1
    for s in new:
        n *= s
    if n >= 2 ** 63:
        raise RuntimeError(
            f"reshape(): {list(new)} has more than 2**63 elements; linear indices overflow"
        )
    be = _be(x)
    if p.indices.shape[1] == 0:
        idx = be.xp.zeros((len(new), 0), dtype=be.xp.int64)
    else:
        idx = _unravel(be, linear_index(be, p.indices, p.shape[:sd]), new)
    return _coo(x, idx, _vals(x), tuple(shape), p.coalesced)  # row-major order is kept


def csr_reshape(x, shape, in_shape):
    if len(shape) not in (2, 3):
        raise _unsupported(f"reshape to {len(shape)}-D", x, "")
    return _via_coo(x, coo_reshape, shape, in_shape)


# ---- clone, narrow_copy ----

def coo_clone(x):
    x = _prep(x)
    p = x._data
    return _coo(x, p.indices.copy(), _vals(x).clone(), p.shape, p.coalesced)


def csr_clone(x):
    p = x._data
    return _csr(x, p.crow.copy(), p.col.copy(), _vals(x).clone(), p.shape)


@method
def narrow_copy(input, dim, start, length):
    """A copy of ``input.narrow(dim, start, length)`` (dense or sparse)."""
    check_tensor(input, "narrow")
    return input.narrow(dim, start, length).clone()  # narrow/clone: families above this one
