"""OpInfo rows for products with a sparse operand (mm, matmul, mv, bmm, addmm, sparse.mm with
reduce=, sparse.addmm, sparse.sampled_addmm).

Each product has one row per sparse operand (``sparse_args``): the sparse table driver turns
that argument into every COO/CSR variant and compares with the dense result; the dense drivers
run the same rows on strided inputs against NumPy. Rows whose semantics depend on *which*
entries are stored (reduce=, sampled_addmm) are CSR-only here: a hybrid COO variant stores
explicit zeros; their COO behaviour is tested by hand in ``tests/test_sparse_linalg.py``.
"""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make

SPARSE = (st.strided, st.sparse_coo, st.sparse_csr)
CSR_ONLY = (st.strided, st.sparse_csr)


def _m(*shapes):
    def samples(dtype, rg):
        return [Sample(tuple(make(s, dtype, rg, seed=i) for i, s in enumerate(shapes)),
                       name=str(shapes))]
    return samples


def _many(*cases):
    """cases: (shapes, kwargs) pairs -> samples."""
    def samples(dtype, rg):
        return [Sample(tuple(make(s, dtype, rg, seed=10 * k + i) for i, s in enumerate(shapes)),
                       dict(kw), name=str(shapes))
                for k, (shapes, kw) in enumerate(cases)]
    return samples


def _np_addmm(c, a, b, beta=1, alpha=1):
    p = alpha * (a @ b)
    return p if beta == 0 else beta * c + p


def _np_reduce(reduce):
    """torch's reduce over the *stored* (here: nonzero) entries of each row; 0 for empty rows."""
    def ref(a, x):
        out = np.zeros((a.shape[0], x.shape[1]), np.result_type(a, x))
        for i in range(a.shape[0]):
            j = np.flatnonzero(a[i])
            if j.size:
                prods = a[i, j, None] * x[j]
                out[i] = {"mean": prods.mean(0), "amax": prods.max(0), "amin": prods.min(0)}[reduce]
        return out
    return ref


def _reduce_op(reduce):
    def op(a, x):  # a dense first operand stands for its nonzero pattern
        return st.sparse.mm(a.to_sparse() if a.layout is st.strided else a, x, reduce)
    op.__name__ = f"sparse_mm_{reduce}"
    return op


def _sampled(input, mat1, mat2, **kw):
    s = input.to_sparse_csr() if input.layout is st.strided else input
    return st.sparse.sampled_addmm(s, mat1, mat2, **kw).to_dense()


def _np_sampled(input, mat1, mat2, beta=1.0, alpha=1.0):
    p = alpha * (mat1 @ mat2)
    return np.where(input != 0, p if beta == 0 else beta * input + p, 0).astype(input.dtype)


def _mm_errors():
    a = st.ones(2, 3).to_sparse()
    return [
        ErrorInput(Sample((a, st.ones(4, 5))), RuntimeError,
                   r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
        ErrorInput(Sample((a, st.ones(3, 5, dtype=st.float64))), RuntimeError,
                   r"expected m1 and m2 to have the same dtype, but got: float != double"),
        ErrorInput(Sample((st.ones(2, 3).to_sparse_csr(), st.ones(4, 5))), RuntimeError,
                   r"shapes cannot be multiplied"),
    ]


def _sparse_mm_errors():
    a = st.ones(2, 3).to_sparse_csr()
    return [
        ErrorInput(Sample((a, st.ones(3, 2), "foo")), RuntimeError,
                   r"reduce argument must be either sum, prod, mean, amax or amin, got foo"),
        ErrorInput(Sample((a, st.ones(3, 2), "prod")), RuntimeError, r"prod has not been enabled"),
        ErrorInput(Sample((st.ones(2, 3), st.ones(3, 2), "amax")), NotImplementedError,
                   r"mat1 must be a sparse"),
        ErrorInput(Sample((a, st.ones(3, 2).to_sparse(), "mean")), RuntimeError, r"Strided"),
        ErrorInput(Sample((a, st.ones(4, 2), "amax")), RuntimeError, r"cannot be multiplied"),
    ]


def _sampled_errors():
    s = st.ones(2, 3).to_sparse_csr()
    return [
        ErrorInput(Sample((s, st.ones(2, 2), st.ones(3, 3))), RuntimeError,
                   r"mat1 and mat2 shapes cannot be multiplied \(2x2 and 3x3\)"),
        ErrorInput(Sample((s, st.ones(3, 2), st.ones(2, 3))), RuntimeError,
                   r"self.shape\[-2\] must match mat1.shape\[-2\]"),
        ErrorInput(Sample((s, st.ones(2, 2, dtype=st.float64), st.ones(2, 3))), RuntimeError,
                   r"Expected mat1 and mat2 to have the same dtype, but got Double and Float"),
        ErrorInput(Sample((s, st.ones(2), st.ones(2, 3))), RuntimeError, r"mat1 to be a matrix"),
    ]


def _row(name, op, ref, samples, sparse_args, layouts=SPARSE, **kw):
    return OpInfo(name=name, op=op, ref=ref, sample_inputs=samples, dtypes=FLOATS,
                  layouts=layouts, sparse_args=sparse_args, **kw)


ADDMM = _many((((4, 3), (4, 5), (5, 3)), {}), (((4, 3), (4, 5), (5, 3)), {"beta": 0.5, "alpha": 2.0}),
              (((4, 3), (4, 5), (5, 3)), {"beta": 0}))

OPS = [
    _row("mm[sparse@dense]", st.mm, np.matmul, _m((4, 5), (5, 3)), (0,), method="mm",
         error_inputs=_mm_errors),
    _row("mm[dense@sparse]", st.mm, np.matmul, _m((3, 4), (4, 5)), (1,)),
    _row("matmul[sparse@dense]", st.matmul, np.matmul,
         _many((((4, 5), (5, 3)), {}), (((4, 5), (5,)), {}), (((2, 3, 4), (2, 4, 2)), {})), (0,),
         method="matmul"),
    _row("matmul[dense@sparse]", st.matmul, np.matmul,
         _many((((3, 4), (4, 5)), {}), (((4,), (4, 5)), {}), (((2, 3, 4), (2, 4, 2)), {})), (1,)),
    _row("mv[sparse]", st.mv, np.matmul, _m((4, 5), (5,)), (0,), method="mv"),
    _row("bmm[sparse@dense]", st.bmm, np.matmul, _m((2, 3, 4), (2, 4, 5)), (0,), method="bmm"),
    _row("bmm[dense@sparse]", st.bmm, np.matmul, _m((2, 3, 4), (2, 4, 5)), (1,)),
    _row("addmm[sparse input]", st.addmm, _np_addmm, ADDMM, (0,)),
    _row("addmm[sparse mat1]", st.addmm, _np_addmm, ADDMM, (1,)),
    _row("addmm[sparse mat2]", st.addmm, _np_addmm, ADDMM, (2,)),
    _row("sparse.mm[sparse@dense]", st.sparse.mm, np.matmul, _m((4, 5), (5, 3)), (0,),
         error_inputs=_sparse_mm_errors),
    _row("sparse.mm[dense@sparse]", st.sparse.mm, np.matmul, _m((3, 4), (4, 5)), (1,)),
    _row("sparse.mm[mean]", _reduce_op("mean"), _np_reduce("mean"), _m((5, 4), (4, 3)), (0,),
         layouts=CSR_ONLY),
    _row("sparse.mm[amax]", _reduce_op("amax"), _np_reduce("amax"), _m((5, 4), (4, 3)), (0,),
         layouts=CSR_ONLY),
    _row("sparse.mm[amin]", _reduce_op("amin"), _np_reduce("amin"), _m((5, 4), (4, 3)), (0,),
         layouts=CSR_ONLY),
    _row("sparse.addmm", st.sparse.addmm, _np_addmm, ADDMM, (1,)),
    _row("sparse.sampled_addmm", _sampled, _np_sampled,
         _many((((4, 5), (4, 3), (3, 5)), {}), (((4, 5), (4, 3), (3, 5)), {"beta": 0.5, "alpha": 2.0}),
               (((4, 5), (4, 3), (3, 5)), {"beta": 0})),
         (0,), layouts=CSR_ONLY),
    # the public function's own errors (the row above wraps it for dense inputs)
    OpInfo(name="sparse.sampled_addmm[errors]", op=st.sparse.sampled_addmm, ref=None,
           sample_inputs=lambda dtype, rg: [], supports_autograd=False,
           error_inputs=_sampled_errors),
]
