"""``F.linear`` on dense 2-D operands with a bias as one table op with torch's node name:
``x W^T + b`` is ``addmm`` (``AddmmBackward0``). One GEMM forward (the bias added in place), and
the derivatives are the GEMMs themselves (no transpose / matmul / add nodes). Without a bias,
``F.linear`` is the one ``mm`` op of ``_ops/linalg.py`` on ``W.t()``, as torch's graph.
"""

from ..._dispatch import defop
from ..._layout import strided

__all__ = ["addmm_op"]


def _addmm_kernel(be, x, w, b):
    out = be.xp.matmul(x, w.T)
    out += b
    return out


def _grad_input(grad, weight):
    return grad.mm(weight)


def _grad_weight(grad, input):
    return grad.t().mm(input)


addmm_op = defop(
    "addmm", {(strided, strided, strided): _addmm_kernel}, inputs=("input", "weight", "bias"),
    grads={"input": _grad_input, "weight": _grad_weight,
           "bias": lambda grad: grad.sum(0)})
