"""replicate (torch.nn.parallel): copies of a module on other CUDA devices whose parameters are
``param.to(device)`` of the original's (not leaves: gradients flow back to the original
parameters, as torch's Broadcast), buffers copied (detached)."""

from collections import OrderedDict

from ..._device import device as _device
from ...autograd.grad_mode import no_grad
from ..modules.module import Module
from .scatter_gather import device_index

__all__ = ["replicate"]


def _copy(module, dev, detach, memo):
    if id(module) in memo:
        return memo[id(module)]
    r = Module.__new__(type(module))
    r.__dict__.update(module.__dict__)
    memo[id(module)] = r
    params = OrderedDict()
    for k, p in module._parameters.items():
        if p is None:
            params[k] = None
        elif detach:
            with no_grad():
                params[k] = p.to(dev)
        else:
            params[k] = p.to(dev)
    r.__dict__["_parameters"] = params
    with no_grad():
        r.__dict__["_buffers"] = OrderedDict(
            (k, None if b is None else b.to(dev)) for k, b in module._buffers.items())
    r.__dict__["_modules"] = OrderedDict(
        (k, None if m is None else _copy(m, dev, detach, memo))
        for k, m in module._modules.items())
    return r


def replicate(network, devices, detach=False):
    """One copy of ``network`` per device in ``devices`` (indices or cuda devices)."""
    indices = [device_index(d) for d in devices]
    return [_copy(network, _device("cuda", i), detach, {}) for i in indices]
