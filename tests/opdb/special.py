"""OpInfo rows for the special functions of ``_ops/special_fns.py`` (``torch.special``)."""

import numpy as np
import scipy.special as sps

import sparsetorch as st

from ._core import ErrorInput, OpInfo, Sample, make

SHAPES = [(), (5,), (3, 4), (2, 3, 2)]
SP = (st.strided, st.sparse_coo, st.sparse_csr)  # zero-preserving: the sparse table runs them too


def _unary_samples(low, high):
    def samples(dtype, rg):
        return [Sample((make(s, dtype, rg, low=low, high=high, seed=i),), name=str(s))
                for i, s in enumerate(SHAPES)]
    return samples


def _not_a_tensor():
    return [ErrorInput(Sample(([1.0, 2.0],)), TypeError, "must be (a )?Tensor")]


def U(name, ref, low=-3.0, high=3.0, grad=True, **kw):
    return OpInfo(name=name, op=getattr(st.special, name), ref=ref, sample_inputs=_unary_samples(low, high),
                  supports_autograd=grad, error_inputs=_not_a_tensor, **kw)


def _binary_samples(low_a, high_a, low_b, high_b, grad_input=True):
    """(input, other) pairs; ``grad_input=False``: only ``other`` is differentiable (as torch)."""
    def samples(dtype, rg):
        a = lambda s, seed: make(s, dtype, rg and grad_input, low=low_a, high=high_a, seed=seed)
        b = lambda s, seed: make(s, dtype, rg, low=low_b, high=high_b, seed=seed)
        return [Sample((a((3, 4), 1), b((3, 4), 2)), name="same"),
                Sample((a((3, 4), 3), b((4,), 4)), name="broadcast"),
                Sample((a((), 5), b((), 6)), name="0-d")]
    return samples


def _binary_errors():
    return [ErrorInput(Sample((st.ones(2, 3), st.ones(4))), RuntimeError, r"size|shape|broadcast"),
            ErrorInput(Sample((st.ones(2), "x")), TypeError, "must be (a )?Tensor")]


def BIN(name, ref, ranges, grad_input=True, **kw):
    return OpInfo(name=name, op=getattr(st.special, name), ref=ref,
                  sample_inputs=_binary_samples(*ranges, grad_input=grad_input), error_inputs=_binary_errors, **kw)


OPS = [
    U("entr", sps.entr, low=0.2, high=3.0, layouts=SP),
    U("ndtr", sps.ndtr),
    U("ndtri", sps.ndtri, low=0.05, high=0.95, grad_atol=1e-4),
    U("log_ndtr", sps.log_ndtr, low=-6.0, high=3.0),
    U("erfcx", sps.erfcx, low=-1.5, high=3.0),
    OpInfo("i0", st.i0, sps.i0, _unary_samples(-3.0, 3.0), error_inputs=_not_a_tensor),
    U("i0e", sps.i0e),
    U("i1", sps.i1, layouts=SP),
    U("i1e", sps.i1e, layouts=SP),
    U("bessel_j0", sps.j0, grad=False),
    U("bessel_j1", sps.j1, grad=False, layouts=SP),
    U("bessel_y0", sps.y0, low=0.2, high=5.0, grad=False),
    U("bessel_y1", sps.y1, low=0.2, high=5.0, grad=False),
    U("modified_bessel_i0", sps.i0, grad=False),
    U("modified_bessel_i1", sps.i1, grad=False, layouts=SP),
    U("modified_bessel_k0", sps.k0, low=0.2, high=5.0, grad=False),
    U("modified_bessel_k1", sps.k1, low=0.2, high=5.0, grad=False),
    U("scaled_modified_bessel_k0", sps.k0e, low=0.2, high=5.0, grad=False),
    U("scaled_modified_bessel_k1", sps.k1e, low=0.2, high=5.0, grad=False),
    U("spherical_bessel_j0", lambda x: sps.spherical_jn(0, x), grad=False),
    U("airy_ai", lambda x: sps.airy(x)[0], grad=False),
    BIN("xlog1py", sps.xlog1py, (-3.0, 3.0, 0.0, 3.0)),
    BIN("zeta", sps.zeta, (1.5, 4.0, 0.5, 3.0), grad_input=False),
    OpInfo("igamma", st.igamma, sps.gammainc, _binary_samples(0.5, 3.0, 0.2, 4.0, grad_input=False),
           error_inputs=_binary_errors),
    OpInfo("igammac", st.igammac, sps.gammaincc, _binary_samples(0.5, 3.0, 0.2, 4.0, grad_input=False),
           error_inputs=_binary_errors),
    OpInfo("mvlgamma", st.mvlgamma, lambda x, p: sps.multigammaln(x, p) if np.ndim(x) == 0 else
           np.vectorize(lambda v: sps.multigammaln(v, p))(x),
           lambda dt, rg: [Sample((make((3, 4), dt, rg, low=2.0, high=5.0), 3)),
                           Sample((make((5,), dt, rg, low=0.6, high=4.0, seed=1), 1))],
           error_inputs=lambda: [ErrorInput(Sample((st.ones(3) * 3, 0)), RuntimeError, "p has to be greater"),
                                 ErrorInput(Sample((st.ones(3) * 3, 1.5)), TypeError, "'p' must be int")]),
]


_POLY_REFS = {
    "chebyshev_polynomial_t": sps.eval_chebyt, "chebyshev_polynomial_u": sps.eval_chebyu,
    "hermite_polynomial_h": sps.eval_hermite, "hermite_polynomial_he": sps.eval_hermitenorm,
    "laguerre_polynomial_l": sps.eval_laguerre, "legendre_polynomial_p": sps.eval_legendre,
    "shifted_chebyshev_polynomial_t": sps.eval_sh_chebyt, "shifted_chebyshev_polynomial_u": sps.eval_sh_chebyu,
}


def _poly_ref(f):
    return lambda x, n: f(np.trunc(n).astype(np.int64), x)


def _poly_samples(dtype, rg):
    return [Sample((make((3, 4), dtype, low=-1.2, high=1.2), 3), name="scalar-n"),
            Sample((make((5,), dtype, low=-1.2, high=1.2, seed=1),
                    st.tensor([0, 1, 2, 5, 7], dtype=dtype)), name="tensor-n")]


OPS += [OpInfo(name, getattr(st.special, name), _poly_ref(ref), _poly_samples, supports_autograd=False,
               error_inputs=lambda: [ErrorInput(Sample((0.5, 3)), TypeError, "must be a Tensor")])
        for name, ref in _POLY_REFS.items()]
