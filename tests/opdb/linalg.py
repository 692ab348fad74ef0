"""OpInfo rows for matrix products, einsum/tensordot, diagonals and triangles, cross, kron."""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make


def L(name, ref, samples, *, op=None, method=None, errors=None, **kw):
    return OpInfo(name=name, op=op or getattr(st, name, None) or getattr(st._ops, name), ref=ref, sample_inputs=samples,
                  error_inputs=errors, method=name if method is None else (method or None), **kw)


def _m(*shapes):
    """Samples of random tensors with the given shapes (one sample)."""
    def samples(dtype, rg):
        return [Sample(tuple(make(s, dtype, rg, seed=i) for i, s in enumerate(shapes)))]
    return samples


def _many(*cases):
    """cases: (shapes, kwargs) pairs -> samples."""
    def samples(dtype, rg):
        out = []
        for k, (shapes, kw) in enumerate(cases):
            args = tuple(make(s, dtype, rg, seed=10 * k + i) if isinstance(s, tuple) else s
                         for i, s in enumerate(shapes))
            out.append(Sample(args, dict(kw), name=str(shapes)))
        return out
    return samples


def _mm_errors():
    return [
        ErrorInput(Sample((st.ones(2, 3), st.ones(4, 5))), RuntimeError,
                   r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
        ErrorInput(Sample((st.ones(2, 3), st.ones(3, 5, dtype=st.float64))), RuntimeError,
                   r"expected m1 and m2 to have the same dtype, but got: float != double"),
        ErrorInput(Sample((st.ones(3), st.ones(3, 5))), RuntimeError, r"self must be a matrix"),
        ErrorInput(Sample((st.ones(2, 3), [1.0])), TypeError, r"must be a Tensor"),
    ]


def _matmul_errors():
    return [
        ErrorInput(Sample((st.ones(2, 3), st.ones(4, 5))), RuntimeError, r"shapes cannot be multiplied"),
        ErrorInput(Sample((st.ones(()), st.ones(3))), RuntimeError, r"at least 1D"),
        ErrorInput(Sample((st.ones(2, 3, 4), st.ones(3, 4, 6))), RuntimeError, r"must match the size"),
        ErrorInput(Sample((st.ones(3), st.ones(4))), RuntimeError, r"inconsistent tensor size"),
        ErrorInput(Sample((st.ones(2, 3), st.ones(3, 2, dtype=st.float64))), RuntimeError, r"same dtype"),
    ]


def _np_addmm(prod):
    def ref(c, a, b, beta=1, alpha=1):
        p = alpha * prod(a, b)
        return p if beta == 0 else beta * c + p
    return ref


def _einsum_samples(dtype, rg):
    def mk(s, seed):
        return make(s, dtype, rg, seed=seed)
    return [
        Sample(("ij,jk->ik", mk((2, 3), 1), mk((3, 4), 2)), name="mm"),
        Sample(("ij,jk", [mk((2, 3), 3), mk((3, 4), 4)]), name="list-implicit"),
        Sample(("bij,bjk->bik", mk((2, 2, 3), 5), mk((2, 3, 2), 6)), name="bmm"),
        Sample(("...ij,...jk->...ik", mk((2, 2, 3), 7), mk((3, 4), 8)), name="ellipsis"),
        Sample(("ii->i", mk((3, 3), 9)), name="diag"),
        Sample(("ii", mk((3, 3), 10)), name="trace"),
        Sample(("ij->", mk((2, 3), 11)), name="sum"),
        Sample(("i,j->ij", mk((3,), 12), mk((2,), 13)), name="outer"),
        Sample(("ij,jk,kl->il", mk((2, 3), 14), mk((3, 2), 15), mk((2, 2), 16)), name="chain"),
        Sample(("ijk->kj", mk((2, 3, 2), 17)), name="sum-permute"),
    ]


def _np_einsum(eq, *ops):
    if len(ops) == 1 and isinstance(ops[0], list):
        ops = ops[0]
    return np.asarray(np.einsum(eq, *ops))


def _np_tensordot(a, b, dims=2):
    return np.tensordot(a, b, axes=dims)


def _np_diag(x, diagonal=0):
    return np.diag(x, diagonal)


def _np_diag_embed(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    idx = np.arange(x.shape[-1])
    r, c = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., r, c] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2)) if (dim1, dim2) != (-2, -1) else out


def _np_kron(a, b):
    return np.kron(a, b)


OPS = [
    L("mm", np.matmul, _m((2, 3), (3, 4)), errors=_mm_errors, dtypes=FLOATS + INTS),
    L("matmul", np.matmul, _many((((3,), (3,)), {}), (((2, 3), (3, 4)), {}), (((3,), (3, 4)), {}),
                                 (((2, 3), (3,)), {}), (((2, 2, 3), (3, 4)), {}),
                                 (((3,), (2, 3, 4)), {}), (((2, 3, 4), (4,)), {}),
                                 (((2, 1, 2, 3), (3, 3, 2)), {}), (((2, 2, 3), (2, 3, 2)), {})),
      errors=_matmul_errors, dtypes=FLOATS + INTS),
    L("bmm", np.matmul, _m((2, 2, 3), (2, 3, 4)), dtypes=FLOATS + INTS, errors=lambda: [
        ErrorInput(Sample((st.ones(2, 3, 4), st.ones(3, 4, 5))), RuntimeError,
                   r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: \[3, 4\]"),
        ErrorInput(Sample((st.ones(3, 4), st.ones(2, 4, 5))), RuntimeError, r"batch1 must be a 3D tensor")]),
    L("mv", np.matmul, _m((2, 3), (3,)), errors=lambda: [
        ErrorInput(Sample((st.ones(2, 3), st.ones(4))), RuntimeError,
                   r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)")]),
    L("dot", np.dot, _m((4,), (4,)), dtypes=FLOATS + INTS, errors=lambda: [
        ErrorInput(Sample((st.ones(3, 1), st.ones(3))), RuntimeError, r"1D tensors expected"),
        ErrorInput(Sample((st.ones(3), st.ones(3, dtype=st.float64))), RuntimeError,
                   r"expected both vectors to have same dtype, but found Float and Double")]),
    L("vdot", np.vdot, _m((4,), (4,))),
    L("inner", np.inner, _many((((2, 3), (4, 3)), {}), (((3,), (3,)), {}), (((2, 3), ()), {}),
                               (((2, 2, 3), (3,)), {})),
      errors=lambda: [ErrorInput(Sample((st.ones(2, 3), st.ones(4, 2))), RuntimeError,
                                 r"last dimension must match")]),
    L("outer", np.outer, _m((3,), (2,)), errors=lambda: [
        ErrorInput(Sample((st.ones(2, 2), st.ones(3))), RuntimeError, r"Expected 1-D argument self")]),
    L("ger", np.outer, _m((3,), (2,))),
    L("addmm", _np_addmm(np.matmul), _many((((2, 4), (2, 3), (3, 4)), {}),
                                           (((4,), (2, 3), (3, 4)), {"beta": 0.5, "alpha": 2.0}),
                                           (((2, 4), (2, 3), (3, 4)), {"beta": 0})),
      inplace="addmm_", errors=lambda: [
          ErrorInput(Sample((st.ones(3, 5), st.ones(2, 3), st.ones(3, 5))), RuntimeError, r"expand"),
          ErrorInput(Sample((st.ones(2, 5, dtype=st.int64), st.ones(2, 3), st.ones(3, 5))), RuntimeError,
                     r"same dtype")]),
    L("addmv", _np_addmm(np.matmul), _many((((2,), (2, 3), (3,)), {"beta": 2.0, "alpha": -1.0}),
                                           (((1,), (2, 3), (3,)), {}))
      , inplace="addmv_"),
    L("baddbmm", _np_addmm(np.matmul), _many((((2, 2, 4), (2, 2, 3), (2, 3, 4)), {"alpha": 0.5}),
                                             (((2, 4), (2, 2, 3), (2, 3, 4)), {})),
      inplace="baddbmm_"),
    L("addbmm", _np_addmm(lambda a, b: np.matmul(a, b).sum(0)),
      _many((((2, 4), (3, 2, 5), (3, 5, 4)), {"beta": 0.5, "alpha": 2.0}),
            (((4,), (2, 2, 3), (2, 3, 4)), {})),
      inplace="addbmm_", errors=lambda: [
          ErrorInput(Sample((st.ones(2, 2), st.ones(2, 2), st.ones(2, 2, 2))), RuntimeError,
                     r"batch1 must be a 3D tensor"),
          ErrorInput(Sample((st.ones(2, 2), st.ones(2, 2, 3), st.ones(3, 3, 2))), RuntimeError,
                     r"batch1 and batch2 must have same number of batches, got 2 and 3")]),
    L("addr", _np_addmm(np.outer), _many((((3, 2), (3,), (2,)), {"beta": 2.0, "alpha": 3.0}),
                                         (((2,), (3,), (2,)), {})), inplace="addr_"),
    L("einsum", _np_einsum, _einsum_samples, method=False, errors=lambda: [
        ErrorInput(Sample(("ij,jk->ik", st.ones(2, 3), st.ones(4, 4))), RuntimeError,
                   r"subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
        ErrorInput(Sample(("ij,jk->ik", st.ones(2, 3), st.ones(3, 4, dtype=st.float64))), RuntimeError,
                   r"expected scalar type Float but found Double")]),
    L("tensordot", _np_tensordot, _many((((2, 3, 4), (3, 4, 2)), {}),
                                        (((2, 3, 4), (4, 3, 2)), {"dims": ([1, 2], [1, 0])}),
                                        (((2, 3), (3, 2)), {"dims": 1}), (((2, 3), (2,)), {"dims": 0})),
      method=False),
    L("diag", _np_diag, _many((((3,), ), {}), (((3,), ), {"diagonal": 1}), (((3, 4), ), {}),
                              (((3, 4), ), {"diagonal": -1}), (((3, 4), ), {"diagonal": 2})),
      errors=lambda: [ErrorInput(Sample((st.ones(2, 2, 2),)), RuntimeError, r"Supports 1D or 2D tensors. Got 3D")]),
    L("diagonal", lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2).copy(),
      _many((((3, 4), ), {}), (((3, 4), ), {"offset": 1}), (((2, 3, 4), ), {"offset": -1, "dim1": 1, "dim2": 2}),
            (((2, 3, 4), ), {"dim1": 2, "dim2": 0})),
      errors=lambda: [ErrorInput(Sample((st.ones(2, 3, 4), 1, 0, 0)), RuntimeError, r"cannot be identical")]),
    L("diag_embed", _np_diag_embed, _many((((2, 3), ), {}), (((3,), ), {"offset": 1}),
                                          (((2, 3), ), {"offset": -1})), method=False),
    L("trace", lambda x: np.asarray(np.trace(x, dtype=np.int64 if x.dtype.kind in "iub" else None)),
      _m((3, 4)), dtypes=FLOATS + INTS,
      errors=lambda: [ErrorInput(Sample((st.ones(3),)), RuntimeError, r"trace: expected a matrix")]),
    L("tril", lambda x, diagonal=0: np.tril(x, diagonal), _many((((3, 4), ), {}), (((2, 3, 3), ), {"diagonal": -1}), (((3, 4), ), {"diagonal": 1})),
      inplace="tril_", dtypes=FLOATS + INTS,
      errors=lambda: [ErrorInput(Sample((st.ones(3),)), RuntimeError, r"at least 2 dimensions")]),
    L("triu", lambda x, diagonal=0: np.triu(x, diagonal), _many((((3, 4), ), {}), (((2, 3, 3), ), {"diagonal": 1}), (((4, 3), ), {"diagonal": -2})),
      inplace="triu_", dtypes=FLOATS + INTS),
    L("cross", lambda a, b, dim=None: np.cross(a, b, axis=dim if dim is not None else
                                               [i for i, s in enumerate(np.broadcast_shapes(a.shape, b.shape)) if s == 3][0]),
      _many((((4, 3), (4, 3)), {"dim": 1}), (((3, 2), (3, 2)), {}), (((1, 3), (2, 3)), {"dim": -1})),
      errors=lambda: [ErrorInput(Sample((st.ones(2, 4), st.ones(2, 4))), RuntimeError, r"no dimension of size 3")]),
    L("kron", _np_kron, _many((((2, 2), (3,)), {}), (((2, 3), (2, 2)), {}), (((2,), (3,)), {})), method=False),
]
