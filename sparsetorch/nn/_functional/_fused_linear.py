"""``F.linear`` on dense 2-D operands as one table op with torch's node names: ``x W^T + b`` is
``addmm`` (``AddmmBackward0``), ``x W^T`` is ``mm`` (``MmBackward0``). One GEMM forward (the bias
added in place), and the derivatives are the GEMMs themselves (no transpose / matmul / add nodes).
"""

from ..._dispatch import defop
from ..._layout import strided

__all__ = ["addmm_op", "mm_op"]


def _addmm_kernel(be, x, w, b):
    out = be.xp.matmul(x, w.T)
    out += b
    return out


def _mm_kernel(be, x, w):
    return be.xp.matmul(x, w.T)


def _grad_input(grad, weight):
    return grad.mm(weight)


def _grad_weight(grad, input):
    return grad.t().mm(input)


addmm_op = defop(
    "addmm", {(strided, strided, strided): _addmm_kernel}, inputs=("input", "weight", "bias"),
    grads={"input": _grad_input, "weight": _grad_weight,
           "bias": lambda grad: grad.sum(0)})

mm_op = defop("mm", {(strided, strided): _mm_kernel}, inputs=("input", "weight"),
              grads={"input": _grad_input, "weight": _grad_weight})
