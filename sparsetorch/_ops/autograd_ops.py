"""Internal differentiable ops used by the autograd machinery (copy_slices for in-place on views).

When an in-place op writes through a view ``v = view_fn(base)``, the base changed too, so its
history must change (PyTorch's CopySlices): the new base is "the old base with the view region
replaced by ``src``" (``src`` = the in-place op's result). The memory is already updated, so the
forward returns the base as it is; only the gradient routing is new.
"""

from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from ..autograd.grad_mode import no_grad

__all__ = []


def _view_mask(grad, view_fn):
    """A bool tensor shaped like ``grad``: True on the region that ``view_fn`` selects."""
    from .creation import zeros

    mask = zeros(tuple(grad.shape), dtype=D.bool, device=grad.device)
    with no_grad():
        region = view_fn(mask)
    region._data[...] = True  # region shares mask's memory (view_fn only builds views)
    return mask


def _copy_slices_base_backward(grad, view_fn):
    """The old base only reaches the output outside the view region: zero the region there."""
    from .pointwise import where

    if grad.dtype.is_complex:
        return _complex_outside(grad, view_fn)
    return where(_view_mask(grad, view_fn), 0.0, grad)


def _complex_outside(grad, view_fn):
    """``grad`` with the view region zeroed, per real component: a view may select only the
    real or imaginary parts (``x.real``, ``x.imag``)."""
    from .creation import ones
    from .complex_views import view_as_complex, view_as_real

    keep = ones(tuple(grad.shape) + (2,), dtype=grad.dtype.to_real(), device=grad.device)
    with no_grad():
        region = view_fn(view_as_complex(keep))
    region._data[...] = 0  # keep's memory: the (re, im) pairs the view covers
    return view_as_complex(view_as_real(grad.contiguous()) * keep)


_copy_slices_op = defop(
    "copy_slices",
    {(strided, strided): lambda be, base, src, view_fn: base},
    inputs=("base", "src"), params=("view_fn",),
    grads={"base": _copy_slices_base_backward, "src": lambda grad, view_fn: view_fn(grad)},
    holomorphic=False,  # view_fn may be view_as_real / real / imag: no conj around it
)


def copy_slices(base, src, view_fn):
    """``base`` (already holding ``src`` in its ``view_fn`` region) with CopySlices history.

    The result shares ``base``'s payload. Gradients: ``base`` gets ``grad`` with the view
    region zeroed; ``src`` gets ``view_fn(grad)``.
    """
    return call(_copy_slices_op, (base, src), (view_fn,))
