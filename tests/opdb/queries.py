"""OpInfo rows for the ops that answer with a Python value (``numel``, the dtype predicates,
``is_nonzero``, ``is_same_size``, ``allclose``, ``equal``, ``is_pinned``), for ``detach`` and
``conj_physical``, and for ``pin_memory`` (``_ops/predicates.py``, ``_ops/pinning.py``).

``pin_memory`` copies a CPU tensor into page-locked memory, which needs CUDA: where CUDA is
available (a GPU, or ``SPARSETORCH_FAKE_CUDA``) its row compares the copy and checks gradients on
every layout; without it the row checks torch's RuntimeError for dense, COO and CSR input.
"""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make

ALL = FLOATS + INTS + (st.bool,)
SP = (st.strided, st.sparse_coo, st.sparse_csr)
CPLX = (st.complex64, st.complex128)
SHAPES = ((3, 4), (5,), (2, 3, 2))
_CAN_PIN = st.cuda.is_available()  # page-locked memory needs CUDA (torch's CPU build raises too)


def _samples(dtype, rg):
    return [Sample((make(s, dtype, rg, seed=i),), name=str(s)) for i, s in enumerate(SHAPES)]


def _not_a_tensor(*extra):
    def errors():
        return [ErrorInput(Sample(([1.0, 2.0], *extra)), TypeError, "must be a Tensor")]

    return errors


def _pairs(dtype, rg):
    a = make((3, 4), dtype, rg)
    return [Sample((a, a.clone()), name="same"),
            Sample((a, make((3, 4), dtype, rg, seed=1)), name="other values"),
            Sample((a, make((4,), dtype, rg, seed=2)), name="broadcast"),
            Sample((make((2, 1), dtype, rg, seed=3), make((2, 3), dtype, rg, seed=4)), name="shapes")]


def _one_element(dtype, rg):
    return [Sample((make(s, dtype, rg, seed=i),), name=str(s)) for i, s in enumerate(((), (1,), (1, 1)))] + [
        Sample((st.zeros((1,), dtype=dtype),), name="zero")]


def _nonzero_errors():
    return [ErrorInput(Sample((st.ones(2),)), RuntimeError, "more than one value is ambiguous"),
            ErrorInput(Sample((st.ones(0),)), RuntimeError, "no values is ambiguous"),
            ErrorInput(Sample(([1.0],)), TypeError, "must be a Tensor")]


def _equal_ref(a, b):
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _pin_errors():
    errs = [ErrorInput(Sample(([1.0, 2.0],)), TypeError, "must be a Tensor")]
    if _CAN_PIN:  # a CUDA tensor cannot be pinned (torch's message)
        errs.append(ErrorInput(Sample((st.ones(2, device="cuda"),)), RuntimeError,
                               "only dense CPU tensors can be pinned"))
    else:  # no page-locked allocator: torch's CPU build refuses every layout
        d = st.ones(2, 2)
        errs += [ErrorInput(Sample((t,)), RuntimeError, "Cannot access accelerator device")
                 for t in (d, d.to_sparse(), d.to_sparse_csr())]
    return errs


OPS = [
    OpInfo("numel", st.numel, np.size, _samples, ALL, False, _not_a_tensor(), method="numel",
           layouts=SP),
    OpInfo("is_floating_point", st.is_floating_point, lambda a: a.dtype.kind == "f", _samples,
           ALL + CPLX, False, _not_a_tensor(), method="is_floating_point", layouts=SP),
    OpInfo("is_complex", st.is_complex, lambda a: a.dtype.kind == "c", _samples, ALL + CPLX, False,
           _not_a_tensor(), method="is_complex", layouts=SP),
    OpInfo("is_nonzero", st.is_nonzero, lambda a: bool(a.reshape(-1)[0] != 0), _one_element, ALL,
           False, _nonzero_errors, method="is_nonzero"),
    OpInfo("is_same_size", st.is_same_size, lambda a, b: a.shape == b.shape, _pairs, ALL, False,
           _not_a_tensor(st.ones(2)), method="is_same_size", layouts=SP),
    OpInfo("allclose", st.allclose, lambda a, b: bool(np.allclose(a, b)), _pairs, FLOATS, False,
           lambda: [ErrorInput(Sample((st.ones(2), st.ones(3))), RuntimeError, "must match the size"),
                    ErrorInput(Sample((st.ones(2), st.ones(2, dtype=st.float64))), RuntimeError,
                               "^Float did not match Double")],
           method="allclose"),
    OpInfo("equal", st.equal, _equal_ref, _pairs, ALL, False, _not_a_tensor(st.ones(2)),
           method="equal"),
    OpInfo("is_pinned", st._ops._is_pinned, lambda a: False, _samples, ALL, False,
           _not_a_tensor(), method="is_pinned", layouts=SP),
    OpInfo("detach", st.detach, lambda a: a, _samples, ALL, False, _not_a_tensor(), method="detach",
           layouts=SP),
    OpInfo("conj_physical", st.conj_physical, np.conj, _samples, CPLX + FLOATS, True,
           _not_a_tensor(), method="conj_physical"),
    OpInfo("pin_memory", st._ops._pin_memory, (lambda a: a) if _CAN_PIN else None, _samples, ALL,
           _CAN_PIN, _pin_errors, method="pin_memory" if _CAN_PIN else None,
           layouts=SP if _CAN_PIN else (st.strided,)),
]
