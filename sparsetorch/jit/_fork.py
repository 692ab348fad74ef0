"""torch.jit.fork / wait and the Future they exchange, run eagerly: ``fork`` calls the function
at once and returns a completed Future (TorchScript would run it on another thread)."""

import warnings

__all__ = ["Future", "fork", "wait"]


class Future:
    """A value that is (here: always already) computed: ``wait()``, ``value()``, ``done()``,
    ``then(callback)``, ``add_done_callback(callback)``, ``set_result``, ``set_exception``."""

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        if not self._done:
            raise RuntimeError("Future.wait(): the result was never set (sparsetorch runs "
                               "forked work eagerly, so nothing else will set it)")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        return self.wait()

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._done = result, True
        self._run_callbacks()

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._error, self._done = result, True
        self._run_callbacks()

    def then(self, callback):
        fut = Future()

        def chain(f):
            try:
                fut.set_result(callback(f))
            except Exception as e:  # noqa: BLE001 - the error travels in the Future, as torch's
                fut.set_exception(e)

        self.add_done_callback(chain)
        return fut

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _run_callbacks(self):
        cbs, self._callbacks = self._callbacks, []
        for cb in cbs:
            cb(self)


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` (now) and returns a Future holding its result."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=1)  # attributed here, as torch's: hidden by default
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - re-raised by wait(), as torch's forked task
        fut.set_exception(e)
    return fut


def wait(future):
    """The result of a Future returned by :func:`fork`."""
    return future.wait()
