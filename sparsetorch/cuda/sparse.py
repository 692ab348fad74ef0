"""sparsetorch.cuda.sparse: torch.cuda.sparse's legacy typed COO classes.

They are made in ``sparsetorch/_legacy.py`` (need a CUDA device to construct; ``isinstance`` works
without one)."""

from .._legacy import CUDA_SPARSE_TYPES as _TYPES

__all__ = sorted(_TYPES)

BFloat16Tensor = _TYPES["BFloat16Tensor"]
ByteTensor = _TYPES["ByteTensor"]
CharTensor = _TYPES["CharTensor"]
DoubleTensor = _TYPES["DoubleTensor"]
FloatTensor = _TYPES["FloatTensor"]
HalfTensor = _TYPES["HalfTensor"]
IntTensor = _TYPES["IntTensor"]
LongTensor = _TYPES["LongTensor"]
ShortTensor = _TYPES["ShortTensor"]
