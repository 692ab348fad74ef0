"""OpInfo rows for ``sparsetorch.linalg`` (torch.linalg) and its top-level aliases (inverse, det,
logdet, slogdet, pinverse, matrix_power, matrix_exp, cholesky): NumPy/SciPy references, float64
gradcheck on well-conditioned inputs, bad inputs. Dense only: sparse inputs are rejected with the
dispatcher's `.to_dense()` hint (tests/test_linalg_module.py checks that)."""

import numpy as np
import scipy.linalg

import sparsetorch as st

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make

LA = st.linalg
R = RuntimeError


def _wc(shape, dtype, rg, seed=0):
    """A well-conditioned square (batch of) matrix: random + 4 I."""
    a = make(shape, dtype, seed=seed, low=-1.0, high=1.0).detach() + 4 * st.eye(shape[-1], dtype=dtype)
    return a.requires_grad_(rg) if rg else a


def _square(dtype, rg):
    return [Sample((_wc((3, 3), dtype, rg),), name="3x3"),
            Sample((_wc((2, 4, 4), dtype, rg, 1),), name="batched")]


def _sym(a):
    return a + a.mT


def _np_sym(a):
    return a + np.swapaxes(a, -1, -2)


def _pd(a):
    """A positive-definite matrix built from any square ``a`` (differentiable)."""
    return a @ a.mT + 3 * st.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _np_pd(a):
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(a.shape[-1])


def _general(dtype, rg):
    return [Sample((make((3, 4), dtype, rg, seed=2),), name="3x4"),
            Sample((make((2, 4, 3), dtype, rg, seed=3),), name="batched")]


def _errs(fn, need_square=True):
    def errors():
        out = [ErrorInput(Sample((st.ones(3),)), R, r"at least 2 dimensions"),
               ErrorInput(Sample((st.eye(2).to_sparse(),)), NotImplementedError, r"to_dense")]
        if need_square:
            out.append(ErrorInput(Sample((st.ones(2, 3),)), R, r"square matrices.*2 by 3"))
        return out
    return errors


def _singular_errors():
    return _errs(None)() + [ErrorInput(Sample((st.zeros(2, 2),)), LA.LinAlgError, r"singular")]


def _solve_samples(dtype, rg):
    return [Sample((_wc((3, 3), dtype, rg), make((3, 2), dtype, rg, seed=4)), name="matrix rhs"),
            Sample((_wc((2, 3, 3), dtype, rg, 1), make((2, 3, 1), dtype, rg, seed=5)),
                   name="batched")]


def _solve_errors():
    return [ErrorInput(Sample((st.eye(3), st.ones(2, 2))), R, r"Incompatible shapes"),
            ErrorInput(Sample((st.zeros(2, 2), st.ones(2, 1))), LA.LinAlgError, r"singular")]


def _tri_samples(dtype, rg):
    a = _wc((3, 3), dtype, False).triu()
    return [Sample((a.requires_grad_(rg) if rg else a, make((3, 2), dtype, rg, seed=6)),
                   {"upper": True}, "upper")]


def _power_samples(dtype, rg):
    return [Sample((_wc((3, 3), dtype, rg), 3), name="n=3"),
            Sample((_wc((2, 3, 3), dtype, rg, 1), -2), name="n=-2")]


def _expm_samples(dtype, rg):
    a = make((3, 3), dtype, seed=7, low=-0.5, high=0.5).detach()
    return [Sample((a.requires_grad_(rg) if rg else a,), name="3x3")]


def _np_expm(a):
    return scipy.linalg.expm(a)


def _vnorm_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=8, positive=True)
    return [Sample((x,), name="2-norm all"), Sample((x,), {"ord": 1, "dim": 1}, "1-norm dim"),
            Sample((x,), {"ord": float("inf"), "dim": 0, "keepdim": True}, "inf keepdim"),
            Sample((x,), {"ord": 3, "dim": (0, 1)}, "3-norm")]


def _np_vnorm(x, ord=2, dim=None, keepdim=False):
    ax = dim if dim is None or isinstance(dim, tuple) else (dim,)
    a = np.abs(x)
    if ord == float("inf"):
        return a.max(axis=ax, keepdims=keepdim)
    return (a ** ord).sum(axis=ax, keepdims=keepdim) ** (1 / ord)


def _mnorm_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=9)
    return [Sample((x,), name="fro"), Sample((x,), {"ord": "nuc"}, "nuc"),
            Sample((make((2, 3, 3), dtype, rg, seed=10),), {"ord": 1}, "1 batched")]


def _np_mnorm(x, ord="fro", dim=(-2, -1), keepdim=False):
    return np.linalg.norm(x, ord=ord, axis=dim, keepdims=keepdim)


def _cross_samples(dtype, rg):
    return [Sample((make((4, 3), dtype, rg, seed=11), make((4, 3), dtype, rg, seed=12)))]


def _multi_dot_samples(dtype, rg):
    return [Sample(([make((2, 3), dtype, rg, seed=13), make((3, 4), dtype, rg, seed=14),
                     make((4, 2), dtype, rg, seed=15)],))]


def _vecdot_samples(dtype, rg):
    return [Sample((make((3, 4), dtype, rg, seed=16), make((4,), dtype, rg, seed=17)))]


def _svdvals_samples(dtype, rg):
    # distinct singular values (the gradient needs them)
    a = st.tensor(np.diag([4.0, 2.0, 1.0]) + 0.1 * np.arange(9.0).reshape(3, 3) / 9, dtype=dtype)
    return [Sample((a.requires_grad_(rg) if rg else a,), name="3x3")]


OPS = [
    OpInfo("linalg.inv", LA.inv, np.linalg.inv, _square, FLOATS, True, _singular_errors),
    OpInfo("inverse", st.inverse, np.linalg.inv, _square, FLOATS, True, None, "inverse"),
    OpInfo("linalg.det", LA.det, np.linalg.det, _square, FLOATS, True, _errs(None), "det",
           rtol=1e-5),
    OpInfo("linalg.slogdet", LA.slogdet, lambda a: tuple(np.linalg.slogdet(a)), _square, FLOATS,
           True, _errs(None), "slogdet"),
    OpInfo("logdet", st.logdet, lambda a: np.log(np.linalg.det(a)), _square, FLOATS, True, None,
           "logdet"),
    OpInfo("linalg.solve", LA.solve, np.linalg.solve, _solve_samples, FLOATS, True, _solve_errors),
    OpInfo("linalg.solve_triangular", LA.solve_triangular,
           lambda a, b, upper: scipy.linalg.solve_triangular(a, b, lower=not upper),
           _tri_samples, FLOATS, True),
    # the samples are made positive-definite inside the op; pd=False feeds the raw input
    OpInfo("linalg.cholesky(pd)", lambda a, pd=True: LA.cholesky(_pd(a) if pd else a),
           lambda a: np.linalg.cholesky(_np_pd(a)), _square, FLOATS, True,
           lambda: [ErrorInput(Sample((-st.eye(2),), {"pd": False}), LA.LinAlgError,
                               r"positive-definite"),
                    ErrorInput(Sample((st.ones(2, 3),), {"pd": False}), R, r"square matrices")]),
    OpInfo("linalg.pinv", LA.pinv, np.linalg.pinv, _general, FLOATS, True, _errs(None, False),
           rtol=1e-5, atol=1e-5),
    OpInfo("pinverse", st.pinverse, np.linalg.pinv, _general, FLOATS, True, None, "pinverse",
           rtol=1e-5, atol=1e-5),
    OpInfo("linalg.eigvalsh(sym)", lambda a, sym=True: LA.eigvalsh(_sym(a) if sym else a),
           lambda a: np.linalg.eigvalsh(_np_sym(a)), _square, FLOATS, True,
           lambda: [ErrorInput(Sample((st.ones(2, 3),), {"sym": False}), R, r"square matrices")],
           rtol=1e-5, atol=1e-5),
    OpInfo("linalg.svdvals", LA.svdvals, lambda a: np.linalg.svd(a, compute_uv=False),
           _svdvals_samples, FLOATS, True, _errs(None, False)),
    OpInfo("linalg.qr", LA.qr, lambda a: tuple(np.linalg.qr(a)), _general, FLOATS, False,
           lambda: [ErrorInput(Sample((st.ones(3, 3),), {"mode": "bad"}), R, r"mode 'bad'")],
           rtol=1e-5, atol=1e-5),
    OpInfo("linalg.matrix_power", LA.matrix_power, np.linalg.matrix_power, _power_samples, FLOATS,
           True, lambda: [ErrorInput(Sample((st.ones(2, 3), 2)), R, r"square matrices")],
           rtol=1e-5, atol=1e-4),
    OpInfo("linalg.matrix_exp", LA.matrix_exp, _np_expm, _expm_samples, FLOATS, True,
           lambda: [ErrorInput(Sample((st.ones(2, 3),)), R, r"square matrices")], "matrix_exp",
           rtol=1e-5),
    OpInfo("linalg.vector_norm", LA.vector_norm, _np_vnorm, _vnorm_samples, FLOATS, True,
           lambda: [ErrorInput(Sample((st.ones(3),), {"ord": "fro"}), TypeError, r"'ord'")]),
    OpInfo("linalg.matrix_norm", LA.matrix_norm, _np_mnorm, _mnorm_samples, FLOATS, True,
           lambda: [ErrorInput(Sample((st.ones(3),)), R, r"at least 2 dimensions")], rtol=1e-5),
    OpInfo("linalg.cross", LA.cross, np.cross, _cross_samples, FLOATS, True,
           lambda: [ErrorInput(Sample((st.ones(2), st.ones(2))), R, r"must have length 3")]),
    OpInfo("linalg.multi_dot", LA.multi_dot, np.linalg.multi_dot, _multi_dot_samples, FLOATS, True,
           lambda: [ErrorInput(Sample(([st.ones(2, 2)],)), R, r"at least 2 tensors")]),
    OpInfo("linalg.vecdot", LA.vecdot, lambda x, y: (x * y).sum(-1), _vecdot_samples, FLOATS, True),
    OpInfo("linalg.matrix_rank", LA.matrix_rank, np.linalg.matrix_rank, _general, FLOATS, False,
           _errs(None, False)),
]
