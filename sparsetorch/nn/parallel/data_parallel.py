"""DataParallel (torch.nn.DataParallel): single-process data parallelism over CUDA devices.

Without a CUDA device (as torch without one) the wrapper calls the module directly and
``device_ids`` is ``[]``. With devices, ``forward`` scatters the batch along ``dim``, replicates
the module onto each device, applies the replicas and gathers the outputs on ``output_device``;
gradients flow back to the original parameters. ``.module`` is the wrapped module and the
``state_dict`` keys carry its ``module.`` prefix, as torch's.
"""

from ... import cuda as _cuda
from ..._device import device as _device
from ...autograd.grad_mode import is_grad_enabled
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import device_index, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Implements data parallelism at the module level (torch.nn.DataParallel)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(_cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [device_index(d) for d in device_ids]
        self.output_device = device_index(output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in (*self.module.parameters(), *self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on device: "
                    f"{t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form of :class:`DataParallel`: ``module(inputs)`` over ``device_ids``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(_cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [device_index(d) for d in device_ids]
    output_device = device_index(output_device)
    src = _device("cuda", device_ids[0])
    for t in (*module.parameters(), *module.buffers()):
        if t.device != src:
            raise RuntimeError(
                "module must have its parameters and buffers on device "
                f"{src} (device_ids[0]) but found one of them on device: {t.device}")
    ins, kws = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not ins and not kws:
        ins, kws = ((),), ({},)
    if len(device_ids) == 1:
        return module(*ins[0], **kws[0])
    used = device_ids[:len(ins)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, ins, kws, used)
    return gather(outputs, output_device, dim)
