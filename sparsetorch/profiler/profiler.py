"""``torch.profiler.profile``: the op profiler with activities, a step schedule and trace export.

Each active cycle of the schedule is one ``autograd.profiler.profile`` session; ``step()`` moves
through the schedule (``NONE`` -> ``WARMUP`` -> ``RECORD`` ... ``RECORD_AND_SAVE``), opens a
``ProfilerStep#<n>`` range per step and calls ``on_trace_ready(prof)`` at the end of each cycle.
"""

import enum
import os
import socket
import time
import warnings
from functools import partial

from ..autograd import profiler as _prof

__all__ = [
    "ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
    "tensorboard_trace_handler", "kineto_available", "record_function",
]

record_function = _prof.record_function


class ProfilerActivity(enum.Enum):
    """What to profile. sparsetorch times every op on the host, so ``CPU`` covers them all;
    the other members are accepted (GPU ops appear as their host calls)."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (the values a schedule returns)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule for ``profile(schedule=...)``: skip ``skip_first`` steps, then cycles of
    ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps (``repeat`` cycles; 0:
    until the profiler stops). The last active step of a cycle is ``RECORD_AND_SAVE``."""

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` that writes ``<worker>.<ns>.pt.trace.json[.gz]`` into ``dir_name``
    (a TensorBoard log dir); ``worker_name`` defaults to ``<hostname>_<pid>``."""

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """Profiler context manager (torch.profiler.profile).

    >>> with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1,
    ...              active=2), on_trace_ready=tensorboard_trace_handler("./log")) as p:
    ...     for batch in loader:
    ...         train_step(batch)
    ...         p.step()
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        acts = set()
        for item in (activities if activities is not None else supported_activities()):
            if isinstance(item, ProfilerActivity):
                acts.add(item)
            elif isinstance(item, dict):
                acts.update(item)
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            else:
                acts.discard(ProfilerActivity.CUDA)
        if not acts:
            raise AssertionError("No valid profiler activities found")
        self.activities = acts
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.use_device = "cuda" if ProfilerActivity.CUDA in acts else None
        self.profiler = None
        self._metadata = {}
        if schedule:
            self.schedule = schedule
            self.record_steps = True
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        action = self.schedule(self.step_num)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError(
                "ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                "returned by a user-provided schedule")
        self.current_action = action
        A = ProfilerAction
        prep, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, \
            self._trace_ready
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [prep],
            (A.NONE, A.RECORD): [prep, start],
            (A.NONE, A.RECORD_AND_SAVE): [prep, start],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed by "
                                         "NONE"), start, stop],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed by "
                                         "NONE"), stop],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD followed by "
                                           "WARMUP"), stop],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prep],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prep, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prep, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    # ---- the session of one cycle ----

    def prepare_trace(self):
        if self.profiler is None or not self.acc_events:
            self.profiler = _prof.profile(
                use_device=self.use_device, record_shapes=self.record_shapes,
                with_flops=self.with_flops, profile_memory=self.profile_memory,
                with_stack=self.with_stack, with_modules=self.with_modules,
                acc_events=self.acc_events)

    def start_trace(self):
        if self.profiler is None:
            self.prepare_trace()
        self.profiler._start_trace()
        self.profiler.entered = True

    def stop_trace(self):
        if self.profiler is not None and self.profiler.entered:
            self.profiler._stop_trace()
            self.profiler.entered = False

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

    # ---- the public interface ----

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def step(self):
        """Signal that the next step has started (advances the schedule)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        action = self.schedule(self.step_num + 1)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError(
                "ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                "returned by a user-provided schedule")
        self.step_num += 1
        self.current_action = action
        self._transit_action(prev_action, action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def events(self):
        """The events of the last recorded cycle (an ``EventList``)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling events()")
        return self._step_keyed(self.profiler._ensure_function_events())

    @staticmethod
    def _step_keyed(events):
        for e in events:  # torch reports every step range as one key
            if e.name.startswith("ProfilerStep#"):
                e.name = "ProfilerStep*"
        return events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Events of the last recorded cycle averaged per name (see EventList.key_averages)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path):
        """Write the last recorded cycle as a Chrome trace JSON file (``.gz``: gzipped)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting")
        self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting")
        self.profiler.export_stacks(path, metric)

    def add_metadata(self, key, value):
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        self._metadata[key] = value

    def toggle_collection_dynamic(self, enable, activities):
        """Accepted for compatibility; sparsetorch always records host activity."""
