"""torch.distributed.launcher: ``elastic_launch`` and ``LaunchConfig`` (see ``api``)."""

from .api import LaunchConfig, elastic_launch, launch_agent

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]
