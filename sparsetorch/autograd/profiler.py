"""The op profiler (torch.autograd.profiler): ``profile``, ``record_function``, ``emit_nvtx``.

While a ``profile`` runs, :data:`ACTIVE` is the recorder; the dispatcher (``_dispatch.call``),
the binary/matmul/in-place fast paths and the backward engine test ``ACTIVE is not None`` once
per op, so profiling off costs one module-attribute check. When it is on, the fast paths step
aside to ``call``, which opens a range named ``aten::<op>`` around the op (nested ops become its
``cpu_children``); the engine opens ``autograd::engine::evaluate_function: <Node>`` and
``<Node>`` around each backward node, as torch names them.
"""

import functools
import os
import sys
import threading
import time
import warnings

from .. import _backend
from .profiler_util import EventList, FunctionEvent

__all__ = [
    "profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent",
    "ACTIVE",
]

ACTIVE = None  # the _Recorder while some profile() runs; None: profiling off
_LOCK = threading.Lock()
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_now = time.perf_counter_ns


class _Range:
    """A range being recorded (turned into a FunctionEvent when its profile stops)."""

    __slots__ = ("id", "name", "tid", "start", "end", "shapes", "stack", "user", "mem", "parent")


class _Recorder:
    """Collects ranges for every open profile (they nest: each takes the ranges opened while it
    ran). Per-thread stacks give each range its parent."""

    def __init__(self):
        self.ranges = []
        self.sessions = []
        self.local = threading.local()
        self.next_id = 0
        self.shapes = self.memory = self.stacks = False

    def _thread(self):
        loc = self.local
        st = getattr(loc, "stack", None)
        if st is None:
            st = loc.stack = []
            loc.pending = None
            loc.tid = threading.get_ident()
        return loc

    def begin(self, name, shapes=None, user=False):
        loc = self._thread()
        r = _Range()
        r.id = self.next_id
        self.next_id += 1
        r.name = name
        r.tid = loc.tid
        r.shapes = shapes
        r.user = user
        r.mem = 0
        r.end = None
        r.stack = _user_stack() if self.stacks else None
        r.parent = loc.stack[-1] if loc.stack else None
        loc.stack.append(r)
        self.ranges.append(r)
        r.start = _now()
        return r

    def end(self, r):
        t = _now()
        r.end = t
        st = self._thread().stack
        if r not in st:  # a range of an earlier session, or closed already
            return
        while st:  # close ranges left open by an error inside this one
            top = st.pop()
            if top is r:
                break
            if top.end is None:
                top.end = t

    # ---- the dispatcher's hook: call() re-enters itself once, unprofiled ----

    def outer(self, op, inputs):
        """False for the re-entry of a call this recorder just opened a range for."""
        loc = self._thread()
        if loc.pending is inputs:
            loc.pending = None
            return False
        return True

    def run_op(self, call, op, inputs, params, out_dtype, compute_dtype):
        r = self.begin("aten::" + op.name, _shapes(inputs, params) if self.shapes else None)
        loc = self.local
        loc.pending = inputs
        try:
            out = call(op, inputs, params, out_dtype, compute_dtype)
        finally:
            loc.pending = None
            self.end(r)
        if self.memory:
            r.mem = _nbytes(out)
        return out

    # ---- a public function that is not one op (linear, addmm): the same re-entry, keyed by
    # the function ----

    def named(self, fn):
        """False for the re-entry of ``fn`` that :meth:`run_named` just made."""
        loc = self._thread()
        if loc.pending is fn:
            loc.pending = None
            return False
        return True

    def run_named(self, name, fn, args, kwargs=None):
        r = self.begin(name, _shapes(args, ()) if self.shapes else None)
        loc = self.local
        loc.pending = fn
        try:
            out = fn(*args, **kwargs) if kwargs else fn(*args)
        finally:
            loc.pending = None
            self.end(r)
        if self.memory:
            r.mem = _nbytes(out)
        return out

    # ---- the engine's hook ----

    def run_node(self, node, fn, *args):
        name = node.name()
        if name == "AccumulateGrad":
            name = "torch::autograd::AccumulateGrad"
        outer = self.begin("autograd::engine::evaluate_function: " + name)
        try:
            inner = self.begin(name)
            try:
                return fn(*args)
            finally:
                self.end(inner)
        finally:
            self.end(outer)


def _shapes(inputs, params):
    out = []
    for x in inputs:
        s = getattr(x, "shape", None)
        out.append(list(s) if s is not None else [])
    out.extend([] for _ in params)
    return out


def _nbytes(t):
    """Bytes a result holds in new memory (0 for a view of another tensor's buffer)."""
    data = getattr(t, "_data", None)
    if data is None:
        if isinstance(t, (tuple, list)):
            return sum(_nbytes(x) for x in t)
        return 0
    n = getattr(data, "nbytes", None)
    if n is not None:
        return 0 if getattr(data, "base", None) is not None else int(n)
    return sum(int(getattr(getattr(data, f, None), "nbytes", 0))
               for f in ("indices", "values", "crow", "col"))


def _user_stack():
    """``file(line): function`` entries of the Python frames outside sparsetorch, innermost
    first."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG):
            out.append(f"{fn}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


_RECORDER = _Recorder()


def _start(session):
    global ACTIVE
    with _LOCK:
        rec = _RECORDER
        if not rec.sessions:
            rec.ranges = []
            rec.local = threading.local()  # no stale open ranges from an earlier session
        rec.sessions.append(session)
        rec.shapes = any(s.record_shapes for s in rec.sessions)
        rec.memory = any(s.profile_memory for s in rec.sessions)
        rec.stacks = any(s.with_stack for s in rec.sessions)
        session._first = len(rec.ranges)
        ACTIVE = rec


def _stop(session):
    """The ranges recorded while ``session`` ran, as FunctionEvents sorted by start time."""
    global ACTIVE
    with _LOCK:
        rec = _RECORDER
        ranges = rec.ranges[session._first:]
        if session in rec.sessions:
            rec.sessions.remove(session)
        if not rec.sessions:
            ACTIVE = None
            rec.ranges = []
        else:
            rec.shapes = any(s.record_shapes for s in rec.sessions)
            rec.memory = any(s.profile_memory for s in rec.sessions)
            rec.stacks = any(s.with_stack for s in rec.sessions)
    return _events(ranges, session)


def _events(ranges, session):
    t0 = session._t0
    stop = _now()
    events = {}
    out = EventList(use_device=session.use_device, profile_memory=session.profile_memory)
    for r in ranges:
        end = r.end if r.end is not None else stop
        e = FunctionEvent(
            r.id, r.name, r.tid, (r.start - t0) / 1e3, (end - t0) / 1e3,
            input_shapes=r.shapes if session.record_shapes and r.shapes is not None else [],
            stack=r.stack if session.with_stack and r.stack else [],
            is_user_annotation=r.user, use_device=session.use_device,
            cpu_memory_usage=r.mem if session.profile_memory else 0,
        )
        events[r.id] = e
        parent = events.get(r.parent.id) if r.parent is not None else None
        if parent is not None:
            e.set_cpu_parent(parent)
            parent.append_cpu_child(e)
        out.append(e)
    out.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    return out


class profile:
    """Context manager that records the ops run inside it (torch.autograd.profiler.profile).

    >>> with profile(record_shapes=True) as prof:
    ...     y = model(x)
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

    Times are wall-clock on the host. ``profile_memory`` reports the bytes of each op's new
    result (views count 0); ``with_stack`` the user's Python frames. CUDA-side timing is not
    recorded (GPU ops are timed as their host call).
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.use_cuda = use_cuda
        if use_cuda and enabled:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use "
                "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None and enabled:
            if use_device not in ("cuda", "xpu", "mtia", "hpu"):
                warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
                use_device = None
            elif use_device == "cuda" and _backend.cuda_device_count() == 0:
                warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                self.use_cuda = False
                use_device = None
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self.function_events = None
        self._first = 0
        self._t0 = 0

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_trace()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        self._stop_trace()
        self.entered = False
        return False

    def _start_trace(self):
        self._t0 = _now()
        _start(self)

    def _stop_trace(self):
        events = _stop(self)
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events),
                               use_device=self.use_device, profile_memory=self.profile_memory)
        self.function_events = events

    def _ensure_function_events(self):
        if self.function_events is None:
            self.function_events = EventList(use_device=getattr(self, "use_device", None))
        return self.function_events

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def events(self):
        return self._ensure_function_events()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self._ensure_function_events().table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Events averaged per name (``group_by_input_shape``: per name and input shapes)."""
        return self._ensure_function_events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        return self._ensure_function_events().total_average()

    def export_chrome_trace(self, path):
        """Write the recorded ranges as a Chrome trace JSON file."""
        return self._ensure_function_events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires with_stack=True")
        return self._ensure_function_events().export_stacks(path, metric)

    @property
    def self_cpu_time_total(self):
        """Total self CPU time over all events, in microseconds."""
        return self._ensure_function_events().self_cpu_time_total


class record_function:
    """A named user range in the profile (torch.autograd.profiler.record_function).

    A context manager (``with record_function("block"):``) or a decorator
    (``@record_function("block")``). Nothing is recorded when no profiler runs.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None
        self._recorder = None

    def __enter__(self):
        rec = ACTIVE
        if rec is not None:
            self._recorder = rec
            self.record = rec.begin(self.name, user=True)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return False
        rec, r = self._recorder, self.record
        if rec is not None and r is not None:
            rec.end(r)
        self._recorder = self.record = None
        return False

    def _call_end_callbacks_on_future(self, fut):
        self.run_callbacks_on_exit = False
        rec, r = self._recorder, self.record
        if rec is not None and r is not None:
            rec.end(r)
        return fut

    def _recreate_cm(self):
        return type(self)(self.name, self.args)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self._recreate_cm():
                return fn(*a, **k)

        return wrapper


class emit_nvtx:
    """Emit NVTX ranges for each op (torch.autograd.profiler.emit_nvtx). sparsetorch has no
    NVTX hooks: this is a no-op context, so scripts written for nvprof still run."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled:
            self.entered = False
        return False


class emit_itt(emit_nvtx):
    """Intel ITT ranges (torch.autograd.profiler.emit_itt): a no-op context, as ``emit_nvtx``."""

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        return self
