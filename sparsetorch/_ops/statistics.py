"""Statistics and friends: var/std (+ _mean), norm/dist, logsumexp, cumsum/cumprod,
softmax/log_softmax: the reduction family's upper half (``var_mean``/``std_mean`` take
``reduction.mean``).

dtype rules follow torch: ``std``/``var`` accept floating/complex input only and are real for
complex input, ``norm`` likewise; ``cumsum``/``cumprod`` turn integer and bool input into int64;
``logsumexp`` computes integer input in the default float dtype.
"""

import builtins

from .. import _dtype as D
from .. import _torch_warnings
from .._backend import get_backend
from .._dispatch import call, defop, wrap
from .._layout import strided
from .._variants import method
from ..autograd.grad_mode import is_grad_enabled
from ._reduce import (
    is_float,
    keep_shape,
    keepdims,
    quiet,
    reduce_axes,
    reduced_count,
    sum_axes,
    sum_dtype,
)
from ._util import check_tensor, norm_dim, with_out

S = (strided,)
_inf = float("inf")

__all__ = [
    "var", "std", "var_mean", "std_mean", "norm", "dist", "logsumexp", "cumsum", "cumprod",
    "softmax", "log_softmax",
]


# ---- statistics: var, std ----

def _var_kernel(be, x, axes, keepdim, correction, take_sqrt):
    xp = be.xp
    if x.dtype == D.bfloat16.np:  # float32 throughout, one rounding (as torch)
        return xp.asarray(_var_kernel(be, x.astype(xp.float32), axes, keepdim, correction,
                                      take_sqrt)).astype(x.dtype)
    n = reduced_count(x.shape, axes)
    with quiet(be):
        m = x.sum(axes, None, None, True) / builtins.max(n, 1)
        d = x - m
        sq = (d.real * d.real + d.imag * d.imag) if d.dtype.kind == "c" else d * d
        s = xp.asarray(sq.sum(axes, None, None, keepdim))
        denom = builtins.max(n - correction, 0)
        if denom == 0:  # torch: sum / 0 (nan for 0/0, inf otherwise), with a warning
            r = xp.where(s == 0, float("nan"), _inf).astype(s.dtype)
        else:
            r = xp.asarray(s / denom)
        return xp.asarray(xp.sqrt(r)) if take_sqrt else r


def _var_backward(grad, input, axes, keepdim, correction):
    shape = tuple(input.shape)
    n = reduced_count(shape, axes)
    denom = n - correction
    scale = 2.0 / denom if denom > 0 else float("nan")
    centered = input - sum_axes(input, axes, True) / builtins.max(n, 1)
    return keepdims(grad, shape, axes, keepdim) * scale * centered


def _std_backward(grad, input, result, axes, keepdim, correction):
    """d std = d var / (2 std), and 0 where std == 0 (as torch masks it)."""
    from .pointwise import where

    safe = where(result == 0, _inf, result)
    return _var_backward(grad / (2 * safe), input, axes, keepdim, correction)


_var_op = defop(
    "var", {S: lambda be, x, axes, keepdim, correction: _var_kernel(be, x, axes, keepdim, correction, False)},
    params=("axes", "keepdim", "correction"), grads={"input": _var_backward},
)
_std_op = defop(
    "std", {S: lambda be, x, axes, keepdim, correction: _var_kernel(be, x, axes, keepdim, correction, True)},
    params=("axes", "keepdim", "correction"), grads={"input": _std_backward},
)


def _correction(dim, unbiased, correction, fname):
    if isinstance(dim, bool):  # std(input, unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fname}(): pass either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _var_std(op, input, dim, unbiased, keepdim, correction, fname):
    check_tensor(input, fname)
    if not is_float(input.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dim, correction = _correction(dim, unbiased, correction, fname)
    axes = reduce_axes(input, dim, fname)
    n_out = 1  # torch's "degrees of freedom" warning: numel(input) / numel(output) <= correction
    for i, s in enumerate(input.shape):
        if axes is not None and i not in axes:
            n_out *= s
    if input.numel() / builtins.max(n_out, 1) - correction <= 0:
        _torch_warnings.degrees_of_freedom(fname)
    dt = input.dtype.to_real()
    return call(op, (input,), (axes, bool(keepdim), correction), dt, None)


@method
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means 0)."""
    return with_out(_var_std(_var_op, input, dim, unbiased, keepdim, correction, "var"), out, "var")


@method
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over ``dim`` (see :func:`var`); its gradient is 0 where it is 0."""
    return with_out(_var_std(_std_op, input, dim, unbiased, keepdim, correction, "std"), out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over ``dim``."""
    v = _var_std(_var_op, input, dim, unbiased, keepdim, correction, "var_mean")
    d = None if isinstance(dim, bool) else dim
    from .reduction import mean

    return v, mean(input, d, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over ``dim``."""
    s = _var_std(_std_op, input, dim, unbiased, keepdim, correction, "std_mean")
    d = None if isinstance(dim, bool) else dim
    from .reduction import mean

    return s, mean(input, d, keepdim)


# ---- norms ----

def _norm_kernel(be, x, p, axes, keepdim):
    xp = be.xp
    if x.dtype == D.bfloat16.np:  # float32 throughout, one rounding (as torch)
        return xp.asarray(_norm_kernel(be, x.astype(xp.float32), p, axes, keepdim)).astype(x.dtype)
    a = xp.abs(x)
    if p == 2:
        return xp.asarray(xp.sqrt((a * a).sum(axes, None, None, keepdim)))
    if p == 1:
        return xp.asarray(a.sum(axes, None, None, keepdim))
    if p == _inf:
        return xp.asarray(xp.amax(a, axes, keepdims=keepdim))
    if p == -_inf:
        return xp.asarray(xp.amin(a, axes, keepdims=keepdim))
    if p == 0:
        return xp.asarray((a != 0).sum(axes, keepdims=keepdim)).astype(a.dtype)
    with quiet(be):
        return xp.asarray(xp.asarray((a ** p).sum(axes, None, None, keepdim)) ** (1.0 / p))


def _norm_backward(grad, input, result, p, axes, keepdim):
    from .pointwise import where

    shape = tuple(input.shape)
    g = keepdims(grad, shape, axes, keepdim)
    r = keepdims(result, shape, axes, keepdim)
    if p == 0:
        return input * 0
    if p == 1:
        return g * input.sgn()
    if p == 2:  # x / |x|, and 0 at the origin (torch's subgradient)
        return g * input / where(r == 0, _inf, r)
    if p == _inf or p == -_inf:
        mask = input.abs() == r
        return g * input.sgn() * mask / sum_axes(mask, axes, True)
    a = input.abs()
    safe_r = where(r == 0, 1.0, r)
    d = input * where(input == 0, 0.0, a) ** (p - 2) / safe_r ** (p - 1)
    return g * where(r == 0, 0.0, where(input == 0, 0.0, d))


_norm_op = defop("norm", {S: _norm_kernel}, params=("p", "axes", "keepdim"),
                 grads={"input": _norm_backward},
                 node_name="LinalgVectorNormBackward0")  # torch's norm / vector_norm node


def _nuc_kernel(be, x, axes, keepdim):
    xp = be.xp
    d1, d2 = axes
    rest = [i for i in range(x.ndim) if i not in axes]
    m = xp.transpose(x, rest + [d1, d2])
    r = xp.linalg.svd(m, compute_uv=False).sum(-1)
    if keepdim:
        r = r.reshape(keep_shape(x.shape, axes))
    return xp.asarray(r)


def _nuc_backward(grad):
    raise RuntimeError("norm(): the derivative for p='nuc' is not implemented; use p='fro' or 2")


_nuc_op = defop("norm_nuc", {S: _nuc_kernel}, params=("axes", "keepdim"),
                grads={"input": _nuc_backward})


def vector_norm(input, p, axes, keepdim, fname="linalg.vector_norm"):
    if (p == _inf or p == -_inf) and input.numel() == 0:
        for i, s in enumerate(input.shape):
            if s == 0 and (axes is None or i in axes):
                raise RuntimeError(
                    f"{fname} cannot compute the {p} norm on the dimension {i} because this "
                    "dimension is empty and the operation does not have an identity"
                )
    return call(_norm_op, (input,), (p, axes, bool(keepdim)), input.dtype.to_real(), None)


@method
def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """Vector p-norm over ``dim`` (all dims if None), or a matrix norm for ``p='fro'``/``'nuc'``.

    ``p``: 'fro' (2-norm of the selected elements), 'nuc' (sum of singular values of the
    matrices over a 2-tuple ``dim``), or a number: inf / -inf (max / min of ``|x|``), 0 (count
    of nonzeros), or any other ``p`` as ``sum(|x|**p) ** (1/p)``. The 2-norm has gradient 0 at 0.
    """
    check_tensor(input, "norm")
    x = input if dtype is None else input.to(dtype)
    if not is_float(x.dtype):
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{x.dtype.scalar_name}"
        )
    dims = dim if isinstance(dim, (tuple, list)) or dim is None else (dim,)
    if isinstance(p, str):
        if p == "fro":
            if dims is not None and len(dims) > 2:
                raise RuntimeError(
                    f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}"
                )
            p = 2
        elif p == "nuc":
            if dims is None and x.ndim == 2:
                dims = (0, 1)
            if dims is None or len(dims) != 2:
                got = " ".join(map(str, dims)) if dims is not None else ""
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
            d = tuple(norm_dim(i, x.ndim, "norm") for i in dims)
            r = call(_nuc_op, (x,), (d, bool(keepdim)), x.dtype.to_real(), None)
            return with_out(r, out, "norm")
        else:
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro'/'nuc', not {type(p).__name__}")
    axes = reduce_axes(x, dims, "norm")
    return with_out(vector_norm(x, float(p), axes, keepdim), out, "norm")


def dist(input, other, p=2):
    """p-norm of ``input - other`` (broadcasting)."""
    check_tensor(input, "dist")
    check_tensor(other, "dist", "other")
    for t in (input, other):
        if not is_float(t.dtype):
            raise RuntimeError(
                "norm(): input dtype should be either floating point or complex. Got "
                f"{t.dtype.scalar_name} instead."
            )
    return norm(input - other, float(p))


# ---- logsumexp ----

def _logsumexp_kernel(be, x, axes, keepdim):
    xp = be.xp
    if x.dtype == D.bfloat16.np:  # float32 throughout, one rounding (as torch)
        return xp.asarray(_logsumexp_kernel(be, x.astype(xp.float32), axes, keepdim)).astype(x.dtype)
    if x.size == 0:
        shape = keep_shape(x.shape, axes) if keepdim else tuple(
            s for i, s in enumerate(x.shape) if axes is not None and i not in axes)
        return xp.full(shape, -_inf, x.dtype)
    m = xp.amax(x, axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # rows of -inf (or inf) must not give inf - inf
    with quiet(be):
        r = xp.log(xp.exp(x - m).sum(axes, None, None, True)) + m
    if not keepdim:
        r = r.reshape([s for i, s in enumerate(r.shape) if axes is not None and i not in axes])
    return xp.asarray(r)


_logsumexp_op = defop(
    "logsumexp", {S: _logsumexp_kernel}, params=("axes", "keepdim"),
    grads={"input": lambda grad, input, result, axes, keepdim:
           _logsumexp_input_backward(grad, input, result, axes, keepdim)},
)


def _logsumexp_input_backward(grad, input, result, axes, keepdim):
    """softmax(input) over ``axes`` times grad. Not ``exp(input - result)``: a large result is
    rounded (float32's spacing at 1e4 is 1e-3, float16's is 8, where 4 tied inputs would each get
    1, not 1/4), so the softmax is formed from the input (max subtracted; float32 for float16)."""
    shape = tuple(input.shape)
    g = keepdims(grad, shape, axes, keepdim)
    if input.numel() == 0 or input.dtype.is_complex:
        return g * (input - keepdims(result, shape, axes, keepdim)).exp()
    dims = tuple(range(input.ndim)) if axes is None else axes
    x = input.float() if input.dtype is D.float16 else input
    e = (x - x.detach().amax(dims, keepdim=True)).exp()  # softmax is invariant to the shift
    return g * (e / e.sum(dims, keepdim=True)).to(input.dtype)


@method
def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (the max is subtracted first)."""
    check_tensor(input, "logsumexp")
    dt = input.dtype if is_float(input.dtype) else D.get_default_dtype()
    axes = reduce_axes(input, dim, "logsumexp")
    return with_out(call(_logsumexp_op, (input,), (axes, bool(keepdim)), dt, dt), out, "logsumexp")


# ---- cumulative sum and product ----

def _cum_kernel(fn):
    def kernel(be, x, dim):
        if x.ndim == 0:
            return x.copy()
        if x.dtype == D.bfloat16.np:  # a float32 running value, each output rounded (as torch)
            return getattr(be.xp, fn)(x.astype(be.xp.float32), axis=dim).astype(x.dtype)
        return getattr(be.xp, fn)(x, axis=dim)
    return kernel


def _rev_cumsum_kernel(be, g, dim):
    xp = be.xp
    if g.ndim == 0:
        return g.copy()
    if g.dtype == D.bfloat16.np:
        return _rev_cumsum_kernel(be, g.astype(xp.float32), dim).astype(g.dtype)
    return xp.flip(xp.cumsum(xp.flip(g, dim), axis=dim), dim)


_rev_cumsum_op = defop("_reverse_cumsum", {S: _rev_cumsum_kernel}, params=("dim",),
                       grads={"input": lambda grad, dim: call(_cumsum_op, (grad,), (dim,))})
_cumsum_op = defop("cumsum", {S: _cum_kernel("cumsum")}, params=("dim",),
                   grads={"input": lambda grad, dim: call(_rev_cumsum_op, (grad,), (dim,))},
                   zero_preserving=True)


def _cumprod_backward(grad, input, result, dim):
    """Exact with zeros: a position before the slice's first zero gets
    revcumsum(grad * result) / x; the first zero gets sum_j>=z grad_j * prod_{i<=j, i!=z} x_i;
    later positions get 0. Inputs without zeros use the differentiable formula; with zeros the
    gradient is computed by a kernel (so a second derivative through a zero is not available)."""
    if not bool((input == 0).any()):
        return call(_rev_cumsum_op, (grad * result,), (dim,)) / input
    return call(_cumprod_grad_op, (grad, input, result), (dim,))


def _cumprod_grad_kernel(be, g, x, res, dim):
    xp = be.xp
    if x.ndim == 0:
        return g.copy()
    g, x, res = (xp.moveaxis(a, dim, -1) for a in (g, x, res))
    n = x.shape[-1]
    zero = x == 0
    has = zero.any(-1, keepdims=True)
    z = xp.argmax(zero, -1)[..., None]  # first zero (0 when there is none)
    pos = xp.arange(n)
    before = (pos < z) | ~has
    rev = xp.flip(xp.cumsum(xp.flip(g * res, -1), -1), -1)
    part1 = xp.where(before, rev / xp.where(before, x, 1), 0)
    cp = xp.cumprod(xp.where(pos == z, 1, x), -1)  # prod_{i<=j, i != z} x_i
    tail = xp.flip(xp.cumsum(xp.flip(xp.where(pos >= z, g * cp, 0), -1), -1), -1)
    out = part1 + xp.where(has & (pos == z), tail, 0)
    return xp.moveaxis(out.astype(x.dtype), -1, dim)


_cumprod_grad_op = defop("_cumprod_backward", {(strided,) * 3: _cumprod_grad_kernel},
                         inputs=("grad", "input", "result"), params=("dim",))
_cumprod_op = defop("cumprod", {S: _cum_kernel("cumprod")}, params=("dim",),
                    grads={"input": _cumprod_backward})


def _cum(op, input, dim, dtype, out, fname):
    check_tensor(input, fname)
    d = norm_dim(dim, input.ndim, fname)
    dt = sum_dtype(input.dtype, dtype)
    return with_out(call(op, (input,), (d,), dt, dt), out, fname)


@method
def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim`` (integer and bool input give int64)."""
    return _cum(_cumsum_op, input, dim, dtype, out, "cumsum")


@method
def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; the gradient is exact where the input has zeros."""
    return _cum(_cumprod_op, input, dim, dtype, out, "cumprod")


# ---- softmax, log_softmax ----
# A float32/float64 C-contiguous CPU payload of at least one dim runs nn/_kernels/softmax.py's
# kernels (issue 14): along the last dim 2-3 passes a row instead of NumPy's five with
# temporaries, along another its slab kernels (vectorised along the dims after it); the plain
# backward (no create_graph) is one kernel too. Anything else (a strided view, float16/bfloat16,
# 0-d, GPU, numba off) runs the NumPy formulas. torch.softmax, Tensor.softmax, F.softmax and
# nn.Softmax share these ops (F.softmax calls the kernels without the dispatcher when it can).


def fused_softmax(be, x):
    """``(module, kernels)`` of the fused softmax kernels for payload ``x``, or None."""
    if be.name != "cpu" or x.ndim == 0 or x.size == 0 or x.dtype.kind != "f" \
            or x.dtype.itemsize not in (4, 8) or not x.flags.c_contiguous:
        return None
    from ..nn._kernels import softmax as ksm  # (kernel floor; imported when first needed)

    k = ksm.rows(be)
    return None if k is None else (ksm, k)


def _softmax_kernel(be, x, dim, log):
    f = fused_softmax(be, x)
    if f is not None:
        return f[0].softmax_rows(be, f[1], x, log, dim)
    xp = be.xp
    if x.size == 0:
        return x.copy()
    shape = x.shape
    if x.dtype == D.bfloat16.np:  # computed in float32, rounded once (as torch)
        return _softmax_kernel(be, x.astype(xp.float32), dim, log).astype(x.dtype)
    if x.ndim == 0:
        x = x.reshape(1)
    m = xp.amax(x, dim, keepdims=True)
    with quiet(be):
        z = x - m  # as torch: a +inf (or all -inf) slice gives nan throughout
        if log:
            r = z - xp.log(xp.exp(z).sum(dim, keepdims=True))
        else:
            e = xp.exp(z)
            r = e / e.sum(dim, keepdims=True)
    return r.reshape(shape)


def _softmax_grad(grad, result, dim, log):
    if not is_grad_enabled() and grad.layout is strided and result.layout is strided \
            and grad.dtype is result.dtype and grad.device == result.device:
        be = get_backend(result.device)
        f = fused_softmax(be, result._data)
        if f is not None:
            g = be.xp.ascontiguousarray(grad._data)
            r = f[0].softmax_rows_backward(be, f[1], g, result._data, log, dim)
            return wrap(r, result.dtype, result.device, strided)
    if log:
        return grad - result.exp() * sum_axes(grad, _axes1(result, dim), True)
    return result * (grad - sum_axes(grad * result, _axes1(result, dim), True))


def _axes1(t, dim):
    return None if t.ndim <= 1 else (dim,)


# zero_preserving=False: on a sparse input the dense softmax is dense (implicit zeros are 0, not
# -inf); the missing-kernel error says so. sparsetorch.sparse.softmax is the sparse one.
_softmax_op = defop("softmax", {S: lambda be, x, dim: _softmax_kernel(be, x, dim, False)},
                    params=("dim",),
                    grads={"input": lambda grad, result, dim: _softmax_grad(grad, result, dim, False)},
                    zero_preserving=False, node_name="SoftmaxBackward0")
_log_softmax_op = defop("log_softmax", {S: lambda be, x, dim: _softmax_kernel(be, x, dim, True)},
                        params=("dim",),
                        grads={"input": lambda grad, result, dim: _softmax_grad(grad, result, dim, True)},
                        zero_preserving=False, node_name="LogSoftmaxBackward0")


def _softmax_like(op, input, dim, dtype, fname):
    check_tensor(input, fname)
    if dim is None or not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fname}(): argument 'dim' must be int, not {type(dim).__name__}")
    x = input if dtype is None else input.to(dtype)
    if not is_float(x.dtype):
        raise NotImplementedError(
            f'"{fname}_kernel_impl" not implemented for \'{x.dtype.scalar_name}\'; '
            "pass dtype=sparsetorch.float32 or convert with .float() first"
        )
    return call(op, (x,), (norm_dim(dim, x.ndim, fname),))


@method
def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably; ``dtype`` casts the input first."""
    return _softmax_like(_softmax_op, input, dim, dtype, "softmax")


@method
def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed stably; ``dtype`` casts the input first."""
    return _softmax_like(_log_softmax_op, input, dim, dtype, "log_softmax")
