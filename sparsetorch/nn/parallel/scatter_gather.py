"""scatter / scatter_kwargs / gather (torch.nn.parallel): split inputs across CUDA devices along
``dim`` and gather outputs back. Tensors move with ``.to(device)``, which autograd follows, so
gradients flow back through both. On CPU tensors and devices they raise torch's errors."""

import warnings

from ... import cuda as _cuda
from ..._device import device as _device
from ..._tensor import Tensor
from ..._ops import cat, stack

__all__ = ["device_index", "gather", "scatter", "scatter_kwargs"]


def device_index(dev, what="non cpu"):
    """A CUDA device index from an int / ``"cuda:1"`` / ``device``; a CPU device raises
    torch's ValueError."""
    if isinstance(dev, str):
        dev = _device(dev)
    if isinstance(dev, _device):
        if dev.type != "cuda":
            raise ValueError(f"Expected a {what} device, but got: {dev}")
        return _cuda.current_device() if dev.index is None else dev.index
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    raise ValueError(f"Expected a {what} device, but got: {dev}")


def _split(t, indices, dim):
    """``t`` in ``len(indices)`` chunks along ``dim`` (torch.chunk sizes), chunk i on device
    indices[i]; fewer chunks when ``t`` is short, as torch's Scatter."""
    parts = t.chunk(len(indices), dim) if t.dim() else (t,) * len(indices)
    return [p.to(_device("cuda", i)) for p, i in zip(parts, indices)]


def scatter(inputs, target_gpus, dim=0):
    """Splits ``inputs`` (tensors, in nested tuples / lists / dicts) into one slice per device of
    ``target_gpus``; other objects are repeated for each device."""
    indices = [device_index(g) for g in target_gpus]
    if indices:
        _cuda._need_cuda("nn.parallel.scatter")

    def split(obj):
        if isinstance(obj, Tensor):
            return _split(obj, indices, dim)
        if isinstance(obj, tuple) and obj:
            return list(zip(*(split(x) for x in obj)))
        if isinstance(obj, list) and obj:
            return [list(x) for x in zip(*(split(x) for x in obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(x) for x in zip(*(split(kv) for kv in obj.items()))]
        return [obj] * len(indices)

    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """:func:`scatter` of the positional and keyword arguments, padded to the same length."""
    ins = scatter(inputs, target_gpus, dim) if inputs else []
    kws = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(ins) < len(kws):
        ins.extend(() for _ in range(len(kws) - len(ins)))
    elif len(kws) < len(ins):
        kws.extend({} for _ in range(len(ins) - len(kws)))
    return tuple(ins), tuple(kws)


def gather(outputs, target_device, dim=0):
    """Concatenates the per-device ``outputs`` (tensors, in nested tuples / lists / dicts) on
    ``target_device`` (an index, a device, or -1 / ``"cpu"`` for the CPU) along ``dim``."""
    if target_device == -1 or str(target_device) == "cpu":
        target = _device("cpu")
    elif target_device is None:
        target = _device("cuda", _cuda.current_device()) if _cuda.is_available() else None
    else:
        target = _device("cuda", device_index(target_device))

    def join(outs):
        first = outs[0]
        if isinstance(first, Tensor):
            if any(o.device.type == "cpu" for o in outs):
                raise AssertionError("Gather function not implemented for CPU tensors")
            moved = [o.to(target) for o in outs]
            if all(o.dim() == 0 for o in moved):
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                              "scalars; will instead unsqueeze and return a vector.", stacklevel=3)
                return stack(moved)
            return cat(moved, dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(o) for o in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, join([o[k] for o in outs])) for k in first)
        if isinstance(first, (tuple, list)):
            parts = [join(list(x)) for x in zip(*outs)]
            return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
        return first if all(o == first for o in outs) else outs

    return join(list(outputs))
