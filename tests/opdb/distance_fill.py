"""Op-table rows for ``pdist`` (``_ops/distance.py``) and ``Tensor.fill_diagonal_``
(``_ops/tensor_inplace.py``)."""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make


def _np_pdist(a, p=2):
    i, j = np.triu_indices(a.shape[0], 1)
    d = np.abs(a[i] - a[j])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if np.isinf(p):
        return d.max(-1) if d.shape[-1] else d.sum(-1)
    return ((d ** p).sum(-1) ** (1.0 / p)).astype(a.dtype)


def _pdist_samples(dtype, rg):
    a = make((5, 3), dtype, rg)
    out = [Sample((a,)), Sample((a, 1), name="p1"), Sample((a, 3.0), name="p3"),
           Sample((a, 1.5), name="p1.5"), Sample((make((1, 4), dtype, rg),), name="one_row")]
    if not rg:  # non-smooth norms: values only
        out += [Sample((a, 0), name="p0"), Sample((a, float("inf")), name="pinf"),
                Sample((a, 0.5), name="p0.5")]
    return out


def _pdist_errors():
    return [ErrorInput(Sample((st.ones(2, 3, 4),)), RuntimeError, r"only supports 2D tensors, got: 3D"),
            ErrorInput(Sample((st.ones(3, 2), -1.0)), RuntimeError, r"non-negative p values"),
            ErrorInput(Sample((st.ones(3, 2, dtype=st.int64),)), RuntimeError, r"floating-point"),
            ErrorInput(Sample(([1.0, 2.0],)), TypeError, r"must be a Tensor")]


def fill_diagonal(input, fill_value, wrap=False):
    """Functional form of ``Tensor.fill_diagonal_`` for the table."""
    return input.clone().fill_diagonal_(fill_value, wrap)


def _np_fill_diagonal(a, v, wrap=False):
    out = a.copy()
    np.fill_diagonal(out, v, wrap=wrap)
    return out


def _fill_diag_samples(dtype, rg):
    return [Sample((make((4, 4), dtype, rg), 2)), Sample((make((6, 3), dtype, rg), -1)),
            Sample((make((7, 3), dtype, rg), 5, True), name="wrap_tall"),
            Sample((make((3, 6), dtype, rg), 1, True), name="wrap_wide"),
            Sample((make((3, 3, 3), dtype, rg), 0), name="3d")]


def _fill_diag_errors():
    return [ErrorInput(Sample((st.ones(3), 1)), RuntimeError, r"dimensions must larger than 1"),
            ErrorInput(Sample((st.ones(3, 3, 2), 1)), RuntimeError,
                       r"all dimensions of input must be of equal length"),
            ErrorInput(Sample((st.ones(2, 2), "a")), TypeError, r"'fill_value' .* must be Number"),
            ErrorInput(Sample((st.zeros(2, 2, dtype=st.uint8), 300)), RuntimeError, r"overflow")]


OPS = [
    OpInfo("pdist", st.pdist, _np_pdist, _pdist_samples, FLOATS, True, _pdist_errors),
    OpInfo("fill_diagonal_", fill_diagonal, _np_fill_diagonal, _fill_diag_samples,
           FLOATS + INTS, True, _fill_diag_errors, inplace="fill_diagonal_"),
]
