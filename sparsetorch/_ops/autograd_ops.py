"""Internal differentiable ops used by the autograd machinery (copy_slices for in-place on views)."""

__all__ = []
