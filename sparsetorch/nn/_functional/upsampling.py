"""interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) and the
deprecated upsample / upsample_nearest / upsample_bilinear.

Every mode is separable: the resize runs one spatial dim at a time as gathers
(``index_select``) weighted by per-output constants, so gradients come from those ops. The source
indices and weights follow torch's CPU kernels (nearest: ``floor(dst * scale)`` in float32;
linear: ``scale * (dst + 0.5) - 0.5`` clamped at 0, or ``dst * (in-1)/(out-1)`` with
align_corners; bicubic: the same without the clamp, A = -0.75, borders replicated; area: the
adaptive average pool's windows, as a small (out, in) averaging matrix; ``antialias=True``:
torch's PIL-style triangle / Keys a = -0.5 cubic filters, stretched when downsampling, as an
(out, in) matrix; mode ``lanczos`` (antialias only, as torch 2.13) is the Lanczos-3 filter).
"""

import math
import warnings

import numpy as np

from ... import _ops
from ..._dtype import float64, int64
from ..._ops._util import check_tensor

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _is_integer(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or (
        hasattr(x, "ndim") and getattr(x, "ndim", 1) == 0 and not x.dtype.is_floating_point)


def _scale(in_size, out_size, scale, ftype, align_corners=False):
    if align_corners:
        return ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(in_size) / ftype(out_size)


def _nearest_index(in_size, out_size, scale, exact):
    j = np.arange(out_size)
    s = _scale(in_size, out_size, scale, np.float32)
    if exact:
        src = np.floor(((j + 0.5) * np.float64(s)).astype(np.float32))
    else:
        if out_size == in_size:
            return j
        if out_size == 2 * in_size:
            return j >> 1
        src = np.floor(j.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _linear_taps(in_size, out_size, scale, align_corners, ftype):
    if out_size == in_size:
        j = np.arange(out_size)
        return [(j, np.ones(out_size, ftype))]
    s = _scale(in_size, out_size, scale, ftype, align_corners)
    j = np.arange(out_size).astype(ftype)
    src = s * j if align_corners else np.maximum(s * (j + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < in_size - 1)
    lam1 = np.clip(src - i0.astype(ftype), 0, 1).astype(ftype)
    return [(i0, (ftype(1) - lam1).astype(ftype)), (i1, lam1)]


def _cubic_taps(in_size, out_size, scale, align_corners, ftype):
    s = _scale(in_size, out_size, scale, ftype, align_corners)
    j = np.arange(out_size).astype(ftype)
    src = s * j if align_corners else s * (j + ftype(0.5)) - ftype(0.5)
    i = np.floor(src)
    t = (src - i).astype(ftype)
    i = i.astype(np.int64)
    a = ftype(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    ws = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [(np.clip(i - 1 + k, 0, in_size - 1), ws[k].astype(ftype)) for k in range(4)]


def _area_matrix(in_size, out_size, ftype):
    m = np.zeros((out_size, in_size), ftype)
    for o in range(out_size):
        lo = (o * in_size) // out_size
        hi = -((-(o + 1) * in_size) // out_size)
        m[o, lo:hi] = ftype(1.0) / ftype(hi - lo)
    return m


def _aa_matrix(in_size, out_size, scale, align_corners, mode, ftype):
    """torch's antialiased (PIL-style) resampling weights as an (out, in) matrix: a triangle
    (bilinear), Keys cubic with a = -0.5 (bicubic) or Lanczos-3 filter, stretched by the scale
    when downsampling, normalised per output."""
    s = float(_scale(in_size, out_size, scale, ftype, align_corners))
    interp = {"bilinear": 2.0, "bicubic": 4.0, "lanczos": 6.0}[mode]
    support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
    inv = 1.0 / s if s >= 1.0 else 1.0

    def filt(x):
        x = np.abs(x)
        if mode == "lanczos":
            return np.where(x < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
        if mode == "bilinear":
            return np.maximum(0.0, 1.0 - x)
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))

    m = np.zeros((out_size, in_size), np.float64)
    for i in range(out_size):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        w = filt((np.arange(lo, hi) - center + 0.5) * inv)
        tot = w.sum()
        m[i, lo:hi] = w / tot if tot != 0 else w
    return m.astype(ftype)


def _apply_taps(x, dim, taps):
    shape = (-1,) + (1,) * (x.ndim - dim - 1)
    out = None
    for idx, w in taps:
        g = x.index_select(dim, _ops.tensor(idx, dtype=int64, device=x.device))
        if not np.all(w == 1):
            g = g * _ops.tensor(w, dtype=x.dtype, device=x.device).view(shape)
        out = g if out is None else out + g
    return out


def _resize(x, sizes, scales, mode, align_corners, antialias=False):
    ftype = np.float64 if x.dtype is float64 else np.float32
    for d, out_size in enumerate(sizes):
        dim = 2 + d
        in_size = x.shape[dim]
        scale = None if scales is None else scales[d]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(in_size, out_size, scale, mode == "nearest-exact")
            if not (out_size == in_size and np.array_equal(idx, np.arange(in_size))):
                x = x.index_select(dim, _ops.tensor(idx, dtype=int64, device=x.device))
        elif antialias:
            m = _ops.tensor(_aa_matrix(in_size, out_size, scale, align_corners, mode, ftype),
                            dtype=x.dtype, device=x.device)
            x = _ops.matmul(x.movedim(dim, -1), m.t()).movedim(-1, dim)
        elif mode == "area":
            if out_size != in_size:
                m = _ops.tensor(_area_matrix(in_size, out_size, ftype), dtype=x.dtype,
                                device=x.device)
                x = _ops.matmul(x.movedim(dim, -1), m.t()).movedim(-1, dim)
        elif mode == "bicubic":
            x = _apply_taps(x, dim, _cubic_taps(in_size, out_size, scale, align_corners, ftype))
        else:
            if out_size != in_size:
                x = _apply_taps(x, dim,
                                _linear_taps(in_size, out_size, scale, align_corners, ftype))
    return x


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    r"""Down/up samples the input to the given ``size`` or by ``scale_factor`` with ``mode``
    (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area); input
    ``(N, C, d1[, d2[, d3]])``."""
    check_tensor(input, "interpolate")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out = [math.floor(float(input.shape[i + 2]) * scales[i]) for i in range(dim)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    known = mode in ("nearest", "nearest-exact", "area", "lanczos") or mode in _NEEDS
    if not known or input.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
            f"modes: {_MODES} (got {mode})")
    if mode == "lanczos" and input.ndim != 4:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
            f"modes: {_MODES} (got {mode})")
    if mode in _NEEDS and input.ndim != _NEEDS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode]}D input")
    if out is None:
        out = [int(float(input.shape[i + 2]) * scales[i]) for i in range(dim)]
    if any(o <= 0 for o in out):
        names = ("D", "H", "W")[3 - dim:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{n}: {v}" for n, v in zip(names, input.shape[2:])) + (") and output (" if dim == 1 else ") output (")
            + ", ".join(f"{n}: {v}" for n, v in zip(names, out)) + ")")
    if not input.dtype.is_floating_point and mode != "nearest" and mode != "nearest-exact":
        raise NotImplementedError(f"\"upsample_{mode}\" not implemented for "
                                  f"'{input.dtype}'")
    return _resize(input, out, scales, mode, align_corners, antialias)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    r"""Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)``."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    r"""Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    r"""Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
