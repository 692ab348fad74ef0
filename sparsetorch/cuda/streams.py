"""torch.cuda.Stream / Event / current_stream / default_stream / stream / set_stream, on CuPy.

A :class:`Stream` wraps a ``cupy.cuda.Stream`` (torch's streams are non-blocking: they do not
synchronise with the legacy default stream) and an :class:`Event` a ``cupy.cuda.Event``.
``with sparsetorch.cuda.stream(s):`` makes ``s`` CuPy's current stream, so the kernels
sparsetorch launches in the block run on it. Without a GPU, creating a Stream or an Event raises
torch's RuntimeError, ``current_stream``/``default_stream`` raise as the other CUDA calls do,
and ``stream(None)`` / ``set_stream(None)`` do nothing, as in torch.

On the fake CUDA devices (``SPARSETORCH_FAKE_CUDA``) everything runs at once on the host: a
stream is always idle, an event records the host clock (``elapsed_time`` in milliseconds).
"""

import time

from .. import _backend

__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]


def _cuda():
    from ._runtime import _index, _need_cuda

    return _index, _need_cuda


def _device_index(device, fname):
    _index, _need_cuda = _cuda()
    _need_cuda(fname)
    i = _index(device, fname)
    from ._runtime import _check_index

    _check_index(i, fname)
    return i


def _require(what):
    from ._runtime import is_available

    if not is_available():
        raise RuntimeError(f"sparsetorch.cuda.{what} requires CUDA support: no CUDA device is "
                           f"available ({_backend.cuda_unavailable_reason()})")


class Stream:
    """A CUDA stream: an ordered queue of kernels on one device.

    Args: ``device`` (default: the current device), ``priority`` (lower is higher priority;
    0 is the default)."""

    def __init__(self, device=None, priority=0, **kwargs):
        _require("Stream")
        self.device_index = _device_index(device, "Stream")
        self.priority = priority
        if _backend._FAKE:
            self._cs = None
        else:
            import cupy

            with cupy.cuda.Device(self.device_index):
                self._cs = cupy.cuda.Stream(non_blocking=True,
                                            priority=priority if priority else None)

    @classmethod
    def _wrap(cls, cs, index):
        s = cls.__new__(cls)
        s._cs, s.device_index, s.priority = cs, index, 0
        return s

    @property
    def device(self):
        from .._device import device

        return device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The ``cudaStream_t`` handle as an int (0: the legacy default stream)."""
        return 0 if self._cs is None else int(self._cs.ptr)

    def query(self):
        """True when every kernel queued on the stream has finished."""
        return True if self._cs is None else bool(self._cs.done)

    def synchronize(self):
        """Waits for every kernel queued on the stream."""
        if self._cs is not None:
            self._cs.synchronize()

    def wait_event(self, event):
        """Makes later work on this stream wait for ``event``."""
        if self._cs is not None and event._ce is not None:
            self._cs.wait_event(event._ce)

    def wait_stream(self, stream):
        """Makes later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records ``event`` (a new one if None) on this stream; returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):
        self._ctx = StreamContext(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def __eq__(self, other):
        return (isinstance(other, Stream) and self.device_index == other.device_index
                and self.cuda_stream == other.cuda_stream)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return (f"<sparsetorch.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")


class Event:
    """A CUDA event: a marker in a stream, to wait on or to time between.

    Args: ``enable_timing`` (needed by :meth:`elapsed_time`), ``blocking`` (``synchronize``
    blocks the thread instead of spinning), ``interprocess``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        _require("Event")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._recorded = False
        self._host_time = None
        if _backend._FAKE:
            self._ce = None
        else:
            import cupy

            self._ce = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                       interprocess=interprocess)

    def record(self, stream=None):
        """Records the event on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        self._recorded = True
        if self._ce is None:
            self._host_time = time.perf_counter()
        else:
            self._ce.record(stream._cs)

    def wait(self, stream=None):
        """Makes later work on ``stream`` (default: the current one) wait for this event."""
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self):
        """True when the work recorded before the event has finished."""
        return True if self._ce is None else bool(self._ce.done)

    def synchronize(self):
        """Waits until the work recorded before the event has finished."""
        if self._ce is not None and self._recorded:
            self._ce.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, with
        ``enable_timing=True``)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if self._ce is None:
            return (end_event._host_time - self._host_time) * 1000.0
        import cupy

        end_event._ce.synchronize()
        return float(cupy.cuda.get_elapsed_time(self._ce, end_event._ce))

    def ipc_handle(self):
        raise NotImplementedError("sparsetorch.cuda.Event.ipc_handle: interprocess events are "
                                  "not supported")

    def __repr__(self):
        return f"<sparsetorch.cuda.Event enable_timing={self.enable_timing}>"


def current_stream(device=None):
    """The stream sparsetorch's kernels are queued on for ``device`` (default: current)."""
    i = _device_index(device, "current_stream")
    if _backend._FAKE:
        return Stream._wrap(None, i)
    import cupy

    with cupy.cuda.Device(i):
        return Stream._wrap(cupy.cuda.get_current_stream(), i)


def default_stream(device=None):
    """The default (legacy, null) stream of ``device`` (default: current)."""
    i = _device_index(device, "default_stream")
    if _backend._FAKE:
        return Stream._wrap(None, i)
    import cupy

    return Stream._wrap(cupy.cuda.Stream.null, i)


def set_stream(stream):
    """Makes ``stream`` the current stream (None: do nothing)."""
    if stream is None:
        return
    if stream._cs is not None:
        import cupy

        with cupy.cuda.Device(stream.device_index):
            stream._cs.use()


class StreamContext:
    """Context manager that makes ``stream`` current for its block (None: do nothing), then
    restores the previous current stream."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        s = self.stream
        if s is None or s._cs is None:
            return s
        self._prev = current_stream(s.device_index)
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self._prev is not None:
            set_stream(self._prev)
            self._prev = None
        return False


def stream(stream):
    """``with sparsetorch.cuda.stream(s):`` queues the block's kernels on ``s``."""
    return StreamContext(stream)
