"""Utilities (torch.utils): ``data`` holds datasets, samplers and the DataLoader;
``checkpoint`` activation checkpointing; ``deterministic`` the fill of uninitialized memory."""

from . import checkpoint, data, deterministic

__all__ = ["checkpoint", "data", "deterministic"]
