"""``fftfreq`` / ``rfftfreq`` (sample frequencies) and ``fftshift`` / ``ifftshift`` (rolls)."""

from .. import _dtype as D
from .._ops._ranges import arange
from .._ops._slicing import roll
from .._ops._util import check_tensor, norm_dim, with_out
from .._tensor import Tensor


def _freq(fname, n, d, count, dtype, layout, device, requires_grad, out):
    dt = dtype if dtype is not None else D.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if isinstance(d, Tensor):
        d = d.item()
    r = arange(count, dtype=dt, device=device)
    if fname == "fftfreq":  # frequencies n - n//2 .. n-1 are the negative ones
        r[(n + 1) // 2:] -= n
    r = r / (n * d)
    r = r.to(dt)
    if requires_grad:
        r.requires_grad_(True)
    return with_out(r, out, fname)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies ``[0, 1, ..., -1] / (d * n)`` of a signal of ``n`` points."""
    return _freq("fftfreq", n, d, n, dtype, layout, device, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The ``n // 2 + 1`` non-negative sample frequencies ``[0, 1, ..., n // 2] / (d * n)``."""
    return _freq("rfftfreq", n, d, n // 2 + 1 if n >= 0 else 0, dtype, layout, device, requires_grad, out)


def _shift(fname, input, dim, sign):
    check_tensor(input, fname)
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(norm_dim(x, input.ndim, fname) for x in dim)
    else:
        dims = (norm_dim(dim, input.ndim, fname),)
    if not dims:
        return input.clone()
    shifts = tuple((input.shape[x] // 2) if sign > 0 else -(input.shape[x] // 2) for x in dims)
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero-frequency term to the centre of ``dim`` (all dims by default)."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`."""
    return _shift("ifftshift", input, dim, -1)
