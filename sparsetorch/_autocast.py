"""Autocast state and the cast at the entry of the listed ops (torch.amp, CPU semantics).

The state is per thread (ContextVars, as torch's thread-local autocast flags). An op on one of
torch's autocast lists checks one flag at its entry, ``active()``; only when it is set does
:func:`run` cast the op's floating tensor arguments (float64 ones excepted, as torch) to the
autocast dtype (``LOWER`` list: matmul, mm, bmm, addmm, linear, conv*, ...) or to float32 (``FP32``
list: losses, prod, cdist, linalg, ...) or to the widest floating dtype among them (``PROMOTE``:
index_copy), and call the op with autocast excluded, so the ops it is built from are not cast
again (``EXCLUDE``: ops built from listed ops whose torch counterpart is
not on a list; they run their parts uncast).

Ground floor: imports only ``_dtype``; tensors are cast through their own ``.to`` method.
The public API (``sparsetorch.autocast``, ``sparsetorch.amp``) is in ``sparsetorch/amp/``.
"""

import contextvars
import functools

from . import _dtype as D

__all__ = ["EXCLUDE", "FP32", "LOWER", "PROMOTE", "active", "policy", "refresh", "run", "state"]

LOWER, FP32, PROMOTE, EXCLUDE = "lower", "fp32", "promote", "exclude"

# the autocast dtype of each device type before anyone sets one (torch 2.13)
DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16}


class State:
    """One thread's autocast settings (torch keeps the same per thread)."""

    __slots__ = ("cache", "cache_enabled", "dtype", "enabled", "nesting")

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(DEFAULT_DTYPE)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(leaf) -> (leaf, its cast): weights are cast once per autocast region


_STATE = contextvars.ContextVar("sparsetorch_autocast_state", default=None)
_ACTIVE = contextvars.ContextVar("sparsetorch_autocast_active", default=False)
active = _ACTIVE.get  # the one check a listed op makes when autocast is off


def state():
    s = _STATE.get()
    if s is None:
        s = State()
        _STATE.set(s)
    return s


def refresh(s):
    """Re-derive the fast flag after ``s.enabled`` changed."""
    _ACTIVE.set(s.enabled["cpu"] or s.enabled["cuda"])


def run(fn, policy, args, kwargs):
    """Call the listed op ``fn`` under autocast: cast its arguments by ``policy``, then run it
    with autocast excluded."""
    s = state()
    dev = _device_type(args, kwargs)
    if dev is not None and s.enabled.get(dev, False) and policy is not EXCLUDE:
        target = s.dtype[dev] if policy is LOWER else D.float32 if policy is FP32 else _widest(args)
        cache = s.cache if s.cache_enabled and policy is LOWER else None
        args = tuple([_cast(a, target, dev, cache) for a in args])
        if kwargs:
            kwargs = {k: _cast(v, target, dev, cache) for k, v in kwargs.items()}
    token = _ACTIVE.set(False)
    try:
        return fn(*args, **kwargs) if kwargs else fn(*args)
    finally:
        _ACTIVE.reset(token)


def policy(kind):
    """Decorator for a listed public op off the hot path (hot ones, such as ``mm``, make the
    ``active()`` check in their own body and call :func:`run` themselves)."""

    def deco(fn):
        def op(*args, **kwargs):
            if _ACTIVE.get():
                return run(fn, kind, args, kwargs)
            return fn(*args, **kwargs)

        return functools.update_wrapper(op, fn)

    return deco


def _widest(args):
    w = None
    for a in args:
        d = getattr(a, "dtype", None)
        if d.__class__ is D.dtype and d.is_floating_point:
            w = d if w is None else D.promote_types(w, d)
    return w


def _device_type(args, kwargs):
    for a in args:
        d = _tensor_device(a)
        if d is not None:
            return d
    for a in kwargs.values() if kwargs else ():
        d = _tensor_device(a)
        if d is not None:
            return d
    return None


def _tensor_device(x):
    if x.__class__ is list or x.__class__ is tuple:
        for y in x:
            d = _tensor_device(y)
            if d is not None:
                return d
        return None
    if getattr(x, "dtype", None).__class__ is D.dtype and hasattr(x, "device"):
        return x.device.type
    return None


def _cast(x, target, dev, cache):
    if x.__class__ is list or x.__class__ is tuple:
        return x.__class__([_cast(y, target, dev, cache) for y in x])
    dt = getattr(x, "dtype", None)
    if (dt.__class__ is not D.dtype or not dt.is_floating_point or dt is D.float64
            or dt is target or not hasattr(x, "device") or x.device.type != dev):
        return x
    if cache is not None and dt is D.float32 and x.requires_grad and x.is_leaf:
        hit = cache.get(id(x))
        if hit is not None and hit[0] is x:  # as torch: reused until the region ends
            return hit[1]
        c = x.to(target)
        cache[id(x)] = (x, c)
        return c
    return x.to(target)
