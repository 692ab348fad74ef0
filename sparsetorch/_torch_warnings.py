"""torch's warnings, worded as torch 2.13 words them, one function each (ground floor: imports only
the standard library). The modules where torch warns call these; tests/test_torch_warnings.py
compares text and category with torch. Where torch warns once per process (its
``TORCH_WARN_ONCE``), so do we. A warning points at the first caller outside sparsetorch, however
many library frames (op, helper, numpy-kwargs wrapper, autocast policy) lie between.
"""

import os
import sys
import warnings

__all__ = [
    "T_not_2d", "cross_default_dim", "degrees_of_freedom", "kl_div_mean", "meshgrid_indexing",
    "list_of_ndarrays", "non_leaf_grad", "uint8_index", "volatile",
]

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
_CROSS = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
    "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
    "that of linalg.cross in a future release.")
_DOF = ("{}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
        "factor (input numel divided by output numel).")
_KL_DIV_MEAN = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
_LIST_OF_NDARRAYS = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting "
    "the list to a single numpy.ndarray with numpy.array() before converting to a tensor.")

_warned_once = set()
_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warn(message, category=UserWarning):
    """``warnings.warn`` attributed to the user's line: the first frame outside the package."""
    f, level = sys._getframe(1), 2  # stacklevel 2 is the frame that called _warn
    while f is not None and (f.f_code.co_filename.startswith(_PKG)
                             or f.f_code.co_filename.startswith("<numpy_kwargs")):
        f, level = f.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _once(key, message):
    if key not in _warned_once:
        _warned_once.add(key)
        _warn(message)


def non_leaf_grad():
    """Reading ``.grad`` of a tensor that is not a leaf, does not retain its gradient and has none
    (every time, as torch)."""
    _warn(_NON_LEAF_GRAD)


def T_not_2d(ndim):
    """``x.T`` on a tensor that is not 2-D (once per process for 0-D, once for the others)."""
    if ndim == 0:
        _once("T0", _T_0D)
    elif ndim != 2:
        _once("T", _T_ND)


def meshgrid_indexing():
    """``meshgrid`` without ``indexing=`` (once per process)."""
    _once("meshgrid", _MESHGRID)


def uint8_index():
    """Indexing with a uint8 mask (every time)."""
    _warn(_UINT8_INDEX)


def volatile():
    """``Variable(..., volatile=True)`` (every time)."""
    _warn(_VOLATILE)


def cross_default_dim():
    """``cross`` without ``dim`` (once per process)."""
    _once("cross", _CROSS)


def degrees_of_freedom(fname):
    """``var``/``std`` (``fname``) whose correction leaves no degree of freedom (every time)."""
    _warn(_DOF.format(fname))


def kl_div_mean():
    """``F.kl_div(..., reduction='mean')`` (every time)."""
    _warn(_KL_DIV_MEAN)


def list_of_ndarrays():
    """``tensor``/``as_tensor`` of a sequence holding NumPy arrays (once per process)."""
    _once("list_of_ndarrays", _LIST_OF_NDARRAYS)
