"""OpInfo rows for elementwise ops."""

import numpy as np
import scipy.special as sps

import sparsetorch as st

from ._core import ErrorInput, OpInfo, Sample, make

SHAPES = [(), (5,), (3, 4), (2, 3, 2)]
SP = (st.strided, st.sparse_coo, st.sparse_csr)  # zero-preserving ops: the sparse table runs them too


def _unary_samples(positive=False, low=-3.0, high=3.0):
    def samples(dtype, rg):
        return [Sample((make(s, dtype, rg, low=low, high=high, positive=positive, seed=i),), name=str(s))
                for i, s in enumerate(SHAPES)]
    return samples


def _unary_errors(op):
    def errors():
        return [ErrorInput(Sample(([1.0, 2.0],)), TypeError, "must be a Tensor")]
    return errors


def U(name, ref, *, positive=False, low=-3.0, high=3.0, grad=True, method=None, inplace=True, dtypes=None,
      **kw):
    op = getattr(st, name)
    return OpInfo(
        name=name, op=op, ref=ref, sample_inputs=_unary_samples(positive, low, high),
        supports_autograd=grad, error_inputs=_unary_errors(op), method=method or name,
        inplace=(name + "_") if inplace else None, dtypes=dtypes or (st.float32, st.float64), **kw,
    )


def _binary_samples(positive_other=False, nonzero_other=False):
    def samples(dtype, rg):
        def other(s, seed):
            t = make(s, dtype, rg, positive=positive_other or nonzero_other, seed=seed)
            return t
        return [
            Sample((make((3, 4), dtype, rg, seed=1), other((3, 4), 2)), name="same"),
            Sample((make((3, 4), dtype, rg, seed=3), other((4,), 4)), name="broadcast-row"),
            Sample((make((2, 1, 4), dtype, rg, seed=5), other((3, 1), 6)), name="broadcast-both"),
            Sample((make((5,), dtype, rg, seed=7), 2.5 if not nonzero_other else 2.5), name="scalar"),
            Sample((make((), dtype, rg, seed=8), other((), 9)), name="0-d"),
        ]
    return samples


def _binary_errors(op):
    def errors():
        a, b = st.ones(2, 3), st.ones(4)
        return [
            ErrorInput(Sample((a, b)), RuntimeError, r"size|shape|broadcast"),
            ErrorInput(Sample((a, "x")), TypeError, "must be a Tensor or a Python number"),
        ]
    return errors


def B(name, ref, *, positive_other=False, nonzero_other=False, grad=True, inplace=True, method=None,
      **kw):
    op = getattr(st, name)
    return OpInfo(
        name=name, op=op, ref=ref, sample_inputs=_binary_samples(positive_other, nonzero_other),
        supports_autograd=grad, error_inputs=_binary_errors(op), method=method or name,
        inplace=(name + "_") if inplace else None, **kw,
    )


def _pos(f):
    return f


def _without(name, samples):
    return lambda dtype, rg: [s for s in samples(dtype, rg) if s.name != name]


OPS = [
    U("abs", np.abs, low=-3, high=3, layouts=SP),
    U("neg", np.negative, layouts=SP),
    U("sign", np.sign, layouts=SP),
    U("sgn", np.sign, layouts=SP),
    U("square", np.square, layouts=SP),
    U("relu", lambda x: np.maximum(x, 0), layouts=SP),
    U("ceil", np.ceil, layouts=SP), U("floor", np.floor, layouts=SP), U("trunc", np.trunc, layouts=SP),
    U("frac", lambda x: x - np.trunc(x), layouts=SP),
    U("sqrt", np.sqrt, positive=True, layouts=SP),
    U("rsqrt", lambda x: 1 / np.sqrt(x), positive=True),
    U("exp", np.exp), U("exp2", np.exp2), U("expm1", np.expm1, layouts=SP),
    U("log", np.log, positive=True), U("log2", np.log2, positive=True), U("log10", np.log10, positive=True),
    U("log1p", np.log1p, positive=True, layouts=SP),
    U("sin", np.sin, layouts=SP), U("cos", np.cos), U("tan", np.tan, low=-1.2, high=1.2, layouts=SP),
    U("asin", np.arcsin, low=-0.9, high=0.9, layouts=SP), U("acos", np.arccos, low=-0.9, high=0.9),
    U("atan", np.arctan, layouts=SP),
    U("sinh", np.sinh, layouts=SP), U("cosh", np.cosh), U("tanh", np.tanh, layouts=SP),
    U("asinh", np.arcsinh, layouts=SP), U("acosh", np.arccosh, low=1.2, high=4.0),
    U("atanh", np.arctanh, low=-0.9, high=0.9, layouts=SP),
    U("sigmoid", sps.expit), U("reciprocal", lambda x: 1 / x, positive=True),
    U("erf", sps.erf, layouts=SP), U("erfc", sps.erfc), U("erfinv", sps.erfinv, low=-0.9, high=0.9, layouts=SP),
    U("lgamma", sps.gammaln, positive=True), U("digamma", sps.digamma, positive=True),
    U("deg2rad", np.deg2rad, layouts=SP), U("rad2deg", np.rad2deg, layouts=SP), U("sinc", np.sinc),
    U("isnan", np.isnan, grad=False, inplace=False, layouts=SP),
    U("isinf", np.isinf, grad=False, inplace=False, layouts=SP),
    U("isposinf", np.isposinf, grad=False, inplace=False, layouts=SP),
    U("isneginf", np.isneginf, grad=False, inplace=False, layouts=SP),
    U("isfinite", np.isfinite, grad=False, inplace=False),
    U("signbit", np.signbit, grad=False, inplace=False, layouts=SP),
    U("logical_not", np.logical_not, grad=False, inplace=False),
    OpInfo("clamp", st.clamp, lambda x, a, b: np.clip(x, a, b),
           lambda dt, rg: [Sample((make((3, 4), dt, rg), -1.0, 1.5)), Sample((make((5,), dt, rg, seed=2), None, 0.5)),
                           Sample((make((5,), dt, rg, seed=3), -0.5, None))],
           method="clamp", inplace="clamp_", layouts=SP,
           error_inputs=lambda: [ErrorInput(Sample((st.ones(3), None, None)), RuntimeError, "At least one of 'min' or 'max'")]),
    OpInfo("pow_scalar", st.pow, np.power,
           lambda dt, rg: [Sample((make((3, 4), dt, rg, positive=True), 2.5)), Sample((make((4,), dt, rg, seed=1), 2)),
                           Sample((make((4,), dt, rg, seed=2), 3)), Sample((make((), dt, rg, positive=True, seed=3), 0.5))],
           method="pow", inplace="pow_", layouts=SP),
    OpInfo("round", st.round, np.round,
           lambda dt, rg: [Sample((make((3, 4), dt, rg),)), Sample((make((3, 4), dt, rg, seed=1),), {"decimals": 1})],
           method="round", inplace="round_", layouts=SP),
    OpInfo("nan_to_num", st.nan_to_num, np.nan_to_num,
           lambda dt, rg: [Sample((make((3, 4), dt, rg),))], method="nan_to_num", inplace="nan_to_num_",
           layouts=SP),
    B("add", np.add), B("sub", np.subtract), B("mul", np.multiply, layouts=SP),
    B("div", np.true_divide, nonzero_other=True, layouts=SP),
    # sparse ± dense is dense; sparse ± a nonzero scalar raises, so these rows drop that sample
    OpInfo("add.sparse", st.add, np.add, _without("scalar", _binary_samples()), layouts=SP),
    OpInfo("sub.sparse", st.sub, np.subtract, _without("scalar", _binary_samples()), layouts=SP),
    B("atan2", np.arctan2, nonzero_other=True),
    B("maximum", np.maximum, inplace=False), B("minimum", np.minimum, inplace=False),
    B("fmax", np.fmax, inplace=False), B("fmin", np.fmin, inplace=False),
    B("hypot", np.hypot, nonzero_other=True),
    B("logaddexp", np.logaddexp, inplace=False),
    B("remainder", np.remainder, nonzero_other=True, grad=False),
    B("fmod", np.fmod, nonzero_other=True, grad=False),
    B("eq", np.equal, grad=False), B("ne", np.not_equal, grad=False), B("lt", np.less, grad=False),
    B("le", np.less_equal, grad=False), B("gt", np.greater, grad=False), B("ge", np.greater_equal, grad=False),
    B("logical_and", np.logical_and, grad=False), B("logical_or", np.logical_or, grad=False),
    B("logical_xor", np.logical_xor, grad=False),
    OpInfo("pow_tensor", st.pow, np.power,
           lambda dt, rg: [Sample((make((3, 4), dt, rg, positive=True), make((3, 4), dt, rg, seed=2))),
                           Sample((make((3, 4), dt, rg, positive=True, seed=3), make((4,), dt, rg, seed=4)))],
           method="pow", inplace="pow_"),
    OpInfo("where", st.where, lambda c, a, b: np.where(c, a, b),
           lambda dt, rg: [Sample((make((3, 4), st.bool, seed=1), make((3, 4), dt, rg, seed=2), make((3, 4), dt, rg, seed=3))),
                           Sample((make((3, 4), st.bool, seed=4), make((4,), dt, rg, seed=5), 0.0))],
           error_inputs=lambda: [ErrorInput(Sample((st.ones(3), st.ones(3), st.ones(3))), RuntimeError,
                                            "condition to be a boolean")]),
    OpInfo("lerp", st.lerp, lambda a, b, w: a + w * (b - a),
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=1), 0.3))],
           method="lerp", inplace="lerp_"),
    OpInfo("addcmul", st.addcmul, lambda a, b, c, value=1: a + value * b * c,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=1), make((4,), dt, rg, seed=2)),
                                  {"value": 0.5})],
           method="addcmul", inplace="addcmul_"),
    OpInfo("addcdiv", st.addcdiv, lambda a, b, c, value=1: a + value * b / c,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=1), make((4,), dt, rg, seed=2, positive=True)),
                                  {"value": 0.5})],
           method="addcdiv", inplace="addcdiv_"),
    OpInfo("bitwise_and", st.bitwise_and, np.bitwise_and,
           lambda dt, rg: [Sample((make((3, 4), dt, seed=1), make((3, 4), dt, seed=2)))],
           dtypes=(st.int64, st.int32, st.bool), supports_autograd=False, method="bitwise_and",
           inplace="bitwise_and_",
           error_inputs=lambda: [ErrorInput(Sample((st.ones(3), st.ones(3))), RuntimeError, "only integer and bool")]),
    OpInfo("add_int", st.add, np.add,
           lambda dt, rg: [Sample((make((3, 4), dt, seed=1), make((4,), dt, seed=2))), Sample((make((3,), dt, seed=3), 2))],
           dtypes=(st.int64, st.int32, st.int16, st.uint8), supports_autograd=False, method="add", inplace="add_"),
]


def _ints(dt, *shapes):
    return tuple(make(s, dt, seed=i, low=-5, high=5) for i, s in enumerate(shapes))


OPS += [
    OpInfo("bitwise_not", st.bitwise_not, np.invert, lambda dt, rg: [Sample(_ints(dt, (3, 4)))],
           dtypes=(st.int64, st.int32, st.bool), supports_autograd=False, method="bitwise_not",
           inplace="bitwise_not_",
           error_inputs=lambda: [ErrorInput(Sample((st.ones(3),)), RuntimeError, "only integer and bool")]),
    OpInfo("bitwise_or", st.bitwise_or, np.bitwise_or, lambda dt, rg: [Sample(_ints(dt, (3, 4), (4,)))],
           dtypes=(st.int64, st.int32, st.bool), supports_autograd=False, method="bitwise_or"),
    OpInfo("bitwise_xor", st.bitwise_xor, np.bitwise_xor, lambda dt, rg: [Sample(_ints(dt, (3, 4), (4,)))],
           dtypes=(st.int64, st.int32, st.bool), supports_autograd=False, method="bitwise_xor"),
    OpInfo("floor_divide", st.floor_divide, np.floor_divide,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=2, positive=True)))],
           supports_autograd=False, method="floor_divide", inplace="floor_divide_"),
    OpInfo("angle", st.angle, np.angle, _unary_samples(), method="angle"),
    OpInfo("isreal", st.isreal, np.isreal, _unary_samples(), supports_autograd=False, method="isreal"),
    OpInfo("conj", st.conj, np.conj, _unary_samples(), method="conj"),
    OpInfo("polygamma", lambda x, n=1: st.polygamma(n, x), lambda x, n=1: sps.polygamma(n, x),
           lambda dt, rg: [Sample((make((3, 4), dt, rg, positive=True),), {"n": 1}),
                           Sample((make((5,), dt, rg, positive=True, seed=3),), {"n": 2})]),
    OpInfo("clamp_min", st.clamp_min, np.maximum, lambda dt, rg: [Sample((make((3, 4), dt, rg), 0.5))],
           method="clamp_min", inplace="clamp_min_"),
    OpInfo("clamp_max", st.clamp_max, np.minimum, lambda dt, rg: [Sample((make((3, 4), dt, rg), 0.5))],
           method="clamp_max", inplace="clamp_max_"),
    OpInfo("logit", st.logit, lambda x, eps=None: sps.logit(np.clip(x, eps, 1 - eps) if eps else x),
           lambda dt, rg: [Sample((make((3, 4), dt, rg, low=0.1, high=0.9),)),
                           Sample((make((5,), dt, rg, low=0.1, high=0.9, seed=2),), {"eps": 0.2})],
           method="logit", inplace="logit_"),
    OpInfo("xlogy", st.xlogy, sps.xlogy,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=2, positive=True)))],
           method="xlogy", inplace="xlogy_"),
    OpInfo("copysign", st.copysign, np.copysign,
           lambda dt, rg: [Sample((make((3, 4), dt, rg, positive=True), make((3, 4), dt, rg, seed=2)))],
           method="copysign", inplace="copysign_"),
    OpInfo("heaviside", st.heaviside, np.heaviside,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg, seed=2)))],
           supports_autograd=False, method="heaviside"),
    OpInfo("float_power", st.float_power, lambda a, b: np.power(a.astype(np.float64), b),
           lambda dt, rg: [Sample((make((3, 4), dt, rg, positive=True), 1.5))],
           method="float_power", keeps_float32=False),
    OpInfo("isclose", st.isclose, np.isclose,
           lambda dt, rg: [Sample((make((3, 4), dt, rg), make((3, 4), dt, rg)))],
           supports_autograd=False, method="isclose"),
]
