"""``torch.special``: special functions, as torch names them.

Most are aliases of the top-level ops (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``,
``psi`` is ``digamma`` ...); the rest are declared in ``_ops/special_fns.py``. Signatures,
dtype rules (integers compute in the default float dtype, float32 stays float32), gradients
and error types follow torch 2.x.
"""

from ._ops import pointwise as _pw
from ._ops import statistics as _stats
from ._ops import special_fns as _sf
from ._ops import statistics as _stats

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

# ---- aliases of top-level ops ----

digamma = _pw.digamma
psi = _pw.digamma
erf = _pw.erf
erfc = _pw.erfc
erfinv = _pw.erfinv
exp2 = _pw.exp2
expm1 = _pw.expm1
log1p = _pw.log1p
logit = _pw.logit
polygamma = _pw.polygamma
round = _pw.round
sinc = _pw.sinc
xlogy = _pw.xlogy
expit = _pw.sigmoid
gammaln = _pw.lgamma
logsumexp = _stats.logsumexp


def softmax(input, dim, *, dtype=None):
    """Softmax along ``dim``: ``exp(x_i) / sum_j exp(x_j)``; ``dtype`` casts the input first."""
    return _stats.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))``, computed stably; ``dtype`` casts the input first."""
    return _stats.log_softmax(input, dim, dtype)


# ---- special functions of _ops/special_fns.py ----

entr = _sf.entr
ndtr = _sf.ndtr
ndtri = _sf.ndtri
log_ndtr = _sf.log_ndtr
erfcx = _sf.erfcx
i0 = _sf.i0
i0e = _sf.i0e
i1 = _sf.i1
i1e = _sf.i1e
bessel_j0 = _sf.bessel_j0
bessel_j1 = _sf.bessel_j1
bessel_y0 = _sf.bessel_y0
bessel_y1 = _sf.bessel_y1
modified_bessel_i0 = _sf.modified_bessel_i0
modified_bessel_i1 = _sf.modified_bessel_i1
modified_bessel_k0 = _sf.modified_bessel_k0
modified_bessel_k1 = _sf.modified_bessel_k1
scaled_modified_bessel_k0 = _sf.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _sf.scaled_modified_bessel_k1
spherical_bessel_j0 = _sf.spherical_bessel_j0
airy_ai = _sf.airy_ai
xlog1py = _sf.xlog1py
zeta = _sf.zeta
gammainc = _sf.igamma
gammaincc = _sf.igammac
multigammaln = _sf.mvlgamma
chebyshev_polynomial_t = _sf.chebyshev_polynomial_t
chebyshev_polynomial_u = _sf.chebyshev_polynomial_u
chebyshev_polynomial_v = _sf.chebyshev_polynomial_v
chebyshev_polynomial_w = _sf.chebyshev_polynomial_w
hermite_polynomial_h = _sf.hermite_polynomial_h
hermite_polynomial_he = _sf.hermite_polynomial_he
laguerre_polynomial_l = _sf.laguerre_polynomial_l
legendre_polynomial_p = _sf.legendre_polynomial_p
shifted_chebyshev_polynomial_t = _sf.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _sf.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _sf.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _sf.shifted_chebyshev_polynomial_w
