"""Grad mode: whether ops record the graph. Thread-local (a ContextVar), as in torch.

``no_grad``, ``enable_grad``, ``inference_mode`` and ``set_grad_enabled`` work as context managers
and as decorators (with or without parentheses where torch allows it), including on generator
functions, where the mode holds while the generator body runs and not while it is suspended.
"""

import contextvars
import functools
import inspect

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]

# A ContextVar is per thread (a new thread starts from the default, grad enabled, as in torch)
# and its .get() is a single C call, cheap enough for the dispatcher's hot path.
GRAD_ENABLED = contextvars.ContextVar("sparsetorch_grad_enabled", default=True)
is_enabled = GRAD_ENABLED.get


def is_grad_enabled():
    """Returns True if grad mode is currently enabled."""
    return GRAD_ENABLED.get()


# ---- the shared context-manager/decorator machinery ----

class _GradMode:
    """Sets grad mode to ``self._mode`` while active.

    Re-entrant: each ``__enter__`` pushes the previous mode and ``__exit__`` restores it, so one
    instance may be nested or reused (``with ctx: ... with ctx: ...``).
    """

    _mode = False

    def __enter__(self):
        self.__dict__.setdefault("_prev", []).append(GRAD_ENABLED.get())
        GRAD_ENABLED.set(self._mode)

    def __exit__(self, exc_type, exc, tb):
        GRAD_ENABLED.set(self._prev.pop())
        return False

    def clone(self):
        """A fresh instance with the same settings (used for each decorated call)."""
        new = object.__new__(type(self))
        new._mode = self._mode
        return new

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(
                f"{type(self).__name__} cannot decorate a class; decorate its methods instead"
            )
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorate_context


def _wrap_generator(make_ctx, func):
    """Run every step of the generator ``func`` (send, throw, close) inside a fresh context."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException as e:  # forward throw() into the wrapped generator
                    with make_ctx():
                        response = gen.throw(e)
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _NoParamMode(_GradMode):
    """Allows both ``@mode`` and ``@mode()`` (torch's ``_NoParamDecoratorContextManager``)."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is None:
            return self
        return self(orig_func)

    def __init__(self, orig_func=None):
        pass


# ---- the public modes ----

class no_grad(_NoParamMode):
    """Context manager (and decorator) that disables gradient calculation.

    Results computed inside have ``requires_grad=False`` even when the inputs require grad.

    >>> x = sparsetorch.ones(2, requires_grad=True)
    >>> with sparsetorch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False


class enable_grad(_NoParamMode):
    """Context manager (and decorator) that enables gradient calculation inside ``no_grad``."""

    _mode = True


class inference_mode(_GradMode):
    """``inference_mode(True)`` disables grad like ``no_grad``; ``inference_mode(False)`` enables
    it.

    sparsetorch has no separate inference tensors, so this is grad mode only (torch sets grad
    mode to ``not mode`` on entry, which is what happens here too).
    """

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if isinstance(mode, bool):
            self._mode = not mode
            return self
        self._mode = False
        return self(mode)  # bare ``@inference_mode``

    def __init__(self, mode=True):
        pass


class set_grad_enabled(_GradMode):
    """Sets grad mode on or off: as a function call, a context manager, or a decorator.

    Called as a function it takes effect immediately (as in torch); used with ``with`` the
    previous mode is restored on exit; used as ``@set_grad_enabled(False)`` it applies to calls.
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(
                "set_grad_enabled(): argument 'mode' (position 1) must be bool, not "
                f"{type(mode).__name__}"
            )
        self._mode = mode
        self._prev = [GRAD_ENABLED.get()]
        GRAD_ENABLED.set(mode)

    def __enter__(self):
        """The mode was already set by ``__init__``; ``__exit__`` restores the one before it."""
        return None

    def clone(self):
        ctx = object.__new__(_GradMode)  # a plain mode context: enter sets, exit restores
        ctx._mode = self._mode
        return ctx

    def __call__(self, func):
        GRAD_ENABLED.set(self._prev[0])  # decorating must not leave the mode changed
        return _GradMode.__call__(self, func)

