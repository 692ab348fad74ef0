"""Activation layers (torch.nn.modules.activation): thin wrappers over nn.functional."""

from .. import functional as F
from .attention import MultiheadAttention  # noqa: F401 - torch.nn.modules.activation has it
from .module import Module

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "MultiheadAttention",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class ReLU(Module):
    r"""``max(0, x)``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    r"""Clamp to ``[min_val, max_val]``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if max_val <= min_val:
            raise ValueError("max_val must be greater than min_val")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        s = f"min_val={self.min_val}, max_val={self.max_val}"
        return s + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    r"""``min(max(0, x), 6)`` elementwise (``Hardtanh(0, 6)``)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    r"""``max(0, x) + negative_slope * min(0, x)``."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    r"""Randomized leaky ReLU: slopes drawn from ``U(lower, upper)`` in training, their mean in
    evaluation."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    r"""``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    r"""``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    r"""Scaled ELU with the self-normalizing constants (``scale * elu(x, alpha)``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class GELU(Module):
    r"""``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    r"""``x * sigmoid(x)``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Mish(SiLU):
    r"""``x * tanh(softplus(x))`` elementwise."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Sigmoid(Module):
    r"""``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    r"""Hyperbolic tangent elementwise."""

    def forward(self, input):
        return input.tanh()


class Softsign(Module):
    r"""``x / (1 + |x|)`` elementwise."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    r"""``x - tanh(x)`` elementwise."""

    def forward(self, input):
        return F.tanhshrink(input)


class LogSigmoid(Module):
    r"""``log(sigmoid(x))`` elementwise."""

    def forward(self, input):
        return F.logsigmoid(input)


class Threshold(Module):
    r"""``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        s = f"threshold={self.threshold}, value={self.value}"
        return s + (", inplace=True" if self.inplace else "")


class GLU(Module):
    r"""Gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the halves of the input along
    ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    r"""``exp(x_i) / sum_j exp(x_j)`` along ``dim``."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    r"""``softmax(-x)`` along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    r"""``log(softmax(x))`` along ``dim``."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softplus(Module):
    r"""``1/beta * log(1 + exp(beta * x))``, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"
