"""Utilities (torch.utils): ``data`` holds datasets, samplers and the DataLoader;
``checkpoint`` activation checkpointing."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
