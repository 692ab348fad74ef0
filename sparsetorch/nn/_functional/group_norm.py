"""group_norm and prelu (composites over sparsetorch ops; gradients come from the ops)."""

from ... import _autocast as _ac
from ... import _ops
from ..._ops._util import check_tensor

__all__ = ["group_norm", "prelu"]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    r"""Normalize each group of ``C / num_groups`` channels of every sample (biased variance), then
    scale and shift per channel."""
    check_tensor(input, "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    x = input.reshape(n, num_groups, -1)
    mu = x.mean(-1, keepdim=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdim=True)
    y = (xc * (var + eps).rsqrt()).reshape(input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.view(shape)
    if bias is not None:
        y = y + bias.view(shape)
    return y


@_ac.policy(_ac.LOWER)
def prelu(input, weight):
    r"""``max(0, x) + weight * min(0, x)``; ``weight`` has 1 element or one per channel (dim 1)."""
    check_tensor(input, "prelu")
    check_tensor(weight, "prelu", "weight")
    nw = weight.numel()
    c = input.shape[1] if input.ndim >= 2 else 1
    if nw != 1 and nw != c:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {nw} and channel size = {c}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if nw == 1 or input.ndim < 2:
        w = weight.reshape(())
    else:
        w = weight.view((c,) + (1,) * (input.ndim - 2))
    return _ops.where(input > 0, input, w * input)
