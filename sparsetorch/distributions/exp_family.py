"""``ExponentialFamily``: the base class torch gives its exponential-family distributions."""

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Distributions whose density is ``h(x) exp(<t(x), theta> - F(theta))``. Subclasses here
    compute their entropy in closed form, so this class only marks the family (isinstance)."""
