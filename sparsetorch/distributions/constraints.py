"""Constraints (torch.distributions.constraints): regions a parameter or a sample must lie in.

``check(value)`` returns a bool tensor of ``sample_shape + batch_shape`` (the ``event_dim``
rightmost dims folded in). The names and reprs are torch's.
"""

from .._dtype import bool as _BOOL
from . import _t as T

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "half_open_interval", "independent", "integer_interval",
    "interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square",
    "stack", "symmetric", "unit_interval",
]


class Constraint:
    """Base class: a region over which a variable is valid. ``is_discrete``: whether the space
    is discrete; ``event_dim``: how many rightmost dims form one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor saying whether each event of ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """Placeholder for variables whose support depends on other variables (not checkable)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a ``dependent`` placeholder (skipped by validation)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on instances that reads as a ``dependent`` constraint on the class."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _OfBase(Constraint):
    """A constraint built on ``base_constraint`` (as discrete as it is)."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete


def _all_rightmost(result, keep):
    """``result`` reduced by ``all`` over its dims after the first ``keep``."""
    return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)


class _IndependentConstraint(_OfBase):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more dims folded into the event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        super().__init__(base_constraint)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        r = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if r.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _all_rightmost(r, r.dim() - n)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(_OfBase):
    """``base_constraint`` of a mixture's components, checked against every component."""

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return _all_rightmost(result, value.dim() - self.event_dim)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Bounded(Constraint):
    """Shared repr of the bounded constraints: ``Name(lower_bound=..., upper_bound=...)``."""

    _fields = ()

    def __repr__(self):
        args = ", ".join(f"{f}={getattr(self, f)}" for f in self._fields)
        return f"{type(self).__name__[1:]}({args})"


class _Lower(_Bounded):
    _fields = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound


class _Upper(_Bounded):
    _fields = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound


class _Between(_Bounded):
    _fields = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound


class _IntegerInterval(_Between):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerLessThan(_Upper):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Lower):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return ~value.isnan()  # False for NaN


class _GreaterThan(_Lower):
    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Upper):
    def check(self, value):
        return value < self.upper_bound


class _Interval(_Between):
    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (T.tril(value) == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        return _LowerTriangular().check(value) & (T.diagonal(value, 0, -2, -1) > 0).all(-1)


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tol = T.finfo(value.dtype).eps * value.size(-1) * 10
        unit = ((value * value).sum(-1).sqrt() - 1).abs() <= tol
        return _LowerCholesky().check(value) & unit.all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return T.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=_BOOL,
                      device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        sq = super().check(value)
        if not bool(sq.all()):
            return sq
        return ((value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()).all(-1).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        from ..linalg import eigvalsh
        return (eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not bool(sym.all()):
            return sym
        from ..linalg import eigvalsh
        return (eigvalsh(value) > 0).all(-1)


class _OfSeq(Constraint):
    """A constraint made of the constraints ``cseq`` along ``dim`` (discrete if any is)."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)


class _Cat(_OfSeq):
    """Each of ``cseq`` applied to its slice (of ``lengths``) along ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        out, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            out.append(c.check(value.narrow(self.dim, start, n)))
            start += n
        return T.cat(out, self.dim)


class _Stack(_OfSeq):
    """Each of ``cseq`` applied to its index along ``dim``."""

    @property
    def event_dim(self):
        d = max(c.event_dim for c in self.cseq)
        return d + 1 if self.dim + d < 0 else d

    def check(self, value):
        return T.stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
