"""Strided (dense) kernels that are more than a one-line ``be.xp`` call.

One-line kernels (``lambda be, x: be.xp.sin(x)``) sit in their op's declaration in ``_ops/``;
kernels with real logic live here, by family, written once against ``be.xp`` so NumPy and CuPy
share them. Nothing here knows about Tensors or autograd.
"""
