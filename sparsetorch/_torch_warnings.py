"""torch's warnings, worded as torch 2.13 words them, one function each (ground floor: imports only
``warnings``). The modules where torch warns call these; tests/test_torch_warnings.py compares text
and category with torch. Where torch warns once per process (its ``TORCH_WARN_ONCE``), so do we.
"""

import warnings

__all__ = ["T_not_2d", "meshgrid_indexing", "non_leaf_grad", "uint8_index", "volatile"]

_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
    "Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")
_T_0D = "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
_T_ND = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
    "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
    "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
_MESHGRID = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
_UINT8_INDEX = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
_VOLATILE = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."

_warned_once = set()


def _once(key, message, stacklevel):
    if key not in _warned_once:
        _warned_once.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def non_leaf_grad(stacklevel=3):
    """Reading ``.grad`` of a tensor that is not a leaf, does not retain its gradient and has none
    (every time, as torch). ``stacklevel`` 3 points at the user's line from a property getter."""
    warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=stacklevel)


def T_not_2d(ndim, stacklevel=3):
    """``x.T`` on a tensor that is not 2-D (once per process for 0-D, once for the others)."""
    if ndim == 0:
        _once("T0", _T_0D, stacklevel)
    elif ndim != 2:
        _once("T", _T_ND, stacklevel)


def meshgrid_indexing(stacklevel=3):
    """``meshgrid`` without ``indexing=`` (once per process)."""
    _once("meshgrid", _MESHGRID, stacklevel)


def uint8_index(stacklevel=3):
    """Indexing with a uint8 mask (every time)."""
    warnings.warn(_UINT8_INDEX, UserWarning, stacklevel=stacklevel)


def volatile(stacklevel=3):
    """``Variable(..., volatile=True)`` (every time)."""
    warnings.warn(_VOLATILE, UserWarning, stacklevel=stacklevel)
