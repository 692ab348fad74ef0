"""Helpers of torch.distributions.utils: broadcasting parameters, probs <-> logits, a lazily
computed attribute, and the standard-gamma draw with its implicit reparameterisation gradient."""

from numbers import Number

from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from . import _t as T

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "standard_gamma", "standard_gamma_grad"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Tensors and Python numbers broadcast to one shape; numbers become tensors of the first
    tensor's dtype/device (the default dtype when all are numbers), as torch's."""
    tensors = [v for v in values if isinstance(v, T.Tensor)]
    for v in values:
        if not isinstance(v, (T.Tensor, Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, "  # noqa: TRY004 - as torch
                             "torch.Tensor or objects implementing __torch_function__.")
    if not tensors:
        dt = D.get_default_dtype()
        return T.broadcast_tensors(*[T.tensor(v, dtype=dt) for v in values])
    like = tensors[0]
    vals = [v if isinstance(v, T.Tensor) else T.tensor(v, dtype=like.dtype, device=like.device)
            for v in values]
    return T.broadcast_tensors(*vals)


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from (binary: sigmoid; else softmax over the last dim) logits."""
    return T.sigmoid(logits) if is_binary else T.softmax(logits, -1)


def clamp_probs(probs):
    """``probs`` clamped into ``[eps, 1 - eps]`` of its dtype."""
    eps = T.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (binary: ``log(p) - log1p(-p)``; else ``log(p)``)."""
    p = clamp_probs(probs)
    return (p.log() - (-p).log1p()) if is_binary else p.log()


class lazy_property:
    """A property computed on first use and then stored on the instance (so a parameter given
    as ``probs`` yields ``logits`` only when asked, and the reverse)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _LazyConstraintProperty(self.wrapped)
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _LazyConstraintProperty(lazy_property, property):
    """What a lazy_property reads as on the class (a property, for introspection)."""

    def __init__(self, wrapped):
        lazy_property.__init__(self, wrapped)
        property.__init__(self, wrapped)


# ---- standard gamma: a draw (Marsaglia-Tsang on our generator) and its gradient ----

def _gamma_grad_kernel(be, alpha, x):
    """d x / d alpha of a Gamma(alpha, 1) draw ``x`` by implicit reparameterisation:
    ``-(dP(alpha, x)/dalpha) / pdf(alpha, x)``, P the regularized lower incomplete gamma. The
    alpha-derivative of P is a Richardson-extrapolated central difference (error O(h^4))."""
    xp, sp = be.xp, be.special
    a = alpha.astype(xp.float64)
    v = x.astype(xp.float64)
    h = 1e-3 * xp.minimum(a, 1.0)

    def d(step):
        return (sp.gammainc(a + step, v) - sp.gammainc(a - step, v)) / (2 * step)
    dp = (4 * d(h / 2) - d(h)) / 3
    log_pdf = (a - 1) * xp.log(v) - v - sp.gammaln(a)
    g = -dp * xp.exp(-log_pdf)
    return g.astype(alpha.dtype)


_gamma_grad_op = defop("_standard_gamma_grad", {(strided, strided): _gamma_grad_kernel},
                       inputs=("self", "output"))


def standard_gamma_grad(alpha, x):
    """torch._standard_gamma_grad: the reparameterisation derivative ``d x / d alpha``."""
    return call(_gamma_grad_op, (alpha, x))


_gamma_op = defop("_standard_gamma", {(strided,): lambda be, alpha, draw: draw}, params=("draw",),
                  grads={"input": lambda grad, input, result: grad * standard_gamma_grad(input, result)})


def standard_gamma(alpha):
    """Gamma(``alpha``, 1) draws of ``alpha``'s shape (torch._standard_gamma), differentiable
    w.r.t. ``alpha`` through the implicit reparameterisation gradient."""
    with T.no_grad():
        a = alpha.detach()
        boost = a < 1
        a1 = T.where(boost, a + 1, a)
        d = a1 - 1.0 / 3.0
        c = 1.0 / (9.0 * d).sqrt()
        out = T.zeros_like(a)
        done = a.isnan()  # NaN alphas count as done: they come out NaN below
        for _ in range(64):
            x = T.randn(tuple(a.shape), dtype=a.dtype, device=a.device)
            u = T.rand(tuple(a.shape), dtype=a.dtype, device=a.device)
            v = (1 + c * x) ** 3
            vs = T.where(v > 0, v, T.ones_like(v))
            ok = (v > 0) & (u.log() < 0.5 * x * x + d - d * vs + d * vs.log()) & ~done
            out = T.where(ok, d * vs, out)
            done = done | ok
            if bool(done.all()):
                break
        u = T.rand(tuple(a.shape), dtype=a.dtype, device=a.device)
        out = T.where(boost, out * u ** (1.0 / a), out)
        out = out.clamp(min=T.finfo(a.dtype).tiny)
        out = T.where(a.isnan(), a, out)
    return call(_gamma_op, (alpha,), (out._data,))



def _standard_gamma(input, generator=None):
    """torch._standard_gamma: Gamma(``input``, 1) draws, differentiable w.r.t. ``input``
    (``generator`` is accepted; draws come from the default generator)."""
    return standard_gamma(input)


def _sample_dirichlet(input, generator=None):
    """torch._sample_dirichlet: Dirichlet(``input``) draws over the last dim."""
    g = standard_gamma(input)
    return g / g.sum(-1, keepdim=True)
