"""What the profiler hands back (torch.autograd.profiler_util): events, averages, the table.

A ``FunctionEvent`` is one timed range (an op, a backward node, a ``record_function`` range);
``EventList.key_averages()`` groups them into ``FunctionEventAvg`` rows, and ``table()`` prints
those rows in torch's layout (same columns, units and percentages).
"""

import enum
import json
import os
from collections import defaultdict

__all__ = [
    "DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval",
]


class DeviceType(enum.Enum):
    """Where an event ran (torch.autograd.DeviceType); sparsetorch times everything on the CPU."""

    CPU = 0
    CUDA = 1


class Interval:
    """A time range in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class _Times:
    """Shared formatting of the time and memory fields of events and averages."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self):
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self):
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self):
        return _format_time(self.self_device_time_total)

    @property
    def cuda_time(self):
        return self.device_time

    @property
    def cuda_time_total(self):
        return self.device_time_total

    @property
    def self_cuda_time_total(self):
        return self.self_device_time_total

    @property
    def self_cuda_memory_usage(self):
        return self.self_device_memory_usage


class FunctionEvent(_Times):
    """One profiled range; times in microseconds. ``cpu_children`` are the ranges opened inside it
    on the same thread, ``cpu_parent`` the range it was opened in."""

    device_type = DeviceType.CPU
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    device_time = device_time_total = self_device_time_total = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    count = 1
    scope = 0
    kernels = ()

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 is_user_annotation=False, use_device=None, cpu_memory_usage=0, sequence_nr=-1,
                 trace_name=None):
        self.id = id
        self.name = name
        self.trace_name = name if trace_name is None else trace_name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = [] if input_shapes is None else input_shapes
        self.stack = [] if stack is None else stack
        self.is_user_annotation = is_user_annotation
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.cpu_children = []
        self.cpu_parent = None

    @property
    def key(self):
        return self.name

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
            f"end_us={self.time_range.end:.3f} cpu_children={[c.id for c in self.cpu_children]} "
            f"thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class FunctionEventAvg(_Times):
    """Sums of the events that share a key (and shapes / stack, when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.is_user_annotation = False
        self.use_device = None
        self.device_type = DeviceType.CPU
        self.overload_name = None
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.device_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.flops = 0

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError("add(): expected a FunctionEvent or FunctionEventAvg")
        if self.key is None:
            self.key = other.key
            for f in ("node_id", "is_async", "is_remote", "cpu_parent", "cpu_children",
                      "overload_name", "input_shapes", "stack", "scope", "device_type",
                      "is_legacy", "use_device", "is_user_annotation"):
                setattr(self, f, getattr(other, f))
        elif other.key != self.key:
            raise ValueError(f"add(): keys differ ({other.key} vs {self.key})")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        self.flops += other.flops or 0
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class EventList(list):
    """A list of events (or averages) with torch's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One ``FunctionEventAvg`` per event name (and input shapes / top stack entries when
        asked), in the order the names first occur."""
        stats = defaultdict(FunctionEventAvg)
        for e in self:
            key = [e.key, e.is_user_annotation]
            if group_by_overload_name:
                key.append(e.overload_name)
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            stats[tuple(key)].add(e)
        out = EventList(stats.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory, with_flops=self._with_flops)
        for a in out:
            a.stack = a.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                a.input_shapes = ""
            if not group_by_overload_name:
                a.overload_name = ""
        return out

    def total_average(self):
        """All events summed into one ``FunctionEventAvg`` keyed ``"Total"``."""
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
            total.key = None
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The summary table, as torch prints it. ``sort_by``: an attribute such as
        ``"self_cpu_time_total"``, ``"cpu_time_total"``, ``"count"`` (largest first)."""
        return _build_table(
            self, sort_by=sort_by, header=header, row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto): JSON with one
        complete (``"ph": "X"``) event per range."""
        write_chrome_trace(self, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write ``frame;frame;... value`` lines (flame-graph input) for events with a stack."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + " " + str(int(getattr(e, metric))) + "\n")


def write_chrome_trace(events, path, base_ns=0):
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0,
              "args": {"name": "python"}}]
    for tid in sorted({e.thread for e in events}):
        trace.append({"ph": "M", "name": "thread_name", "ts": 0, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python)"}})
    for e in events:
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.cpu_memory_usage:
            args["Bytes"] = e.cpu_memory_usage
        trace.append({
            "ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
            "name": e.trace_name, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
            "dur": e.time_range.elapsed_us(), "args": args,
        })
    doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
           "baseTimeNanoseconds": base_ns, "traceEvents": trace, "traceName": str(path)}
    if str(path).endswith(".gz"):
        import gzip

        with gzip.open(path, "wt") as f:
            json.dump(doc, f)
    else:
        with open(path, "w") as f:
            json.dump(doc, f)


# ---- formatting (torch's table layout) ----

def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _in_unit(time_us, unit):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_w = min(shapes_w, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [(name_w, ">")] + [(12, ">")] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_w, ">"))
    src_w = None
    if stacks:
        src_w = max(len(s) for st in stacks for s in st) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)
        headers.append("Source Location")
        widths.append((src_w, "<"))
    row_format = "".join("{: " + d + str(w) + "}  " for w, d in widths)
    sep = "".join("-" * w + "  " for w, _ in widths)
    line_length = sum(w + 2 for w, _ in widths) - 2
    total_self = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [
            name,
            _format_time_share(e.self_cpu_time_total, total_self),
            _in_unit(e.self_cpu_time_total, time_unit),
            _format_time_share(e.cpu_time_total, total_self),
            _in_unit(e.cpu_time_total, time_unit),
            _in_unit(e.cpu_time, time_unit),
        ]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if stacks:
            row.append(_trim_path(e.stack[0], src_w) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                lines.append(row_format.format(*(blank + [_trim_path(entry, src_w)])))
            lines.append(row_format.format(*(blank + [""])))
    lines += [sep, f"Self CPU time total: {_in_unit(total_self, time_unit)}"]
    return "\n".join(lines) + "\n"
