"""Gradient clipping (torch.nn.utils.clip_grad) for dense AND sparse gradients.

Sparse gradients are never densified: the norm is taken over the stored values of the coalesced
gradient (duplicates summed first, so the norm equals the dense gradient's), scaling multiplies the
stored values in place, and value clipping clamps the coalesced values.
"""

import math

from ... import _ops
from ..._tensor import Tensor
from ...autograd import grad_mode as _gm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _as_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _stored_values(g):
    """The elements whose norm is the gradient's norm (implicit zeros never matter)."""
    if g.layout.name == "strided":
        return g
    if g.layout.name == "sparse_coo":
        return g.coalesce()._values()
    return g.values()  # CSR stores each position once


def _norm(x, norm_type):
    if x.numel() == 0:
        return _ops.zeros((), dtype=x.dtype, device=x.device)
    if math.isinf(norm_type):
        a = x.abs()
        return a.amax() if norm_type > 0 else a.amin()
    return x.norm(norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The ``norm_type`` norm of all ``tensors`` together (as if concatenated into one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _ops.tensor(0.0)
    with _gm.no_grad():
        norms = [_norm(_stored_values(g), norm_type) for g in tensors]
        dt = norms[0].dtype
        total = _norm(_ops.stack([n.to(dt) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total.isfinite().item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
            "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with _gm.no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            # sparse mul_ scales the stored values in place (linear: no coalesce needed)
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""Clip the gradient norm of an iterable of parameters (in place); returns the total norm.

    The norm is computed over all gradients together, as if they were concatenated into a single
    vector. Sparse (COO/CSR) gradients are handled on their stored values without densifying.
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]`` (in place).

    A COO gradient is coalesced first (clamping a sum differs from summing clamped duplicates);
    the gradient tensor object is kept, its payload replaced.
    """
    clip_value = float(clip_value)
    with _gm.no_grad():
        for p in _as_list(parameters):
            g = p.grad
            if g is None:
                continue
            if g.layout.name == "strided":
                g.clamp_(min=-clip_value, max=clip_value)
                continue
            from ..._ops.sparse_core import with_values

            c = g.coalesce() if g.layout.name == "sparse_coo" else g
            vals = c._values() if g.layout.name == "sparse_coo" else c.values()
            g.data = with_values(c, vals.clamp(-clip_value, clip_value))
