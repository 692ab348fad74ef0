"""The public transforms of ``sparsetorch.fft`` (torch.fft): argument checks as torch, the
input resized to ``n`` / ``s``, then one of the three primitives of ``_core``."""

from .. import _dtype as D
from .._layout import strided
from .._ops._util import check_tensor, norm_dim, with_out
from .._ops.pointwise import conj
from ._core import _pad_to, c2c, c2r, r2c, to_complex

_MODES = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _mode(norm, forward):
    """The scale mode (0 none, 1 1/sqrt(n), 2 1/n) of ``norm`` for a forward / inverse transform."""
    if norm not in _MODES:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    m = _MODES[norm]
    return m if forward else 2 - m


def _prepare(x, fname, real_only=False, complex_out=False):
    """``x`` in a floating dtype torch's FFTs accept (integers -> the default float dtype)."""
    check_tensor(x, fname)
    if x.layout is not strided:
        raise NotImplementedError(
            f"fft_{fname}: not implemented for layout {x.layout.name}; sparsetorch never densifies "
            f"silently: call .to_dense() on the input first.")
    dt = x.dtype
    if real_only and dt.is_complex:  # torch's three wordings
        if fname in ("ihfft2", "ihfftn"):
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {dt.scalar_name}")
        what = "real" if fname in ("rfft", "ihfft") else "real-valued"
        name = "rfftn" if fname in ("rfft2", "rfftn") else fname
        raise RuntimeError(f"{name} expects a {what} input tensor, but got {dt.scalar_name}")
    if not (dt.is_floating_point or dt.is_complex):
        x = x.to(D.get_default_dtype())
    elif dt.name in ("float16", "bfloat16"):
        raise RuntimeError(f"Unsupported dtype {dt.scalar_name}")
    if complex_out and not x.dtype.is_complex:
        x = to_complex(x)
    return x


def _check_n(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _dim1(x, dim, fname):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return norm_dim(dim, x.ndim, fname)


def _dims_sizes(x, s, dim, fname):
    """(dims, sizes) as torch's fftn resolves ``s`` and ``dim``; sizes[i] is None for -1."""
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if s is not None:
        s = tuple(int(v) for v in s)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
    if dim is None:
        dims = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        if x.ndim == 0 and dim:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dims = tuple(norm_dim(d, x.ndim, fname) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    sizes = [None] * len(dims)
    if s is not None:
        for i, v in enumerate(s):
            if v != -1:
                _check_n(v)
                sizes[i] = v
    return dims, sizes


def _resize(x, dims, sizes):
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _pad_to(x, d, n)
    return x


# ---- the n-dimensional forms; the 1-d and 2-d ones call them ----

def _c2c_n(fname, forward, input, s, dim, norm, out):
    x = _prepare(input, fname)
    dims, sizes = _dims_sizes(x, s, dim, fname)
    x = _resize(x, dims, sizes)
    mode = _mode(norm, forward)
    r = c2c(x, dims, mode, forward) if x.dtype.is_complex else r2c(x, dims, mode, forward, False)
    return with_out(r, out, fname)


def _r2c_n(fname, forward, input, s, dim, norm, out):
    x = _prepare(input, fname, real_only=True)
    dims, sizes = _dims_sizes(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(x, dims, sizes)
    return with_out(r2c(x, dims, _mode(norm, forward), forward, True), out, fname)


def _c2r_n(fname, hermitian_fwd, input, s, dim, norm, out):
    """irfftn (``hermitian_fwd`` False) or hfftn (True: the conjugate input, forward scaling)."""
    x = _prepare(input, fname, complex_out=True)
    dims, sizes = _dims_sizes(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    sizes[-1] = last // 2 + 1
    x = _resize(x, dims, sizes)
    if hermitian_fwd:
        x = conj(x)
    return with_out(c2r(x, dims, _mode(norm, hermitian_fwd), last), out, fname)


def _one(input, n, dim, fname):
    """(s, dim) of the 1-d form."""
    _check_n(n)
    d = _dim1(input, dim, fname)
    return (None if n is None else (n,)), (d,)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of ``input`` (complex result)."""
    check_tensor(input, "fft")
    s, d = _one(input, n, dim, "fft")
    return _c2c_n("fft", True, input, s, d, norm, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform of ``input``."""
    check_tensor(input, "ifft")
    s, d = _one(input, n, dim, "ifft")
    return _c2c_n("ifft", False, input, s, d, norm, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional FFT of real ``input``: the ``n // 2 + 1`` non-negative frequencies."""
    check_tensor(input, "rfft")
    s, d = _one(input, n, dim, "rfft")
    return _r2c_n("rfft", True, input, s, d, norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (m - 1)``)."""
    check_tensor(input, "irfft")
    s, d = _one(input, n, dim, "irfft")
    return _c2r_n("irfft", False, input, s, d, norm, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its one-sided half: a real result."""
    check_tensor(input, "hfft")
    s, d = _one(input, n, dim, "hfft")
    return _c2r_n("hfft", True, input, s, d, norm, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the one-sided inverse FFT of a real signal."""
    check_tensor(input, "ihfft")
    s, d = _one(input, n, dim, "ihfft")
    return _r2c_n("ihfft", False, input, s, d, norm, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional discrete Fourier transform of ``input``."""
    return _c2c_n("fft2", True, input, s, dim, norm, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional inverse discrete Fourier transform of ``input``."""
    return _c2c_n("ifft2", False, input, s, dim, norm, out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional discrete Fourier transform of ``input``."""
    return _c2c_n("fftn", True, input, s, dim, norm, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional inverse discrete Fourier transform of ``input``."""
    return _c2c_n("ifftn", False, input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional FFT of real ``input`` (one-sided on the last dim)."""
    return _r2c_n("rfft2", True, input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`rfft2`."""
    return _c2r_n("irfft2", False, input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional FFT of real ``input`` (one-sided on the last of ``dim``)."""
    return _r2c_n("rfftn", True, input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn`."""
    return _c2r_n("irfftn", False, input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional FFT of a Hermitian-symmetric signal given by its one-sided half."""
    return _c2r_n("hfft2", True, input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`hfft2`."""
    return _r2c_n("ihfft2", False, input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional FFT of a Hermitian-symmetric signal given by its one-sided half."""
    return _c2r_n("hfftn", True, input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`hfftn`."""
    return _r2c_n("ihfftn", False, input, s, dim, norm, out)

