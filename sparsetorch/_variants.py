"""The Tensor methods and in-place variants an op provides, declared with the op (floor 5).

An op module says at its declaration which ``Tensor`` methods the op gives and whether it has an
in-place form; nothing restates it elsewhere::

    @method                          # x.clamp_min(...) is clamp_min(x, ...)
    def clamp_min(input, min): ...

    @method(inplace=True)            # also torch.clamp_ / x.clamp_(...)
    def clamp(input, min=None, max=None, *, out=None): ...

    clip = method(clamp, "clip", inplace=True)    # an alias, at its own line
    abs = unary("abs", ..., inplace=True)          # the declaring helpers take the same keywords

``method`` returns the function unchanged (no call layer). ``inplace=True`` derives ``op_`` with
:func:`inplace_of` (computed, then written into ``self``); ``inplace=wrap`` passes that derived
function through ``wrap`` (the fast paths of ``add_``/``mul_``...). The registry holds:

- ``METHODS``: method name -> the function whose signature the method takes (after ``self``,
  less ``out=``); the method calls the op ``_ops.<name>`` (``_tensor_methods`` writes it onto
  ``Tensor``: the one writer of Tensor attributes);
- ``FUNCTIONS``: the derived in-place functions by name (the ``_ops`` index exports them; those
  torch has at top level, such as ``torch.abs_``, become ``sparsetorch.abs_``).
"""

from . import _dispatch

__all__ = ["FUNCTIONS", "METHODS", "declare", "inplace_of", "method"]

METHODS = {}
FUNCTIONS = {}


def inplace_of(fn, name=None):
    """Derive ``op_(self, ...)`` from the functional ``op`` (computed, then written into self)."""
    name = name or fn.__name__ + "_"

    def op_(self, *args, **kwargs):
        return _dispatch.inplace(fn, self, args, kwargs, name)

    op_.__name__ = op_.__qualname__ = name
    op_.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return op_


def _register(name, fn):
    if METHODS.get(name, fn) is not fn:
        raise RuntimeError(f"Tensor.{name} is declared twice")
    METHODS[name] = fn


def declare(fn, name=None, inplace=False, method=True):
    """Register ``fn`` as the method ``name`` (default: its ``__name__``) and, with ``inplace``, the
    in-place function (and method, unless ``method=False``) ``name + "_"``; returns ``fn``."""
    name = name or fn.__name__
    if method:
        _register(name, fn)
    if inplace:
        op_ = inplace_of(fn, name + "_")
        if inplace is not True:
            op_ = inplace(op_)
        if op_.__name__ in FUNCTIONS:
            raise RuntimeError(f"{op_.__name__} is declared twice")
        FUNCTIONS[op_.__name__] = op_
        if method:
            _register(op_.__name__, fn)
    return fn


def method(fn=None, /, name=None, *, inplace=False):
    """Declare the Tensor method(s) of an op: ``@method``, ``@method("name")``,
    ``@method(inplace=True)`` on a ``def``, or ``alias = method(fn, "alias", inplace=True)``."""
    if fn is None or isinstance(fn, str):
        name = fn if isinstance(fn, str) else name
        return lambda f: declare(f, name, inplace)
    return declare(fn, name, inplace)
