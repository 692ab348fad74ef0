"""Register the shared-memory tensor reducer with ``multiprocessing``'s pickler."""

from multiprocessing.reduction import ForkingPickler

from .._ops.sharing import reduce_shared
from .._tensor import Tensor

__all__ = ["init_reductions"]


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def init_reductions():
    """Register ``reduce_shared`` for Tensor and every subclass defined so far (``Parameter``,
    ``Buffer``, ...): the pickler's dispatch table is keyed by exact type."""
    from ..nn import parameter  # noqa: F401 - define Parameter/Buffer before walking subclasses

    for cls in (Tensor, *_subclasses(Tensor)):
        ForkingPickler.register(cls, reduce_shared)
