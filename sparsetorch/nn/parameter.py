"""Parameter: a Tensor that a Module registers as a learnable parameter."""

from .. import _dispatch
from .._ops import creation as _creation
from .._tensor import Tensor
from ..autograd import grad_mode as _gm

__all__ = ["Buffer", "Parameter"]

_SLOTS = ("_data", "dtype", "device", "layout", "_rg", "grad", "grad_fn", "_vc", "_extra")


class Parameter(Tensor):
    r"""A kind of Tensor that is to be considered a module parameter.

    Assigning a Parameter as a Module attribute adds it to the module's parameters. The Parameter
    shares its data with ``data`` (no copy) and is always a graph leaf.

    Args:
        data (Tensor): parameter tensor (an empty tensor when ``None``).
        requires_grad (bool, optional): if the parameter requires gradient. Default: ``True``
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): data must be a Tensor, got {type(data).__name__}; "
                "wrap it with torch.tensor(...) first")
        p = object.__new__(cls)
        p._data = data._data
        p.dtype = data.dtype
        p.device = data.device
        p.layout = data.layout
        p._rg = False
        p.grad = None
        p.grad_fn = None
        if data._vc is None:
            data._vc = [0]
        p._vc = data._vc  # shares memory, so it shares the version counter
        p._extra = None
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self._rg, getattr(self, "__dict__", None) or None))

    def __deepcopy__(self, memo):
        hit = memo.get(id(self))
        if hit is not None:
            return hit
        with _gm.no_grad():
            new = Parameter(self.detach().clone(), self._rg)
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = self.grad.clone()
        d = getattr(self, "__dict__", None)
        if d:
            import copy

            new.__dict__.update(copy.deepcopy(d, memo))
        return new


def _rebuild_parameter(data, requires_grad, state):
    p = Parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


class Buffer(Tensor):
    r"""A kind of Tensor that should not be considered a model parameter (a module buffer).

    ``Buffer(data, persistent=True)``: assigning it as a Module attribute registers a buffer.
    """

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _creation.empty(0)
        b = object.__new__(cls)
        for k in _SLOTS:
            setattr(b, k, getattr(data, k))
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


del _dispatch
