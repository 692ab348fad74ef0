"""``Distribution``: the base class of torch.distributions (shapes, validation, sampling API)."""

import warnings

from . import _t as T
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Abstract base class for probability distributions.

    ``batch_shape``: the shape of independent parameterisations; ``event_shape``: the shape of
    one draw. With ``validate_args`` (default: ``__debug__``, see
    :meth:`set_default_validate_args`) parameters are checked against ``arg_constraints`` at
    construction and values against ``support`` in ``log_prob`` / ``cdf`` / ``icdf``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether validation is enabled or disabled by default."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=T.EMPTY_SIZE, event_shape=T.EMPTY_SIZE, validate_args=None):
        self._batch_shape = T.Size(batch_shape)
        self._event_shape = T.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # a lazily computed parameterisation that was not given
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                        f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dims expanded to ``batch_shape`` (no copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint describing the distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=T.EMPTY_SIZE):
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with T.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=T.EMPTY_SIZE):
        """A reparameterised sample (gradients flow to the parameters)."""
        raise NotImplementedError

    def sample_n(self, n):
        """``n`` samples (deprecated in torch: use ``sample((n,))``)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(T.Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete support, along a new leading dim (``expand``: over the
        batch shape too)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy of the distribution, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy)``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=T.EMPTY_SIZE):
        if not isinstance(sample_shape, T.Size):
            sample_shape = T.Size(sample_shape)
        return T.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, T.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")  # noqa: TRY004 - torch raises ValueError
        start = value.dim() - len(self._event_shape)
        if T.Size(tuple(value.shape)[start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} "
                             f"vs {self._event_shape}.")
        actual = value.size()
        expected = T.Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} "
                                 f"vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. "
                          "Please initialize the distribution with `validate_args=False` to turn off "
                          "validation.", stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to "
                f"be within the support ({support!r}) of the distribution {self!r}, but found invalid "
                f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{type(self).__name__}({args})"
