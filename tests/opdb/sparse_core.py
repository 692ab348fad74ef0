"""OpInfo rows for the sparse conversions and primitives (the table drives them on every layout)."""

import numpy as np

import sparsetorch as st

from ._core import ErrorInput, OpInfo, Sample, make

ALL = (st.strided, st.sparse_coo, st.sparse_csr)


def _dense_samples(dt, rg):
    return [Sample((make((4, 5), dt, rg),), name="2-D"), Sample((make((3, 2, 2), dt, rg, seed=1),), name="3-D")]


def _2d(dt, rg):
    return [Sample((make((4, 5), dt, rg),), name="2-D")]


OPS = [
    OpInfo("to_dense", lambda x: x.to_dense(), lambda x: x, _dense_samples, layouts=ALL, method="to_dense"),
    OpInfo("coalesce", lambda x: x.coalesce() if x.layout is not st.strided else x, lambda x: x,
           _dense_samples, layouts=(st.strided, st.sparse_coo)),
    OpInfo("to_sparse", lambda x: x.to_sparse().to_dense(), lambda x: x, _dense_samples, layouts=ALL),
    OpInfo("to_sparse_csr", lambda x: x.to_sparse_csr().to_dense(), lambda x: x, _2d, layouts=ALL,
           unsupported_variants={"coo-hybrid": "hybrid COO tensors .* cannot be converted to CSR"}),
    OpInfo("to_sparse_coo", lambda x: x.to_sparse_coo().to_dense(), lambda x: x, _dense_samples, layouts=ALL),
    OpInfo("sparse_mask", lambda x, m: x.sparse_mask(m).to_dense(),
           lambda x, m: np.where(m != 0, x, 0),
           lambda dt, rg: [Sample((make((4, 5), dt, rg), make((4, 5), dt).to_sparse()))],
           error_inputs=lambda: [ErrorInput(Sample((st.ones(2, 2), st.ones(2, 2))), RuntimeError,
                                            "mask is expected to be a sparse tensor")]),
    OpInfo("values_at", lambda x, p: st._ops.values_at(x, p), lambda x, p: x[p != 0],
           lambda dt, rg: [Sample((make((4, 5), dt, rg), make((4, 5), dt).to_sparse()))],
           layouts=ALL, unsupported_variants={"coo-hybrid": "sparse_dim mismatch"}),
]
