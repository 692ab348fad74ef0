"""torch.profiler: ``profile`` with activities, ``schedule``, ``tensorboard_trace_handler``,
``record_function`` (the recorder is ``sparsetorch.autograd.profiler``)."""

from .profiler import (  # noqa: F401
    ProfilerAction, ProfilerActivity, kineto_available, profile, record_function, schedule,
    supported_activities, tensorboard_trace_handler,
)

__all__ = [
    "profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
    "ProfilerActivity", "kineto_available", "record_function",
]
