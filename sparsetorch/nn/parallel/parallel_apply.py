"""parallel_apply (torch.nn.parallel): ``modules[i](*inputs[i], **kwargs_tup[i])`` with device
i current. The calls are issued one after another from this thread: CuPy queues each device's
kernels asynchronously, so the devices still compute at the same time."""

from ... import cuda as _cuda
from ..._tensor import Tensor
from .scatter_gather import device_index

__all__ = ["parallel_apply"]


def _first_device(obj):
    if isinstance(obj, Tensor):
        return obj.device
    if isinstance(obj, (list, tuple)):
        for x in obj:
            d = _first_device(x)
            if d is not None:
                return d
    if isinstance(obj, dict):
        return _first_device(list(obj.values()))
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Applies each module to its inputs on its device; returns the outputs in order."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs {len(kwargs_tup)}")
    if devices is None:
        devices = [None] * len(modules)
    elif len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of devices {len(devices)}")
    idx = [None if d is None else device_index(d, "cuda") for d in devices]
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    outputs = []
    for module, inp, kw, i in zip(modules, inputs, kwargs_tup, idx):
        if i is None:
            d = _first_device(inp)
            i = d.index if d is not None and d.type == "cuda" else _cuda.current_device()
        if not isinstance(inp, (list, tuple)):
            inp = (inp,)
        with _cuda.device(i):
            outputs.append(module(*inp, **kw))
    return outputs
