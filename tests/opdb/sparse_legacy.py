"""OpInfo rows for torch's older sparse products: spmm, smm, hspmm, sspaddmm.

``smm``/``hspmm``/``sspaddmm`` take a COO matrix and return one; the rows wrap them so a strided
sample is converted first and the result densified (the dense drivers compare arrays), and the
sparse driver feeds every COO variant. The sparse results themselves (pattern, hybrid shape,
uncoalesced order) are compared with torch in ``tests/test_legacy_tensors.py``. CSR and
hybrid COO operands are refused (as torch) and listed as unsupported variants.
"""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make

COO_ONLY = (st.strided, st.sparse_coo)
REFUSED = {"coo-hybrid": r"matrices expected"}


def _coo(x):
    return x.to_sparse() if x.layout is st.strided else x


def _hspmm(a, x):
    return st.hspmm(_coo(a), x).to_dense()


def _smm(a, x):
    return st.smm(_coo(a), x).to_dense()


def _sspaddmm(c, a, x, **kw):
    return st.sspaddmm(_coo(c), _coo(a), x, **kw).to_dense()


def _np_addmm(c, a, b, beta=1, alpha=1):
    return beta * c + alpha * (a @ b)


def _m(*shapes):
    def samples(dtype, rg):
        args = tuple(make(s, dtype, rg, seed=i) for i, s in enumerate(shapes))
        return [Sample(args, name=str(shapes))]
    return samples


def _addmm_samples(dtype, rg):
    shapes = ((4, 3), (4, 5), (5, 3))
    return [Sample(tuple(make(s, dtype, rg, seed=10 * k + i) for i, s in enumerate(shapes)),
                   kw, str(kw))
            for k, kw in enumerate(({}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0}))]


def _errors():
    s = st.ones(2, 3).to_sparse()
    return [
        ErrorInput(Sample((s, st.ones(2, 2))), RuntimeError, r"Expected dim 0 size 3, got 2"),
        ErrorInput(Sample((s, st.ones(3, 2, dtype=st.float64))), RuntimeError,
                   r"expected scalar type Float but found Double"),
        ErrorInput(Sample((s, st.ones(3, 2).to_sparse())), RuntimeError,
                   r"expected 'mat2' to have strided layout"),
        ErrorInput(Sample((st.ones(2, 3).to_sparse(1), st.ones(3, 2))), RuntimeError,
                   r"matrices expected"),
    ]


def _sspaddmm_errors():
    s = st.ones(2, 3).to_sparse()
    c = st.ones(2, 2).to_sparse()
    return [
        ErrorInput(Sample((st.ones(2, 2), s, st.ones(3, 2))), RuntimeError,
                   r"expected 'input' to have sparse layout"),
        ErrorInput(Sample((c, st.ones(2, 3), st.ones(3, 2))), RuntimeError,
                   r"expected 'mat1' to have sparse layout"),
        ErrorInput(Sample((st.ones(3, 2).to_sparse(), s, st.ones(3, 2))), RuntimeError,
                   r"Argument #1: Expected dim 0 size 2, got 3"),
        ErrorInput(Sample((c.double(), s, st.ones(3, 2))), RuntimeError, r"must match dtype"),
    ]


OPS = [
    OpInfo(name="spmm", op=st.spmm, ref=np.matmul, sample_inputs=_m((4, 5), (5, 3)),
           dtypes=FLOATS, layouts=(st.strided, st.sparse_coo, st.sparse_csr)),
    OpInfo(name="hspmm", op=_hspmm, ref=np.matmul, sample_inputs=_m((4, 5), (5, 3)),
           dtypes=FLOATS, layouts=COO_ONLY, unsupported_variants=REFUSED),
    OpInfo(name="smm", op=_smm, ref=np.matmul, sample_inputs=_m((4, 5), (5, 3)),
           dtypes=FLOATS, layouts=COO_ONLY, unsupported_variants=REFUSED),
    OpInfo(name="sspaddmm", op=_sspaddmm, ref=_np_addmm, sample_inputs=_addmm_samples,
           dtypes=FLOATS, layouts=COO_ONLY, sparse_args=(0, 1), unsupported_variants=REFUSED),
    # the public functions' own errors (the rows above wrap them for dense samples)
    OpInfo(name="hspmm[errors]", op=st.hspmm, ref=None, sample_inputs=lambda dtype, rg: [],
           supports_autograd=False, error_inputs=_errors),
    OpInfo(name="smm[errors]", op=st.smm, ref=None, sample_inputs=lambda dtype, rg: [],
           supports_autograd=False, error_inputs=_errors),
    OpInfo(name="sspaddmm[errors]", op=st.sspaddmm, ref=None, sample_inputs=lambda dtype, rg: [],
           supports_autograd=False, error_inputs=_sspaddmm_errors),
]
