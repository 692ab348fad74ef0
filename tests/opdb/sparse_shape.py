"""OpInfo rows for the structure ops on sparse tensors (t/transpose/permute, squeeze/unsqueeze,
reshape/view/flatten, cat/stack, narrow/select/index_select, indexing, clone).

The sparse table driver (tests/test_sparse_table.py) turns each dense sample into every layout
variant its row allows (COO coalesced/uncoalesced/empty/full/hybrid, CSR) and checks the result
against the dense op, gradcheck through the stored values, and masked gradients. Rows are split
by layout where an op is defined on one layout only for some samples (torch's rules): a 2-D
hybrid COO tensor has one sparse and one dense dim, so ``t()`` on it mixes the two and raises,
and a CSR tensor only unsqueezes/stacks along dim 0. The hand tests (tests/test_sparse_shape.py)
cover those cases, torch parity and the result invariants.
"""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make, to_numpy

COO = (st.strided, st.sparse_coo)
CSR = (st.strided, st.sparse_csr)
BOTH = (st.strided, st.sparse_coo, st.sparse_csr)


def _samples(*cases):
    """Samples ``op(x, *args)`` for ``(shape, args)`` pairs."""
    def samples(dtype, rg):
        return [Sample((make(shape, dtype, rg, seed=i),) + tuple(args), name=f"{shape}{args}")
                for i, (shape, args) in enumerate(cases)]
    return samples


def R(name, op, ref, samples, layouts, errors=None, **kw):
    return OpInfo(name=name, op=op, ref=ref, sample_inputs=samples, dtypes=FLOATS, layouts=layouts,
                  error_inputs=errors, **kw)


def _coo(shape=(3, 4), sparse_dim=None):
    return make(shape, st.float32, seed=9).to_sparse(sparse_dim)


def _errors(*cases):
    def errors():
        return [ErrorInput(Sample(args), err, rx) for args, err, rx in cases]
    return errors


# ---- NumPy references ----

def _np_transpose(x, d0, d1):
    return np.swapaxes(x, d0, d1)


def _np_narrow(x, dim, start, length):
    start = start + x.shape[dim] if start < 0 else start
    return np.take(x, np.arange(start, start + length), axis=dim)


def _np_squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return np.squeeze(x, axis=tuple(d for d in dims if x.shape[d] == 1))


def _np_getitem(x, key):
    return x[to_numpy(key)]


def _t(x):
    return x.t()


def _as(b, a):
    """Dense ``b`` in the layout (and sparse_dim) of ``a``: the table sparsifies one argument, and
    joining needs one layout (each tensor is used once, so no gradient accumulates twice)."""
    if a.layout is st.sparse_coo:
        return b.to_sparse(a.sparse_dim())
    return b.to_sparse_csr() if a.layout is st.sparse_csr else b


def _cat(a, b=None, dim=0):
    if isinstance(a, (list, tuple)):  # the error inputs pass the list itself
        return st.cat(a, b or 0)
    return st.cat([a, _as(b, a)], dim)


def _stack(a, b=None, dim=0):
    if isinstance(a, (list, tuple)):
        return st.stack(a, b or 0)
    return st.stack([a, _as(b, a)], dim)


def _pairs(*cases):
    """Samples ``op(a, b, dim)`` for ``(shape of a, shape of b, dim)``."""
    def samples(dtype, rg):
        return [Sample((make(sa, dtype, rg, seed=i), make(sb, dtype, seed=50 + i), dim), name=f"{sa}+{sb}@{dim}")
                for i, (sa, sb, dim) in enumerate(cases)]
    return samples


_I = st.tensor  # index tensors in samples (int64)


def _index_select_samples(dtype, rg):
    return [
        Sample((make((5, 4), dtype, rg, seed=1), 0, _I([3, 0, 3, 1])), name="rows-repeated"),
        Sample((make((5, 4), dtype, rg, seed=2), 0, _I([0, 2, 4])), name="rows-increasing"),
        Sample((make((5, 4), dtype, rg, seed=3), 1, _I([0, 2, 3])), name="cols-increasing"),
        Sample((make((5, 4), dtype, rg, seed=4), 1, _I([3, 1, 1])), name="cols-shuffled"),
        Sample((make((5, 4), dtype, rg, seed=5), -1, _I([], dtype=st.int64)), name="empty-index"),
        Sample((make((3, 4, 2), dtype, rg, seed=6), 2, _I([1, 0, 1])), name="last-dim"),
        Sample((make((3, 4, 2), dtype, rg, seed=7), 1, _I([2, 2])), name="3d-mid"),
    ]


def _getitem_samples(dtype, rg):
    keys = [1, -1, slice(1, 4), (slice(None), 2), (slice(None, None, 2), slice(1, None)),
            (None, 0), (Ellipsis, 1), (_I([0, 2, 2]),), (slice(None), _I([3, 0])),
            (slice(3, 1),), (1, slice(0, 3, 2))]
    out = [Sample((make((5, 4), dtype, rg, seed=i), k), name=f"2d-{k!r}") for i, k in enumerate(keys)]
    keys3 = [(1, slice(0, 2)), (slice(None), slice(None), 1), (Ellipsis, slice(1, 2)), (0, 1)]
    out += [Sample((make((3, 4, 2), dtype, rg, seed=20 + i), k), name=f"3d-{k!r}")
            for i, k in enumerate(keys3)]
    return out


OPS = [
    R("sparse.t", _t, np.transpose, _samples(((3, 4), ()), ((5, 2), ())), CSR),
    R("sparse.transpose", st.transpose, _np_transpose,
      _samples(((3, 4, 5), (0, 1)), ((3, 4, 5), (-2, -3)), ((2, 3, 4, 2), (0, 2)), ((3, 4, 5), (1, 1))),
      COO, _errors(((_coo((2, 3, 4), 2), 1, 2), RuntimeError, "sparse"),
                   ((_coo((2, 3)).to_sparse_csr(), 0, 2), IndexError, "out of range"))),
    R("sparse.permute", st.permute, np.transpose,
      _samples(((3, 4, 5), ((1, 0, 2),)), ((2, 3, 4, 2), ((2, 0, 1, 3),)), ((3, 4), ((0, 1),))),
      COO, _errors(((_coo((2, 3, 4), 2), (0, 2, 1)), RuntimeError, "sparse and dense"))),
    R("sparse.unsqueeze", st.unsqueeze, np.expand_dims,
      _samples(((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (2,)), ((3, 4), (-1,)), ((5,), (0,))), COO),
    R("sparse.unsqueeze_csr", st.unsqueeze, np.expand_dims, _samples(((3, 4), (0,))), CSR,
      _errors(((_coo().to_sparse_csr(), 1), NotImplementedError, "to_sparse_coo"))),
    R("sparse.squeeze", st.squeeze, _np_squeeze,
      _samples(((1, 4, 1), ()), ((1, 4, 1), (0,)), ((1, 4, 1), (2,)), ((1, 4, 1), ((0, 2),)),
               ((1, 5), (0,)), ((4, 1), ()), ((3, 4), (0,))), BOTH),
    R("sparse.reshape", st.reshape, np.reshape,
      _samples(((4, 6, 3), ((24, 3),)), ((4, 6, 3), ((2, 12, 3),)), ((4, 6, 3), ((-1, 2, 3, 3),)),
               ((6, 4), ((2, 3, 4),)), ((6, 4), ((6, 4),))),
      COO, _errors(((_coo((2, 3, 4), 2), (6, 2, 2)), RuntimeError, "dense dimensions"))),
    R("sparse.reshape_csr", st.reshape, np.reshape,
      _samples(((6, 4), ((3, 8),)), ((6, 4), ((24, 1),)), ((6, 4), ((4, -1),))), CSR,
      _errors(((_coo((2, 3)).to_sparse_csr(), (6,)), NotImplementedError, "to_sparse_coo"))),
    R("sparse.view", lambda x, s: x.view(s), lambda x, s: x.reshape(s),
      _samples(((4, 6, 3), ((24, 3),)), ((6, 4), ((3, 2, 4),))), COO),
    R("sparse.flatten", st.flatten, lambda x, s, e: x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:]),
      _samples(((3, 4, 2), (0, 1)), ((2, 3, 4, 2), (1, 2))), COO),
    R("sparse.cat", _cat, lambda a, b, dim: np.concatenate([a, b], dim),
      _pairs(((3, 4), (2, 4), 0), ((3, 4), (3, 2), 1), ((3, 4), (3, 1), -1), ((3, 4, 3), (1, 4, 3), 0),
             ((3, 4, 3), (3, 4, 2), 2), ((3, 4, 3), (3, 2, 3), 1)),
      BOTH, _errors((([_coo(), _coo().to_dense()],), RuntimeError, "same layout"),
                    (([_coo(), _coo().to_sparse_csr()],), RuntimeError, "same layout"),
                    (([_coo((2, 3, 4), 2), _coo((2, 3, 4))],), RuntimeError, "sparse_dim"))),
    R("sparse.stack", _stack, lambda a, b, dim: np.stack([a, b], dim),
      _pairs(((3, 4), (3, 4), 0), ((3, 4), (3, 4), 1), ((3, 4), (3, 4), 2), ((3, 4, 2), (3, 4, 2), 3),
             ((3, 4, 2), (3, 4, 2), 2)), COO,
      _errors((([_coo(), _coo().to_dense()],), RuntimeError, "same layout"))),
    # batched CSR needs equal nnz per batch: ``a`` stacked with itself
    R("sparse.stack_csr", lambda a, dim=0: _stack(a, dim) if isinstance(a, list) else st.stack([a, a], dim),
      lambda a, dim: np.stack([a, a], dim), _samples(((3, 4), (0,)), ((5, 2), (-3,))), CSR,
      _errors((([_coo().to_sparse_csr()], 1), NotImplementedError, "dim 0"))),
    R("sparse.narrow", st.narrow, _np_narrow,
      _samples(((5, 4), (0, 1, 3)), ((5, 4), (1, 1, 2)), ((5, 4), (0, -2, 2)), ((5, 4), (1, 0, 0)),
               ((5, 4), (0, 0, 5)), ((3, 4, 5), (2, 1, 3)), ((6,), (0, 2, 3))), BOTH),
    R("sparse.narrow_copy", st.narrow_copy, _np_narrow, _samples(((5, 4), (0, 1, 3)), ((5, 4), (1, 2, 2))),
      BOTH),
    R("sparse.select", st.select, lambda x, d, i: np.take(x, i, axis=d),
      _samples(((5, 4), (0, 1)), ((5, 4), (1, -1)), ((3, 4, 2), (2, 1)), ((3, 4, 2), (1, 0)),
               ((6,), (0, 2))), BOTH,
      _errors(((_coo(), 0, 5), IndexError, "out of range"))),
    R("sparse.index_select", st.index_select, lambda x, d, i: np.take(x, i, axis=d),
      _index_select_samples, BOTH,
      _errors(((_coo(), 0, _I([3])), IndexError, "out of range"),
              ((_coo(), 0, _I([[0]])), IndexError, "vector"))),
    R("sparse.getitem", lambda x, k: x[k], _np_getitem, _getitem_samples, BOTH,
      _errors(((_coo(), (_I([0]), _I([1]))), NotImplementedError, "several index tensors"),
              ((_coo(), _coo().to_dense() > 0), NotImplementedError, "to_dense"),
              ((_coo(), 7), IndexError, "out of bounds"),
              ((_coo(), (0, 0, 0)), IndexError, "too many indices"))),
    R("sparse.clone", lambda x: x.clone(), lambda x: x.copy(), _samples(((3, 4), ()), ((3, 4, 2), ())), BOTH),
]
