"""SparseLinear: a linear layer whose weight is a sparse (CSR or COO) tensor, for pruned nets.

``y = x @ W^T + b`` with ``W`` (out_features x in_features) stored sparse. The gradient of
``W`` has ``W``'s pattern (masked semantics): pruned weights stay pruned through training, and
the optimizer only ever sees the stored entries.
"""

import math

from ... import _ops as _st
from ... import _dtype as _D

from ..._layout import sparse_coo, sparse_csr, strided
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .module import Module

__all__ = ["SparseLinear"]


def _magnitude_mask(w, sparsity):
    """Keep the ``round((1 - sparsity) * numel)`` entries of largest magnitude (ties: by index)."""
    if not 0.0 <= float(sparsity) <= 1.0:
        raise ValueError(f"SparseLinear: sparsity must be in [0, 1], got {sparsity}")
    n = w.numel()
    keep = n - round(float(sparsity) * n)
    flat = w.detach().abs().reshape(-1)
    mask = _st.zeros(n, dtype=_D.bool, device=w.device)
    if keep > 0:
        idx = flat.argsort(descending=True, stable=True)[:keep]
        mask[idx] = True
    return mask.reshape(w.shape)


def _sparse_weight(dense, mask, layout):
    if layout not in (sparse_csr, sparse_coo):
        raise ValueError(f"SparseLinear: layout must be sparsetorch.sparse_csr or sparse_coo, got {layout}")
    if tuple(mask.shape) != tuple(dense.shape):
        raise RuntimeError(
            f"SparseLinear: mask of shape {list(mask.shape)} does not match the weight's shape "
            f"{list(dense.shape)}"
        )
    idx = mask.to(_D.bool).nonzero().t()
    vals = dense.detach()[idx[0], idx[1]]
    w = _st.sparse_coo_tensor(idx, vals, tuple(dense.shape), is_coalesced=True)
    return w if layout is sparse_coo else w.to_sparse_csr()


class SparseLinear(Module):
    r"""Applies ``y = x W^T + b`` with a sparse weight (only the stored entries are learnable).

    Args:
        in_features (int): size of each input sample
        out_features (int): size of each output sample
        bias (bool): learn an additive (dense) bias. Default: ``True``
        sparsity (float): fraction of weights pruned at construction (random pattern), when no
            ``mask`` is given. Default: ``0.9``
        mask (Tensor, optional): boolean ``(out_features, in_features)`` pattern of the weight
        layout: ``sparsetorch.sparse_csr`` (default) or ``sparsetorch.sparse_coo``

    The stored values are initialised as :class:`Linear`'s (kaiming uniform, ``a=sqrt(5)``) and
    the bias from U(-1/sqrt(in_features), 1/sqrt(in_features)). Use :meth:`from_dense` to prune
    a trained :class:`Linear`.
    """

    __constants__ = ("in_features", "out_features")

    def __init__(self, in_features, out_features, bias=True, sparsity=0.9, mask=None,
                 layout=sparse_csr, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        # kaiming_uniform_(a=sqrt(5)) on a (out, in) weight has bound 1/sqrt(fan_in), as the bias
        dense = _st.empty((out_features, in_features), device=device, dtype=dtype).uniform_(-bound, bound)
        if mask is None:
            if not 0.0 <= float(sparsity) <= 1.0:
                raise ValueError(f"SparseLinear: sparsity must be in [0, 1], got {sparsity}")
            mask = _st.rand(out_features, in_features, device=device) >= float(sparsity)
        elif not isinstance(mask, Tensor):
            mask = _st.tensor(mask, dtype=_D.bool)
        self.weight = Parameter(_sparse_weight(dense, mask, layout))
        if bias:
            self.bias = Parameter(_st.empty(out_features, device=device, dtype=dtype).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_dense(cls, linear, sparsity=None, mask=None, layout=sparse_csr):
        r"""A SparseLinear holding ``linear``'s weight pruned to ``mask`` (boolean, the weight's
        shape) or, with ``sparsity`` (a fraction in [0, 1]), to its largest-magnitude entries;
        the bias is copied."""
        w = linear.weight
        if (mask is None) == (sparsity is None):
            raise ValueError("SparseLinear.from_dense: give exactly one of sparsity or mask")
        if w.layout is not strided:
            w = w.to_dense()
        if mask is None:
            mask = _magnitude_mask(w, sparsity)
        elif not isinstance(mask, Tensor):
            mask = _st.tensor(mask, dtype=_D.bool)
        out_f, in_f = w.shape
        m = cls.__new__(cls)
        Module.__init__(m)
        m.in_features = in_f
        m.out_features = out_f
        m.weight = Parameter(_sparse_weight(w, mask, layout))
        if getattr(linear, "bias", None) is not None:
            with no_grad():
                m.bias = Parameter(linear.bias.detach().clone())
        else:
            m.register_parameter("bias", None)
        return m

    def forward(self, input):
        x = input.reshape(-1, self.in_features) if input.ndim != 2 else input
        y = (self.weight @ x.t()).t()
        if self.bias is not None:
            y = y + self.bias
        if input.ndim != 2:
            y = y.reshape(tuple(input.shape[:-1]) + (self.out_features,))
        return y

    def to_dense_linear(self):
        """A dense :class:`Linear` with this layer's (densified) weight and bias."""
        from .linear import Linear

        lin = Linear(self.in_features, self.out_features, bias=self.bias is not None,
                     dtype=self.weight.dtype)
        with no_grad():
            lin.weight.copy_(self.weight.detach().to_dense())
            if self.bias is not None:
                lin.bias.copy_(self.bias.detach())
        return lin

    def extra_repr(self):
        nnz = self.weight._nnz()
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, nnz={nnz}, layout={self.weight.layout}")
