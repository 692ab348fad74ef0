"""``F.linear`` on dense 2-D operands with a bias as one table op with torch's node name:
``x W^T + b`` is ``addmm`` (``AddmmBackward0``). One GEMM forward (the bias added in place), and
the derivatives are the GEMMs themselves (no transpose / matmul / add nodes). Without a bias,
``F.linear`` is the one ``mm`` op of ``_ops/linalg.py`` on ``W.t()``, as torch's graph.

Hot path (issue 14): ``lean`` serves the common call (float32/float64 CPU tensors, 2-D input, 1-D
bias) without the generic dispatcher, and in a plain backward (no ``create_graph``) the three
derivatives are GEMMs on the payloads (the bias's a GEMV with a ones vector: one pass, 1/4 of
``sum(0)``'s time at 128 x 64); with ``create_graph`` they are sparsetorch ops (double backward).
The products run with the BLAS threads the thread policy gives their work (``_blas.dot``).
"""

from ... import _blas
from ..._backend import CPU
from ..._device import CPU as CPU_DEVICE
from ..._dispatch import cpu_float_payloads, defop, record_if_grad
from ..._dtype import float32, float64
from ..._layout import strided
from ..._tensor import Tensor, wrap
from ...autograd import profiler as _profiler
from ...autograd._tape import OpNode as _OpNode, SavedTensor as _Saved
from ...autograd.grad_mode import GRAD_ENABLED

__all__ = ["addmm_op", "lean"]

_grad_enabled = GRAD_ENABLED.get


def _addmm_kernel(be, x, w, b):
    out = be.xp.matmul(x, w.T)
    out += b
    return out


def _payloads(grad, t):
    """``(grad, t)``'s payloads in a plain backward where both are strided float32/float64 CPU
    tensors of one dtype (the GEMMs may run on them), else None (and while profiling)."""
    if _grad_enabled() or _profiler.ACTIVE is not None:  # profiling: torch's aten::mm ranges
        return None
    return cpu_float_payloads(grad, t)


def _out(data, like):
    return wrap(data, like.dtype, CPU_DEVICE, strided)


def _grad_input(grad, weight):
    p = _payloads(grad, weight)
    if p is not None and p[0].ndim == 2 and p[1].ndim == 2:
        g, w = p
        return _out(_blas.dot(g, w, g.shape[0] * g.shape[1] * w.shape[1]), grad)
    return grad.mm(weight)


def _grad_weight(grad, input):
    p = _payloads(grad, input)
    if p is not None and p[0].ndim == 2 and p[1].ndim == 2:
        g, x = p
        return _out(_blas.dot(g.T, x, g.shape[0] * g.shape[1] * x.shape[1]), grad)
    return grad.t().mm(input)


_ONES = {}
_GEMM_OWN, _GEMV_OWN = _blas.GEMM_OWN, _blas.GEMV_OWN


def _grad_bias(grad):
    if grad.layout is strided and not _grad_enabled() and _profiler.ACTIVE is None \
            and grad.device is CPU_DEVICE \
            and (grad.dtype is float32 or grad.dtype is float64) and grad._data.ndim == 2:
        g = grad._data
        n = g.shape[0]
        key = (n, g.dtype)
        ones = _ONES.get(key)
        if ones is None:
            if len(_ONES) > 64:
                _ONES.clear()
            ones = _ONES[key] = CPU.xp.ones(n, g.dtype)
        # a GEMV: the column sums, in the dtype (as sum(0))
        return _out(_blas.dot(ones, g, g.shape[0] * g.shape[1], _blas.GEMV_OWN), grad)
    return grad.sum(0)


addmm_op = defop(
    "addmm", {(strided, strided, strided): _addmm_kernel}, inputs=("input", "weight", "bias"),
    grads={"input": _grad_input, "weight": _grad_weight, "bias": _grad_bias})


def _saved_payload(node, k, dt):
    """The payload of the saved input at ``k`` (a position in ``(grad, *saved)``), version-checked,
    if it is a 2-D strided CPU tensor of dtype ``dt``; else None."""
    v = node.saved[k - 1]
    if v.__class__ is not _Saved:
        return None
    t = v.unpack(node)
    if t.dtype is not dt or t.layout is not strided or t.device is not CPU_DEVICE \
            or t._data.ndim != 2:
        return None
    return t._data


def _addmm_apply(node, grad_outputs):
    """AddmmBackward0 in a plain backward of a 2-D float32/float64 CPU gradient: the three
    derivatives on the payloads in one call (issue 14: the per-formula argument lists, checks
    and tensors of ``OpNode.apply`` cost ~3 us a node at batch 128). Otherwise (create_graph,
    profiling, other layouts) the formulas run."""
    grad = grad_outputs[0]
    if node._released or grad is None or grad.__class__ is not Tensor or grad.layout is not strided \
            or grad.device is not CPU_DEVICE or _grad_enabled() or _profiler.ACTIVE is not None:
        return _OpNode.apply(node, grad_outputs)
    dt = grad.dtype
    g = grad._data
    if (dt is not float32 and dt is not float64) or g.ndim != 2:
        return _OpNode.apply(node, grad_outputs)
    ci, cw, cb = node.calls
    w = x = None
    if ci is not None:
        w = _saved_payload(node, ci[1][1], dt)
        if w is None:
            return _OpNode.apply(node, grad_outputs)
    if cw is not None:
        x = _saved_payload(node, cw[1][1], dt)
        if x is None:
            return _OpNode.apply(node, grad_outputs)
    n, o = g.shape
    no = n * o
    out = [None, None, None]
    if w is not None:  # (below OpenBLAS's own threshold, the dot without _blas.dot's call)
        k = no * w.shape[1]
        out[0] = wrap(g.dot(w) if k < _GEMM_OWN else _blas.dot(g, w, k), dt, CPU_DEVICE, strided)
    if x is not None:
        k = no * x.shape[1]
        gt = g.T
        out[1] = wrap(gt.dot(x) if k < _GEMM_OWN else _blas.dot(gt, x, k), dt, CPU_DEVICE, strided)
    if cb is not None:
        ones = _ONES.get((n, g.dtype))
        if ones is None:
            out[2] = _grad_bias(grad)
        else:
            out[2] = wrap(ones.dot(g) if no < _GEMV_OWN else _blas.dot(ones, g, no, _GEMV_OWN), dt,
                          CPU_DEVICE, strided)
    return out


addmm_op.node_cls = type(addmm_op.node_cls.__name__, (addmm_op.node_cls,),
                         {"__slots__": (), "apply": _addmm_apply})


def lean(input, weight, bias):
    """``F.linear``'s fast path: float32/float64 strided CPU tensors of one dtype, a 2-D input
    whose last size is the weight's, a 1-D bias of the weight's rows. Returns None for anything
    else (the checked path then runs, with its errors)."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor) and isinstance(bias, Tensor)):
        return None
    dt = input.dtype
    if (dt is not float32 and dt is not float64) or weight.dtype is not dt:
        return None
    if input.layout is not strided or weight.layout is not strided or bias.layout is not strided \
            or bias.dtype is not dt or input.device is not CPU_DEVICE \
            or weight.device is not CPU_DEVICE or bias.device is not CPU_DEVICE:
        return None
    x = input._data
    w = weight._data
    b = bias._data
    if x.ndim != 2 or w.ndim != 2 or b.ndim != 1 or x.shape[1] != w.shape[1] \
            or b.shape[0] != w.shape[0]:
        return None
    data = _blas.dot(x, w.T, x.shape[0] * x.shape[1] * w.shape[0])
    data += b
    t = _out(data, input)
    if input._rg or weight._rg or bias._rg:
        record_if_grad(addmm_op, t, (input, weight, bias))
    return t
