"""Grad mode: whether ops record the graph. Thread-local (a ContextVar), as in torch."""

import contextvars
import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]

GRAD_ENABLED = contextvars.ContextVar("sparsetorch_grad_enabled", default=True)
is_enabled = GRAD_ENABLED.get


def is_grad_enabled():
    return GRAD_ENABLED.get()


class _GradModeCtx:
    """Context manager and decorator that sets grad mode to ``self._mode`` while active."""

    _mode = True

    def __enter__(self):
        self._tokens = getattr(self, "_tokens", [])
        self._tokens.append(GRAD_ENABLED.set(self._mode))
        return None

    def __exit__(self, *exc):
        GRAD_ENABLED.reset(self._tokens.pop())
        return False

    def __call__(self, fn):
        mode_cls, args = type(self), self._ctor_args()

        if _is_generator(fn):
            @functools.wraps(fn)
            def gen_wrapper(*a, **k):
                gen = fn(*a, **k)
                with mode_cls(*args):
                    value = next(gen)
                while True:
                    try:
                        with mode_cls(*args):
                            value = gen.send((yield value))
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with mode_cls(*args):
                return fn(*a, **k)
        return wrapper

    def _ctor_args(self):
        return ()

    def clone(self):
        return type(self)(*self._ctor_args())


def _is_generator(fn):
    import inspect

    return inspect.isgeneratorfunction(fn)


class no_grad(_GradModeCtx):
    """Disable gradient recording (context manager or decorator)."""

    _mode = False

    def __init__(self, orig_func=None):
        # allow both ``@no_grad`` and ``@no_grad()``
        self._orig = orig_func

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):
            self.__init__()
            return self(orig_func)
        return self


class enable_grad(no_grad):
    """Enable gradient recording (context manager or decorator)."""

    _mode = True


class inference_mode(no_grad):
    """Like ``no_grad`` (sparsetorch has no separate inference tensors)."""

    def __new__(cls, mode=True):
        if callable(mode):
            self = object.__new__(cls)
            self._mode = False
            return self(mode)
        return object.__new__(cls)

    def __init__(self, mode=True):
        self._mode = not mode

    def _ctor_args(self):
        return (not self._mode,)


class set_grad_enabled(_GradModeCtx):
    """Set grad mode on or off; works as a function call, a context manager and a decorator."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): mode must be a bool, got {type(mode).__name__}")
        self._mode = mode
        self._prev_token = GRAD_ENABLED.set(mode)  # takes effect immediately, as in torch

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        GRAD_ENABLED.reset(self._prev_token)
        return False

    def _ctor_args(self):
        return (self._mode,)

    def __call__(self, fn):
        GRAD_ENABLED.reset(self._prev_token)  # decorator use: don't leave the mode changed
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*a, **k):
            tok = GRAD_ENABLED.set(mode)
            try:
                return fn(*a, **k)
            finally:
                GRAD_ENABLED.reset(tok)
        return wrapper
