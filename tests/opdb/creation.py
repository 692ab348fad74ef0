"""OpInfo rows for creation and conversion ops (clone, to, copy_/fill_/zero_, factories)."""

import numpy as np

import sparsetorch as st

from ._core import INTS, ErrorInput, OpInfo, Sample, make

SHAPES = [(), (5,), (3, 4), (2, 3, 2)]


def _unary_samples(dtype, rg):
    return [Sample((make(s, dtype, rg, seed=i),), name=str(s)) for i, s in enumerate(SHAPES)]


def _not_a_tensor(name):
    def errors():
        return [ErrorInput(Sample(([1.0, 2.0],)), TypeError, "must be a Tensor")]

    return errors


# ---- functional forms of the in-place fills (the table's in-place driver compares them) ----


def copy_to(input, src):
    """What ``input.copy_(src)`` writes: ``src`` broadcast to ``input``'s shape and dtype."""
    return src.expand_as(input).to(input.dtype, copy=True)


def _copy_samples(dtype, rg):
    return [
        Sample((make((3, 4), dtype, False, seed=1), make((3, 4), dtype, rg, seed=2)), name="same"),
        Sample((make((3, 4), dtype, False, seed=3), make((4,), dtype, rg, seed=4)), name="bcast"),
        Sample((make((2, 3), dtype, False, seed=5), make((), dtype, rg, seed=6)), name="0-d"),
    ]


def _copy_errors():
    return [ErrorInput(Sample((st.zeros(3), st.ones(2))), RuntimeError, "size|shape")]


def _fill_samples(dtype, rg):
    return [Sample((make(s, dtype, False, seed=i), 2.5), name=str(s)) for i, s in enumerate(SHAPES)]


def _to_samples(dtype, rg):
    return [
        Sample((make(s, dtype, rg, seed=i), st.float64), {"copy": True}, name=str(s))
        for i, s in enumerate(SHAPES)
    ]


def _to_errors():
    x = st.ones(2)
    return [
        ErrorInput(Sample((x, "cpu", "cpu")), TypeError, "invalid combination"),
        ErrorInput(Sample((x, st.float64), {"foo": 1}), TypeError, "invalid combination"),
    ]


# ---- factories: samples carry the dtype as a keyword ----


def _factory(name, op, args, ref, errors, dtypes=(st.float32, st.float64)):
    def samples(dtype, rg):
        return [Sample(a, {"dtype": dtype}, name=str(a)) for a in args]

    def ref_fn(*a, dtype):
        return ref(*a).astype(dtype.np)

    return OpInfo(
        name=name,
        op=op,
        ref=ref_fn,
        sample_inputs=samples,
        dtypes=dtypes,
        supports_autograd=False,
        error_inputs=errors,
        keeps_float32=True,
    )


def _arange_errors():
    return [
        ErrorInput(Sample((0, 10, 0)), RuntimeError, "step must be nonzero"),
        ErrorInput(Sample((0, 10, -1)), RuntimeError, "inconsistent with step sign"),
        ErrorInput(Sample(("a",)), TypeError, "must be Number"),
        ErrorInput(Sample((0, float("inf"))), RuntimeError, "unsupported range"),
    ]


def _linspace_errors():
    return [
        ErrorInput(Sample((0, 1, -1)), RuntimeError, "non-negative"),
        ErrorInput(Sample((0, 1, 2.0)), TypeError, "steps"),
    ]


def _size_errors(fn):
    def errors():
        return [
            ErrorInput(Sample((2, -3)), RuntimeError, "negative dimension"),
            ErrorInput(Sample((2.0,)), TypeError, "size"),
            ErrorInput(Sample((2,), {"dtype": "float32"}), TypeError, "dtype"),
        ]

    return errors


def _full_errors():
    return [
        ErrorInput(Sample((2, 1.0)), TypeError, "size"),
        ErrorInput(Sample(((2,), "a")), TypeError, "fill_value"),
        ErrorInput(Sample(((2,), 300), {"dtype": st.uint8}), RuntimeError, "overflow"),
    ]


def _eye_errors():
    return [
        ErrorInput(Sample((-1,)), RuntimeError, "n must be greater or equal to 0"),
        ErrorInput(Sample((2.0,)), TypeError, "'n'"),
    ]


def _tri_errors():
    return [ErrorInput(Sample((-1, 2)), RuntimeError, "row must be non-negative"),
            ErrorInput(Sample((2, -1)), RuntimeError, "col must be non-negative")]


def _pair_samples(dtype, rg):
    """Two real tensors of one dtype (complex / polar build a complex tensor from them; the
    first is positive: polar's abs, where torch's formula uses sgn(result))."""
    return [Sample((make((3, 4), dtype, rg, seed=1, positive=True), make((3, 4), dtype, rg, seed=2)), name="2d"),
            Sample((make((), dtype, rg, seed=3, positive=True), make((), dtype, rg, seed=4)), name="0-d")]


def _pair_errors(op):
    def errors():
        return [ErrorInput(Sample((st.ones(2), st.ones(2, dtype=st.float64))), RuntimeError,
                           "Expected object of scalar type Float but got scalar type Double"),
                ErrorInput(Sample((st.ones(2, dtype=st.int64), st.ones(2, dtype=st.int64))), RuntimeError,
                           "Expected both inputs to be Half, Float or Double tensors")]
    return errors


OPS = [
    OpInfo(
        name="clone",
        op=st.clone,
        ref=np.copy,
        sample_inputs=_unary_samples,
        error_inputs=_not_a_tensor("clone"),
        method="clone",
    ),
    OpInfo(
        name="contiguous",
        op=st._ops.contiguous,
        ref=lambda a: np.array(a, order="C"),
        sample_inputs=_unary_samples,
        error_inputs=_not_a_tensor("contiguous"),
        method="contiguous",
    ),
    OpInfo(
        name="to",
        op=st._ops.to,
        ref=lambda a, d, copy: a.astype(d.np),
        sample_inputs=_to_samples,
        error_inputs=_to_errors,
        method="to",
        keeps_float32=False,
    ),
    OpInfo(
        name="copy_",
        op=copy_to,
        ref=lambda a, b: np.broadcast_to(b, a.shape).astype(a.dtype),
        sample_inputs=_copy_samples,
        error_inputs=_copy_errors,
        inplace="copy_",
    ),
    OpInfo(
        name="fill_",
        op=lambda input, value: st.full_like(input, value),
        ref=lambda a, v: np.full_like(a, v),
        sample_inputs=_fill_samples,
        inplace="fill_",
        supports_autograd=False,
    ),
    OpInfo(
        name="zero_",
        op=st.zeros_like,
        ref=np.zeros_like,
        sample_inputs=_unary_samples,
        inplace="zero_",
        supports_autograd=False,
        error_inputs=_not_a_tensor("zeros_like"),
    ),
    _factory(
        "arange",
        st.arange,
        [(5,), (1, 2.5, 0.5), (10, 0, -3), (-1.5, 3.2, 0.7)],
        np.arange,
        _arange_errors,
    ),
    _factory(
        "linspace",
        st.linspace,
        [(0, 1, 5), (-2.5, 7.1, 11), (3, -1, 4), (0, 1, 1)],
        np.linspace,
        _linspace_errors,
    ),
    _factory(
        "zeros",
        st.zeros,
        [(2, 3), ((4,),), ([],)],
        lambda *s: np.zeros(s[0] if len(s) == 1 else s),
        _size_errors(st.zeros),
    ),
    _factory(
        "ones",
        st.ones,
        [(2, 3), ((4,),)],
        lambda *s: np.ones(s[0] if len(s) == 1 else s),
        _size_errors(st.ones),
    ),
    _factory(
        "full", st.full, [((2, 3), 1.5), ((4,), -2)], lambda s, v: np.full(s, v), _full_errors
    ),
    _factory("eye", st.eye, [(3,), (2, 4), (0,)], np.eye, _eye_errors),
    _factory("logspace", st.logspace, [(0, 2, 5), (-1, 1.5, 3), (0, 3, 4, 2.0), (1, 1, 0)],
             lambda start, end, steps, base=10.0: np.logspace(start, end, steps, base=base),
             lambda: [ErrorInput(Sample((0, 2, -1)), RuntimeError, "non-negative")]),
    _factory("tril_indices", st.tril_indices, [(3, 3), (3, 4, 1), (4, 2, -1), (0, 3)],
             lambda r, c, k=0: np.stack(np.tril_indices(r, k, c)), _tri_errors,
             dtypes=INTS),
    _factory("triu_indices", st.triu_indices, [(3, 3), (3, 4, 1), (4, 2, -1), (0, 3)],
             lambda r, c, k=0: np.stack(np.triu_indices(r, k, c)), _tri_errors,
             dtypes=INTS),
    _factory("scalar_tensor", st.scalar_tensor, [(2.5,), (-3,), (True,)], np.asarray,
             lambda: [ErrorInput(Sample(("a",)), TypeError, "must be Number")]),
    OpInfo("ones_like", st.ones_like, np.ones_like, _unary_samples, supports_autograd=False,
           error_inputs=_not_a_tensor("ones_like")),
    OpInfo("full_like", st.full_like, np.full_like, _fill_samples, supports_autograd=False,
           error_inputs=lambda: [ErrorInput(Sample(([1.0], 2.0)), TypeError, "must be a Tensor")]),
    OpInfo("complex", st.complex, lambda re, im: re + 1j * im, _pair_samples, error_inputs=_pair_errors(st.complex)),
    OpInfo("polar", st.polar, lambda r, th: r * np.exp(1j * th), _pair_samples, error_inputs=_pair_errors(st.polar)),
]
