"""GroupNorm and PReLU (torch.nn.GroupNorm, torch.nn.PReLU): parameters and init as torch's."""

from ... import _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .normalization import affine_parameters, reset_affine

__all__ = ["GroupNorm", "PReLU"]


class GroupNorm(Module):
    r"""Group normalization over a mini-batch: channels split into ``num_groups`` groups, each
    normalized per sample; ``weight`` ones and ``bias`` zeros per channel when ``affine``."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        affine_parameters(self, affine, num_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self, self.affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class PReLU(Module):
    r"""``PReLU(x) = max(0, x) + a * min(0, x)``; ``a`` is learned, one value or one per channel,
    initialized to ``init``."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_ops.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
