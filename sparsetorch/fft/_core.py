"""The three FFT primitives behind ``sparsetorch.fft`` (as torch's ``_fft_c2c/_fft_r2c/_fft_c2r``).

Kernels are the backend's ``xp.fft`` (NumPy >= 2 on the CPU, ``cupy.fft`` on a GPU; both keep
single precision), so one kernel serves both devices. A normalisation is a *scale mode*
applied whatever the direction: 0 no scaling, 1 ``1/sqrt(n)``, 2 ``1/n``. The adjoint of a
transform is then the opposite direction with the same mode, which is how the derivatives
below are written (with these ops, so double backward works). Complex gradients follow
torch's convention (the gradient of a real loss w.r.t. ``z`` is ``dL/dRe z + i dL/dIm z``).
"""

from .._dispatch import call, defop
from .._layout import strided
from .._ops._join import cat
from .._ops._slicing import narrow, select
from .._ops.creation import ones, zeros
from .._ops.complex_views import view_as_real
from .._ops.pointwise import conj
from .._ops.shape import reshape

S = (strided,)
# xp.fft ``norm=`` spelling of a scale mode, for the forward (fft) and inverse (ifft) routines
_FWD_NORM = ("backward", "ortho", "forward")
_INV_NORM = ("forward", "ortho", "backward")


def _real(z):
    return select(view_as_real(z), -1, 0)


def _c2c_kernel(be, x, dims, mode, forward):
    if not dims:
        return x.copy()
    if forward:
        return be.xp.fft.fftn(x, axes=dims, norm=_FWD_NORM[mode])
    return be.xp.fft.ifftn(x, axes=dims, norm=_INV_NORM[mode])


def _r2c_kernel(be, x, dims, mode, forward, onesided):
    f = be.xp.fft.rfftn if onesided else be.xp.fft.fftn
    r = f(x, axes=dims, norm=_FWD_NORM[mode])
    return r if forward else r.conj()


def _c2r_kernel(be, x, dims, mode, last_n):
    s = [x.shape[d] for d in dims[:-1]] + [last_n]
    return be.xp.fft.irfftn(x, s=s, axes=dims, norm=_INV_NORM[mode])


def _pad_to(x, d, n):
    """``x`` zero-padded (or cut) to size ``n`` along dim ``d``, differentiably."""
    size = x.shape[d]
    if size == n:
        return x
    if size > n:
        return narrow(x, d, 0, n)
    shape = list(x.shape)
    shape[d] = n - size
    return cat([x, zeros(shape, dtype=x.dtype, device=x.device)], d)


def _bin_weights(g, d, w_mid, w_end, n):
    """A real tensor broadcasting along dim ``d`` of ``g`` (one-sided bins of an ``n``-point
    signal): 1 at DC, ``w_end`` at the Nyquist bin when ``n`` is even, ``w_mid`` elsewhere."""
    half = g.shape[d]
    w = ones(half, dtype=g.dtype.to_real(), device=g.device) * w_mid
    w[0] = 1
    if n % 2 == 0 and half > 1:
        w[half - 1] = w_end
    shape = [1] * g.ndim
    shape[d] = half
    return reshape(w, shape)


def _r2c_backward(grad, input, dims, mode, forward, onesided):
    if not onesided:
        return _real(c2c(grad, dims, mode, not forward))
    # Re(F^H pad(g)) (the dropped half of the spectrum had zero gradient) is a c2r of g with
    # the bins c2r counts twice halved; the inverse direction conjugates (ihfft)
    n = input.shape[dims[-1]]
    g = grad if forward else conj(grad)
    return c2r(g * _bin_weights(g, dims[-1], 0.5, 1.0, n), dims, mode, n)


def _c2r_backward(grad, dims, mode, last_n):
    g = r2c(grad, dims, mode, True, True)
    if last_n - g.shape[dims[-1]] <= 0:
        return g
    # bins 1..last_n - half stand for two conjugate bins of the full spectrum (torch's rule)
    return g * _bin_weights(g, dims[-1], 2.0, 1.0, last_n)


_c2c_op = defop("_fft_c2c", {S: _c2c_kernel}, params=("dims", "mode", "forward"),
                grads={"input": lambda grad, dims, mode, forward: c2c(grad, dims, mode, not forward)},
                holomorphic=False)  # these formulas are the adjoints already (torch's convention)
_r2c_op = defop("_fft_r2c", {S: _r2c_kernel}, params=("dims", "mode", "forward", "onesided"),
                grads={"input": _r2c_backward}, holomorphic=False)
_c2r_op = defop("_fft_c2r", {S: _c2r_kernel}, params=("dims", "mode", "last_n"),
                grads={"input": _c2r_backward})


_to_complex_op = defop("_fft_to_complex", {S: lambda be, x, dt: x.astype(dt)}, params=("dt",),
                       grads={"input": lambda grad: _real(grad)})


def to_complex(x):
    """Real ``x`` as complex of the same precision; the gradient is the real part (no NumPy
    complex-to-real cast warning on the way back)."""
    dt = x.dtype.to_complex()
    return call(_to_complex_op, (x,), (dt.np,), dt)


def c2c(x, dims, mode, forward):
    """Complex-to-complex transform over ``dims`` (a tuple of non-negative dims)."""
    return call(_c2c_op, (x,), (tuple(dims), mode, forward), x.dtype)


def r2c(x, dims, mode, forward, onesided):
    """Real-to-complex transform; ``onesided``: the last of ``dims`` keeps ``n // 2 + 1`` bins.
    ``forward=False`` gives the conjugate (the inverse transform of a real signal)."""
    return call(_r2c_op, (x,), (tuple(dims), mode, forward, onesided), x.dtype.to_complex())


def c2r(x, dims, mode, last_n):
    """Complex (Hermitian, onesided on the last of ``dims``) to real, inverse direction, with
    ``last_n`` output points on the last dim."""
    return call(_c2r_op, (x,), (tuple(dims), mode, last_n), x.dtype.to_real())
