"""The Tensor methods that run ops, bound onto ``Tensor`` once, from the top (floor 8).

``_tensor.py`` holds the data model only (slots, metadata, autograd fields); this module is the
one writer of ``Tensor`` attributes (``_bind`` below, run on import by the face
``sparsetorch/__init__.py``). ``TensorMethods`` holds the one-line forwards named after ops
(``x.op(*a)`` is ``_ops.op(x, *a)``; ``tests/test_registry.py`` checks every forward reaches a
public op); ``_DataModelForwards`` the conversions, autograd entry points and Python operators.
Where a forward only passes its arguments through to an op function with the very same
signature, and for the Python operators (always called as ``op(self, other)``), ``Tensor`` gets
the op function itself: one Python call less per method call. No logic lives here.
"""

import dis
import inspect

from . import _dtype as D
from . import _ops, _torch_warnings
from ._layout import strided
from ._ops import legacy as _legacy
from ._ops import pointwise as _pw  # operators call the op objects directly
from ._tensor import Tensor
from .autograd import engine as _engine
from .autograd import function as _function

__all__ = ["TensorMethods"]


class TensorMethods:
    __slots__ = ()

    # ---- page-locked memory (sparsetorch/_ops/pinning.py) ----
    def pin_memory(self, device=None):
        return _ops._pin_memory(self, device)

    def is_pinned(self, device=None):
        return _ops._is_pinned(self, device)

    # ---- shared memory (sparsetorch/_ops/sharing.py) ----
    def share_memory_(self):
        return _ops.share_memory_(self)

    def is_shared(self):
        return _ops.is_shared(self)

    # ---- read-only storage views (sparsetorch/_ops/storage.py) ----
    def storage(self):
        return _ops._tensor_storage(self)

    def untyped_storage(self):
        return _ops._untyped_storage(self)

    # ---- sparse layouts ----
    def to_dense(self, dtype=None, *, masked_grad=True):
        return _ops.to_dense(self, dtype, masked_grad=masked_grad)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return _ops.to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def to_sparse_coo(self):
        return _ops.to_sparse_coo(self)

    def to_sparse_csr(self, dense_dim=None):
        return _ops.to_sparse_csr(self, dense_dim)

    def coalesce(self):
        return _ops.coalesce(self)

    def is_coalesced(self):
        return _ops.is_coalesced(self)

    def indices(self):
        return _ops.indices(self)

    def _indices(self):
        return _ops._indices(self)

    def values(self):
        return _ops.values(self)

    def _values(self):
        return _ops._values(self)

    def crow_indices(self):
        return _ops.crow_indices(self)

    def col_indices(self):
        return _ops.col_indices(self)

    def _nnz(self):
        return _ops._nnz(self)

    def sparse_dim(self):
        return _ops.sparse_dim(self)

    def dense_dim(self):
        return _ops.dense_dim(self)

    def sparse_mask(self, mask):
        return _ops.sparse_mask(self, mask)

    def sparse_resize_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_resize_(self, size, sparse_dim, dense_dim)

    def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_resize_and_clear_(self, size, sparse_dim, dense_dim)

    def to_scipy(self):
        return _ops.to_scipy(self)

    # ---- pointwise: unary (x.op() and x.op_()) ----
    def abs(self):
        return _ops.abs(self)
    def abs_(self):
        return _ops.abs_(self)
    def absolute(self):
        return _ops.absolute(self)
    def absolute_(self):
        return _ops.absolute_(self)
    def neg(self):
        return _ops.neg(self)
    def neg_(self):
        return _ops.neg_(self)
    def negative(self):
        return _ops.negative(self)
    def negative_(self):
        return _ops.negative_(self)
    def sign(self):
        return _ops.sign(self)
    def sign_(self):
        return _ops.sign_(self)
    def sgn(self):
        return _ops.sgn(self)
    def sgn_(self):
        return _ops.sgn_(self)
    def sqrt(self):
        return _ops.sqrt(self)
    def sqrt_(self):
        return _ops.sqrt_(self)
    def rsqrt(self):
        return _ops.rsqrt(self)
    def rsqrt_(self):
        return _ops.rsqrt_(self)
    def square(self):
        return _ops.square(self)
    def square_(self):
        return _ops.square_(self)
    def exp(self):
        return _ops.exp(self)
    def exp_(self):
        return _ops.exp_(self)
    def exp2(self):
        return _ops.exp2(self)
    def exp2_(self):
        return _ops.exp2_(self)
    def expm1(self):
        return _ops.expm1(self)
    def expm1_(self):
        return _ops.expm1_(self)
    def log(self):
        return _ops.log(self)
    def log_(self):
        return _ops.log_(self)
    def log2(self):
        return _ops.log2(self)
    def log2_(self):
        return _ops.log2_(self)
    def log10(self):
        return _ops.log10(self)
    def log10_(self):
        return _ops.log10_(self)
    def log1p(self):
        return _ops.log1p(self)
    def log1p_(self):
        return _ops.log1p_(self)
    def sin(self):
        return _ops.sin(self)
    def sin_(self):
        return _ops.sin_(self)
    def cos(self):
        return _ops.cos(self)
    def cos_(self):
        return _ops.cos_(self)
    def tan(self):
        return _ops.tan(self)
    def tan_(self):
        return _ops.tan_(self)
    def asin(self):
        return _ops.asin(self)
    def asin_(self):
        return _ops.asin_(self)
    def acos(self):
        return _ops.acos(self)
    def acos_(self):
        return _ops.acos_(self)
    def atan(self):
        return _ops.atan(self)
    def atan_(self):
        return _ops.atan_(self)
    def arcsin(self):
        return _ops.arcsin(self)
    def arcsin_(self):
        return _ops.arcsin_(self)
    def arccos(self):
        return _ops.arccos(self)
    def arccos_(self):
        return _ops.arccos_(self)
    def arctan(self):
        return _ops.arctan(self)
    def arctan_(self):
        return _ops.arctan_(self)
    def sinh(self):
        return _ops.sinh(self)
    def sinh_(self):
        return _ops.sinh_(self)
    def cosh(self):
        return _ops.cosh(self)
    def cosh_(self):
        return _ops.cosh_(self)
    def tanh(self):
        return _ops.tanh(self)
    def tanh_(self):
        return _ops.tanh_(self)
    def asinh(self):
        return _ops.asinh(self)
    def asinh_(self):
        return _ops.asinh_(self)
    def acosh(self):
        return _ops.acosh(self)
    def acosh_(self):
        return _ops.acosh_(self)
    def atanh(self):
        return _ops.atanh(self)
    def atanh_(self):
        return _ops.atanh_(self)
    def arcsinh(self):
        return _ops.arcsinh(self)
    def arcsinh_(self):
        return _ops.arcsinh_(self)
    def arccosh(self):
        return _ops.arccosh(self)
    def arccosh_(self):
        return _ops.arccosh_(self)
    def arctanh(self):
        return _ops.arctanh(self)
    def arctanh_(self):
        return _ops.arctanh_(self)
    def sigmoid(self):
        return _ops.sigmoid(self)
    def sigmoid_(self):
        return _ops.sigmoid_(self)
    def relu(self):
        return _ops.relu(self)
    def relu_(self):
        return _ops.relu_(self)
    def ceil(self):
        return _ops.ceil(self)
    def ceil_(self):
        return _ops.ceil_(self)
    def floor(self):
        return _ops.floor(self)
    def floor_(self):
        return _ops.floor_(self)
    def trunc(self):
        return _ops.trunc(self)
    def trunc_(self):
        return _ops.trunc_(self)
    def fix(self):
        return _ops.fix(self)
    def fix_(self):
        return _ops.fix_(self)
    def frac(self):
        return _ops.frac(self)
    def frac_(self):
        return _ops.frac_(self)
    def reciprocal(self):
        return _ops.reciprocal(self)
    def reciprocal_(self):
        return _ops.reciprocal_(self)
    def erf(self):
        return _ops.erf(self)
    def erf_(self):
        return _ops.erf_(self)
    def erfc(self):
        return _ops.erfc(self)
    def erfc_(self):
        return _ops.erfc_(self)
    def erfinv(self):
        return _ops.erfinv(self)
    def erfinv_(self):
        return _ops.erfinv_(self)
    def logical_not(self):
        return _ops.logical_not(self)
    def logical_not_(self):
        return _ops.logical_not_(self)
    def bitwise_not(self):
        return _ops.bitwise_not(self)
    def bitwise_not_(self):
        return _ops.bitwise_not_(self)
    def isnan(self):
        return _ops.isnan(self)
    def isinf(self):
        return _ops.isinf(self)
    def isfinite(self):
        return _ops.isfinite(self)
    def isposinf(self):
        return _ops.isposinf(self)
    def isneginf(self):
        return _ops.isneginf(self)
    def isreal(self):
        return _ops.isreal(self)
    def signbit(self):
        return _ops.signbit(self)
    def conj(self):
        return _ops.conj(self)
    def angle(self):
        return _ops.angle(self)
    @property
    def real(self):
        return _ops.real(self)
    @real.setter
    def real(self, value):
        _ops.real(self).copy_(value)
    @property
    def imag(self):
        return _ops.imag(self)
    @imag.setter
    def imag(self, value):
        _ops.imag(self).copy_(value)
    def deg2rad(self):
        return _ops.deg2rad(self)
    def deg2rad_(self):
        return _ops.deg2rad_(self)
    def rad2deg(self):
        return _ops.rad2deg(self)
    def rad2deg_(self):
        return _ops.rad2deg_(self)
    def lgamma(self):
        return _ops.lgamma(self)
    def lgamma_(self):
        return _ops.lgamma_(self)
    def digamma(self):
        return _ops.digamma(self)
    def digamma_(self):
        return _ops.digamma_(self)
    def sinc(self):
        return _ops.sinc(self)
    def sinc_(self):
        return _ops.sinc_(self)
    def round(self, decimals=0):
        return _ops.round(self, decimals=decimals)
    def round_(self, decimals=0):
        return _ops.round_(self, decimals=decimals)
    def logit(self, eps=None):
        return _ops.logit(self, eps)
    def logit_(self, eps=None):
        return _ops.logit_(self, eps)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return _ops.nan_to_num(self, nan, posinf, neginf)
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return _ops.nan_to_num_(self, nan, posinf, neginf)
    def clamp(self, min=None, max=None):
        return _ops.clamp(self, min, max)
    def clamp_(self, min=None, max=None):
        return _ops.clamp_(self, min, max)
    def clip(self, min=None, max=None):
        return _ops.clip(self, min, max)
    def clip_(self, min=None, max=None):
        return _ops.clip_(self, min, max)
    def clamp_min(self, min):
        return _ops.clamp_min(self, min)
    def clamp_min_(self, min):
        return _ops.clamp_min_(self, min)
    def clamp_max(self, max):
        return _ops.clamp_max(self, max)
    def clamp_max_(self, max):
        return _ops.clamp_max_(self, max)
    def pow(self, exponent):
        return _ops.pow(self, exponent)
    def pow_(self, exponent):
        return _ops.pow_(self, exponent)
    def float_power(self, exponent):
        return _ops.float_power(self, exponent)

    # ---- pointwise: binary ----
    def add(self, other, *, alpha=1):
        return _ops.add(self, other, alpha=alpha)
    def add_(self, other, *, alpha=1):
        return _ops.add_(self, other, alpha=alpha)
    def sub(self, other, *, alpha=1):
        return _ops.sub(self, other, alpha=alpha)
    def sub_(self, other, *, alpha=1):
        return _ops.sub_(self, other, alpha=alpha)
    def subtract(self, other, *, alpha=1):
        return _ops.subtract(self, other, alpha=alpha)
    def subtract_(self, other, *, alpha=1):
        return _ops.subtract_(self, other, alpha=alpha)
    def mul(self, other):
        return _ops.mul(self, other)
    def mul_(self, other):
        return _ops.mul_(self, other)
    def multiply(self, other):
        return _ops.multiply(self, other)
    def multiply_(self, other):
        return _ops.multiply_(self, other)
    def div(self, other, *, rounding_mode=None):
        return _ops.div(self, other, rounding_mode=rounding_mode)
    def div_(self, other, *, rounding_mode=None):
        return _ops.div_(self, other, rounding_mode=rounding_mode)
    def divide(self, other, *, rounding_mode=None):
        return _ops.divide(self, other, rounding_mode=rounding_mode)
    def divide_(self, other, *, rounding_mode=None):
        return _ops.divide_(self, other, rounding_mode=rounding_mode)
    def true_divide(self, other):
        return _ops.true_divide(self, other)
    def true_divide_(self, other):
        return _ops.true_divide_(self, other)
    def floor_divide(self, other):
        return _ops.floor_divide(self, other)
    def floor_divide_(self, other):
        return _ops.floor_divide_(self, other)
    def remainder(self, other):
        return _ops.remainder(self, other)
    def remainder_(self, other):
        return _ops.remainder_(self, other)
    def fmod(self, other):
        return _ops.fmod(self, other)
    def fmod_(self, other):
        return _ops.fmod_(self, other)
    def maximum(self, other):
        return _ops.maximum(self, other)
    def minimum(self, other):
        return _ops.minimum(self, other)
    def fmax(self, other):
        return _ops.fmax(self, other)
    def fmin(self, other):
        return _ops.fmin(self, other)
    def atan2(self, other):
        return _ops.atan2(self, other)
    def atan2_(self, other):
        return _ops.atan2_(self, other)
    def arctan2(self, other):
        return _ops.arctan2(self, other)
    def hypot(self, other):
        return _ops.hypot(self, other)
    def hypot_(self, other):
        return _ops.hypot_(self, other)
    def xlogy(self, other):
        return _ops.xlogy(self, other)
    def xlogy_(self, other):
        return _ops.xlogy_(self, other)
    def logaddexp(self, other):
        return _ops.logaddexp(self, other)
    def copysign(self, other):
        return _ops.copysign(self, other)
    def copysign_(self, other):
        return _ops.copysign_(self, other)
    def heaviside(self, values):
        return _ops.heaviside(self, values)
    def eq(self, other):
        return _ops.eq(self, other)
    def eq_(self, other):
        return _ops.eq_(self, other)
    def ne(self, other):
        return _ops.ne(self, other)
    def ne_(self, other):
        return _ops.ne_(self, other)
    def lt(self, other):
        return _ops.lt(self, other)
    def lt_(self, other):
        return _ops.lt_(self, other)
    def le(self, other):
        return _ops.le(self, other)
    def le_(self, other):
        return _ops.le_(self, other)
    def gt(self, other):
        return _ops.gt(self, other)
    def gt_(self, other):
        return _ops.gt_(self, other)
    def ge(self, other):
        return _ops.ge(self, other)
    def ge_(self, other):
        return _ops.ge_(self, other)
    def greater(self, other):
        return _ops.greater(self, other)
    def less(self, other):
        return _ops.less(self, other)
    def greater_equal(self, other):
        return _ops.greater_equal(self, other)
    def less_equal(self, other):
        return _ops.less_equal(self, other)
    def not_equal(self, other):
        return _ops.not_equal(self, other)
    def logical_and(self, other):
        return _ops.logical_and(self, other)
    def logical_and_(self, other):
        return _ops.logical_and_(self, other)
    def logical_or(self, other):
        return _ops.logical_or(self, other)
    def logical_or_(self, other):
        return _ops.logical_or_(self, other)
    def logical_xor(self, other):
        return _ops.logical_xor(self, other)
    def logical_xor_(self, other):
        return _ops.logical_xor_(self, other)
    def bitwise_and(self, other):
        return _ops.bitwise_and(self, other)
    def bitwise_and_(self, other):
        return _ops.bitwise_and_(self, other)
    def bitwise_or(self, other):
        return _ops.bitwise_or(self, other)
    def bitwise_or_(self, other):
        return _ops.bitwise_or_(self, other)
    def bitwise_xor(self, other):
        return _ops.bitwise_xor(self, other)
    def bitwise_xor_(self, other):
        return _ops.bitwise_xor_(self, other)
    def lerp(self, end, weight):
        return _ops.lerp(self, end, weight)
    def lerp_(self, end, weight):
        return _ops.lerp_(self, end, weight)
    def addcmul(self, tensor1, tensor2, *, value=1):
        return _ops.addcmul(self, tensor1, tensor2, value=value)
    def addcmul_(self, tensor1, tensor2, *, value=1):
        return _ops.addcmul_(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1):
        return _ops.addcdiv(self, tensor1, tensor2, value=value)
    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return _ops.addcdiv_(self, tensor1, tensor2, value=value)

    # ---- pointwise: other ----
    def equal(self, other):
        return _ops.equal(self, other)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.allclose(self, other, rtol, atol, equal_nan)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.isclose(self, other, rtol, atol, equal_nan)
    def where(self, condition, other):
        return _ops.where(condition, self, other)

    # ---- reductions ----
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.sum(self, dim, keepdim, dtype=dtype)
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.nansum(self, dim, keepdim, dtype=dtype)
    def mean(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.mean(self, dim, keepdim, dtype=dtype)
    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.nanmean(self, dim, keepdim, dtype=dtype)
    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.prod(self, dim, keepdim, dtype=dtype)
    def amax(self, dim=(), keepdim=False):
        return _ops.amax(self, dim, keepdim)
    def amin(self, dim=(), keepdim=False):
        return _ops.amin(self, dim, keepdim)
    def max(self, dim=None, keepdim=False):
        return _ops.max(self, dim, keepdim)
    def min(self, dim=None, keepdim=False):
        return _ops.min(self, dim, keepdim)
    def argmax(self, dim=None, keepdim=False):
        return _ops.argmax(self, dim, keepdim)
    def argmin(self, dim=None, keepdim=False):
        return _ops.argmin(self, dim, keepdim)
    def aminmax(self, *, dim=None, keepdim=False):
        return _ops.aminmax(self, dim=dim, keepdim=keepdim)
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops.std(self, dim, unbiased, keepdim, correction=correction)
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops.var(self, dim, unbiased, keepdim, correction=correction)
    def norm(self, p='fro', dim=None, keepdim=False, dtype=None):
        return _ops.norm(self, p, dim, keepdim, dtype)
    def logsumexp(self, dim, keepdim=False):
        return _ops.logsumexp(self, dim, keepdim)
    def all(self, dim=None, keepdim=False):
        return _ops.all(self, dim, keepdim)
    def any(self, dim=None, keepdim=False):
        return _ops.any(self, dim, keepdim)
    def count_nonzero(self, dim=None):
        return _ops.count_nonzero(self, dim)
    def cumsum(self, dim, *, dtype=None):
        return _ops.cumsum(self, dim, dtype=dtype)
    def cumprod(self, dim, *, dtype=None):
        return _ops.cumprod(self, dim, dtype=dtype)
    def cummax(self, dim):
        return _ops.cummax(self, dim)
    def cummin(self, dim):
        return _ops.cummin(self, dim)
    def softmax(self, dim, dtype=None):
        return _ops.softmax(self, dim, dtype)
    def log_softmax(self, dim, dtype=None):
        return _ops.log_softmax(self, dim, dtype)
    def median(self, dim=None, keepdim=False):
        return _ops.median(self, dim, keepdim)
    def sort(self, dim=-1, descending=False, stable=False):
        return _ops.sort(self, dim, descending, stable=stable)
    def argsort(self, dim=-1, descending=False, stable=False):
        return _ops.argsort(self, dim, descending, stable=stable)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _ops.topk(self, k, dim, largest, sorted)
    def kthvalue(self, k, dim=-1, keepdim=False):
        return _ops.kthvalue(self, k, dim, keepdim)

    # ---- linear algebra ----
    def mm(self, mat2):
        return _ops.mm(self, mat2)
    def smm(self, mat2):
        return _ops.smm(self, mat2)
    def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def new(self, *args, **kwargs):
        return _ops.tensor_new(self, *args, **kwargs)
    def matmul(self, other):
        return _ops.matmul(self, other)
    def bmm(self, mat2):
        return _ops.bmm(self, mat2)
    def mv(self, vec):
        return _ops.mv(self, vec)
    def dot(self, other):
        return _ops.dot(self, other)
    def vdot(self, other):
        return _ops.vdot(self, other)
    def inner(self, other):
        return _ops.inner(self, other)
    def outer(self, vec2):
        return _ops.outer(self, vec2)
    def ger(self, vec2):
        return _ops.ger(self, vec2)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return _ops.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return _ops.addmv_(self, mat, vec, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addbmm_(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.baddbmm_(self, batch1, batch2, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        return _ops.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        return _ops.addr_(self, vec1, vec2, beta=beta, alpha=alpha)
    def diag(self, diagonal=0):
        return _ops.diag(self, diagonal)
    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _ops.diagonal(self, offset, dim1, dim2)
    def trace(self):
        return _ops.trace(self)
    def tril(self, diagonal=0):
        return _ops.tril(self, diagonal)
    def tril_(self, diagonal=0):
        return _ops.tril_(self, diagonal)
    def triu(self, diagonal=0):
        return _ops.triu(self, diagonal)
    def triu_(self, diagonal=0):
        return _ops.triu_(self, diagonal)
    def cross(self, other, dim=None):
        return _ops.cross(self, other, dim)

    # ---- shape and views ----
    def view(self, *shape):
        return _ops.view(self, *shape)
    def view_as(self, other):
        return _ops.view_as(self, other)
    def reshape(self, *shape):
        return _ops.reshape(self, *shape)
    def reshape_as(self, other):
        return _ops.reshape_as(self, other)
    def transpose(self, dim0, dim1):
        return _ops.transpose(self, dim0, dim1)
    def transpose_(self, dim0, dim1):
        return _ops.transpose_(self, dim0, dim1)
    def swapaxes(self, axis0, axis1):
        return _ops.swapaxes(self, axis0, axis1)
    def swapdims(self, dim0, dim1):
        return _ops.swapdims(self, dim0, dim1)
    def t(self):
        return _ops.t(self)
    def t_(self):
        return _ops.t_(self)
    def permute(self, *dims):
        return _ops.permute(self, *dims)
    def squeeze(self, dim=None):
        return _ops.squeeze(self, dim)
    def squeeze_(self, dim=None):
        return _ops.squeeze_(self, dim)
    def unsqueeze(self, dim):
        return _ops.unsqueeze(self, dim)
    def unsqueeze_(self, dim):
        return _ops.unsqueeze_(self, dim)
    def expand(self, *sizes):
        return _ops.expand(self, *sizes)
    def expand_as(self, other):
        return _ops.expand_as(self, other)
    def flatten(self, start_dim=0, end_dim=-1):
        return _ops.flatten(self, start_dim, end_dim)
    def unflatten(self, dim, sizes):
        return _ops.unflatten(self, dim, sizes)
    def ravel(self):
        return _ops.ravel(self)
    def narrow(self, dim, start, length):
        return _ops.narrow(self, dim, start, length)
    def narrow_copy(self, dim, start, length):
        return _ops.narrow_copy(self, dim, start, length)
    def select(self, dim, index):
        return _ops.select(self, dim, index)
    def split(self, split_size, dim=0):
        return _ops.split(self, split_size, dim)
    def chunk(self, chunks, dim=0):
        return _ops.chunk(self, chunks, dim)
    def unbind(self, dim=0):
        return _ops.unbind(self, dim)
    def flip(self, *dims):
        return _ops.flip(self, *dims)
    def fliplr(self):
        return _ops.fliplr(self)
    def flipud(self):
        return _ops.flipud(self)
    def roll(self, shifts, dims=None):
        return _ops.roll(self, shifts, dims)
    def repeat(self, *sizes):
        return _ops.repeat(self, *sizes)
    def tile(self, *dims):
        return _ops.tile(self, *dims)
    def movedim(self, source, destination):
        return _ops.movedim(self, source, destination)
    def moveaxis(self, source, destination):
        return _ops.moveaxis(self, source, destination)
    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _ops.repeat_interleave(self, repeats, dim, output_size=output_size)
    def unfold(self, dimension, size, step):
        return _ops.unfold(self, dimension, size, step)

    # ---- indexing and scatter/gather ----
    def index_select(self, dim, index):
        return _ops.index_select(self, dim, index)
    def gather(self, dim, index, *, sparse_grad=False):
        return _ops.gather(self, dim, index)
    def take(self, index):
        return _ops.take(self, index)
    def take_along_dim(self, indices, dim=None):
        return _ops.take_along_dim(self, indices, dim)
    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        return _ops.scatter(self, dim, index, src, value, reduce=reduce)
    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        return _ops.scatter_(self, dim, index, src, value, reduce=reduce)
    def scatter_add(self, dim, index, src):
        return _ops.scatter_add(self, dim, index, src)
    def scatter_add_(self, dim, index, src):
        return _ops.scatter_add_(self, dim, index, src)
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return _ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return _ops.scatter_reduce_(self, dim, index, src, reduce, include_self=include_self)
    def index_add(self, dim, index, source, *, alpha=1):
        return _ops.index_add(self, dim, index, source, alpha=alpha)
    def index_add_(self, dim, index, source, *, alpha=1):
        return _ops.index_add_(self, dim, index, source, alpha=alpha)
    def index_copy(self, dim, index, source):
        return _ops.index_copy(self, dim, index, source)
    def index_copy_(self, dim, index, source):
        return _ops.index_copy_(self, dim, index, source)
    def index_fill(self, dim, index, value):
        return _ops.index_fill(self, dim, index, value)
    def index_fill_(self, dim, index, value):
        return _ops.index_fill_(self, dim, index, value)
    def index_put(self, indices, values, accumulate=False):
        return _ops.index_put(self, indices, values, accumulate)
    def index_put_(self, indices, values, accumulate=False):
        return _ops.index_put_(self, indices, values, accumulate)
    def masked_fill(self, mask, value):
        return _ops.masked_fill(self, mask, value)
    def masked_fill_(self, mask, value):
        return _ops.masked_fill_(self, mask, value)
    def masked_select(self, mask):
        return _ops.masked_select(self, mask)
    def masked_scatter(self, mask, source):
        return _ops.masked_scatter(self, mask, source)
    def masked_scatter_(self, mask, source):
        return _ops.masked_scatter_(self, mask, source)
    def nonzero(self, *, as_tuple=False):
        return _ops.nonzero(self, as_tuple=as_tuple)
    def argwhere(self):
        return _ops.argwhere(self)

    # ---- in-place fills and random ----
    def zero_(self):
        return _ops.zero_(self)
    def fill_(self, value):
        return _ops.fill_(self, value)
    def fill_diagonal_(self, fill_value, wrap=False):
        return _ops.fill_diagonal_(self, fill_value, wrap)
    def set_(self, source=None, storage_offset=None, size=None, stride=None):
        return _ops.set_(self, source, storage_offset, size, stride)
    def copy_(self, src, non_blocking=False):
        return _ops.copy_(self, src)
    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return _ops.uniform_(self, a, b, generator=generator)
    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _ops.normal_(self, mean, std, generator=generator)
    def bernoulli_(self, p=0.5, *, generator=None):
        return _ops.bernoulli_(self, p, generator=generator)
    def random_(self, *args, generator=None, **kwargs):
        return _ops.random_(self, *args, generator=generator, **kwargs)
    def exponential_(self, lambd=1.0, *, generator=None):
        return _ops.exponential_(self, lambd, generator=generator)
    def geometric_(self, p, *, generator=None):
        return _ops.geometric_(self, p, generator=generator)
    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return _ops.cauchy_(self, median, sigma, generator=generator)
    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return _ops.log_normal_(self, mean, std, generator=generator)
    def bernoulli(self, p=None, *, generator=None):
        return _ops.bernoulli(self, p, generator=generator)
    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _ops.multinomial(self, num_samples, replacement, generator=generator)

    # ---- set ops, statistics, utilities (_ops/set_ops, arranging, predicates, quantile_cov) ----
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return _ops.unique(self, sorted, return_inverse, return_counts, dim)
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return _ops.unique_consecutive(self, return_inverse, return_counts, dim)
    def bincount(self, weights=None, minlength=0):
        return _ops.bincount(self, weights, minlength)
    def histc(self, bins=100, min=0, max=0):
        return _ops.histc(self, bins, min, max)
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return _ops.diff(self, n, dim, prepend, append)
    def tensor_split(self, indices_or_sections, dim=0):
        return _ops.tensor_split(self, indices_or_sections, dim)
    def hsplit(self, indices_or_sections):
        return _ops.hsplit(self, indices_or_sections)
    def vsplit(self, indices_or_sections):
        return _ops.vsplit(self, indices_or_sections)
    def dsplit(self, indices_or_sections):
        return _ops.dsplit(self, indices_or_sections)
    def rot90(self, k=1, dims=(0, 1)):
        return _ops.rot90(self, k, dims)
    def is_nonzero(self):
        return _ops.is_nonzero(self)
    def is_same_size(self, other):
        return _ops.is_same_size(self, other)
    def i0(self):
        return _ops.i0(self)
    def i0_(self):
        return _ops.i0_(self)
    def igamma(self, other):
        return _ops.igamma(self, other)
    def igammac(self, other):
        return _ops.igammac(self, other)
    def mvlgamma(self, p):
        return _ops.mvlgamma(self, p)
    def logaddexp2(self, other):
        return _ops.logaddexp2(self, other)
    def logcumsumexp(self, dim):
        return _ops.logcumsumexp(self, dim)
    def gcd(self, other):
        return _ops.gcd(self, other)
    def gcd_(self, other):
        return _ops.gcd_(self, other)
    def lcm(self, other):
        return _ops.lcm(self, other)
    def lcm_(self, other):
        return _ops.lcm_(self, other)
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _ops.quantile(self, q, dim, keepdim, interpolation=interpolation)
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _ops.nanquantile(self, q, dim, keepdim, interpolation=interpolation)
    def nanmedian(self, dim=None, keepdim=False):
        return _ops.nanmedian(self, dim, keepdim)
    def mode(self, dim=-1, keepdim=False):
        return _ops.mode(self, dim, keepdim)
    def msort(self):
        return _ops.msort(self)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return _ops.cov(self, correction=correction, fweights=fweights, aweights=aweights)
    def corrcoef(self):
        return _ops.corrcoef(self)

    # ---- linear algebra: forwards to sparsetorch.linalg._aliases (bound lazily, see below) ----
    def inverse(self):
        return _linalg().inverse(self)
    def det(self):
        return _linalg().det(self)
    def logdet(self):
        return _linalg().logdet(self)
    def slogdet(self):
        return _linalg().slogdet(self)
    def pinverse(self, rcond=1e-15):
        return _linalg().pinverse(self, rcond)
    def matrix_power(self, n):
        return _linalg().matrix_power(self, n)
    def matrix_exp(self):
        return _linalg().matrix_exp(self)
    def cholesky(self, upper=False):
        return _linalg().cholesky(self, upper)
    def qr(self, some=True):
        return _linalg().qr(self, some)
    def svd(self, some=True, compute_uv=True):
        return _linalg().svd(self, some, compute_uv)


class _DataModelForwards:
    """Forwards of the data model's conversions, autograd entry points and Python operators."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        # Tensor(data) / Tensor(*sizes): legacy constructor, float32 as in torch
        return _legacy.tensor_ctor(cls, args, kwargs)

    def stride(self, dim=None):
        return _ops.stride(self, dim)

    def is_contiguous(self, memory_format=None):
        return _ops.is_contiguous(self)

    def data_ptr(self):
        return _ops.data_ptr(self)

    @property
    def T(self):
        if self.ndim != 2:  # torch's deprecation (once per process)
            _torch_warnings.T_not_2d(self.ndim)
        return _ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    # ---- autograd ----
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        return _function.register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        return _engine.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        _function.retain_grad(self)

    # ---- conversion and interop ----
    def item(self):
        return _ops.item(self)

    def tolist(self):
        return _ops.tolist(self)

    def numpy(self, *, force=False):
        return _ops.to_numpy(self, force)

    def __array__(self, dtype=None, copy=None):
        return _ops.array_protocol(self, dtype, copy)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _ops.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return _ops.dlpack_device(self)

    def to(self, *args, **kwargs):
        return _ops.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking=False):
        return _ops.type_(self, dtype, non_blocking)

    def type_as(self, other):
        return _ops.to(self, other.dtype)

    def cpu(self):
        return _ops.to(self, "cpu")

    def cuda(self, device=None, non_blocking=False):
        return _ops.to(self, "cuda" if device is None else device)

    def float(self):
        return _ops.to(self, D.float32)

    def double(self):
        return _ops.to(self, D.float64)

    def half(self):
        return _ops.to(self, D.float16)

    def bfloat16(self):
        return _ops.to(self, D.bfloat16)

    def int(self):
        return _ops.to(self, D.int32)

    def long(self):
        return _ops.to(self, D.int64)

    def short(self):
        return _ops.to(self, D.int16)

    def char(self):
        return _ops.to(self, D.int8)

    def byte(self):
        return _ops.to(self, D.uint8)

    def bool(self):
        return _ops.to(self, D.bool)

    def cfloat(self):
        return _ops.to(self, D.complex64)

    def cdouble(self):
        return _ops.to(self, D.complex128)

    def clone(self, *, memory_format=None):
        return _ops.clone(self)

    def contiguous(self, memory_format=None):
        return _ops.contiguous(self)

    def __repr__(self):
        return _ops.tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0 and self.layout is strided:
            return format(self.item(), spec)
        return object.__format__(self, spec)  # TypeError for a non-empty spec, as torch

    def __bool__(self):
        return _ops.to_bool(self)

    def __float__(self):
        return float(_ops.scalar_value(self, "float"))

    def __int__(self):
        return int(_ops.scalar_value(self, "int"))

    def __index__(self):
        return _ops.index_value(self)

    def __complex__(self):
        return complex(_ops.scalar_value(self, "complex"))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __reduce_ex__(self, proto):
        return _ops.reduce_tensor(self)

    def __deepcopy__(self, memo):
        return _ops.deepcopy_tensor(self, memo)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _ops.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.tensor_new_zeros(self, size, dtype, device, requires_grad, "new_zeros")

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.tensor_new_zeros(self, size, dtype, device, requires_grad, "new_empty")

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return _ops.full(size, fill_value, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)

    # ---- Python operators ----
    def __add__(self, other):
        return _pw._add(self, other)

    def __radd__(self, other):
        return _pw._add(self, other)

    def __iadd__(self, other):
        return _ops.add_(self, other)

    def __sub__(self, other):
        return _pw._sub(self, other)

    def __rsub__(self, other):
        return _ops.rsub(self, other)

    def __isub__(self, other):
        return _ops.sub_(self, other)

    def __mul__(self, other):
        return _pw.mul(self, other)

    def __rmul__(self, other):
        return _pw.mul(self, other)

    def __imul__(self, other):
        return _ops.mul_(self, other)

    def __truediv__(self, other):
        return _pw._div(self, other)

    def __rtruediv__(self, other):
        return _ops.rdiv(self, other)

    def __itruediv__(self, other):
        return _ops.div_(self, other)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.rfloordiv(self, other)

    def __ifloordiv__(self, other):
        return _ops.floor_divide_(self, other)

    def __mod__(self, other):
        return _ops.remainder(self, other)

    def __rmod__(self, other):
        return _ops.rremainder(self, other)

    def __imod__(self, other):
        return _ops.remainder_(self, other)

    def __pow__(self, other):
        return _ops.pow(self, other)

    def __rpow__(self, other):
        return _ops.rpow(self, other)

    def __ipow__(self, other):
        return _ops.pow_(self, other)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.rmatmul(self, other)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.bitwise_not(self)

    def __and__(self, other):
        return _ops.bitwise_and(self, other)

    def __rand__(self, other):
        return _ops.bitwise_and(self, other)

    def __iand__(self, other):
        return _ops.bitwise_and_(self, other)

    def __or__(self, other):
        return _ops.bitwise_or(self, other)

    def __ror__(self, other):
        return _ops.bitwise_or(self, other)

    def __ior__(self, other):
        return _ops.bitwise_or_(self, other)

    def __xor__(self, other):
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _ops.bitwise_xor(self, other)

    def __ixor__(self, other):
        return _ops.bitwise_xor_(self, other)

    def __eq__(self, other):
        return _pw.eq(self, other)

    def __ne__(self, other):
        return _pw.ne(self, other)

    def __lt__(self, other):
        return _pw.lt(self, other)

    def __le__(self, other):
        return _pw.le(self, other)

    def __gt__(self, other):
        return _pw.gt(self, other)

    def __ge__(self, other):
        return _pw.ge(self, other)

    def __getitem__(self, key):
        return _ops.getitem(self, key)

    def __setitem__(self, key, value):
        _ops.setitem(self, key, value)



def _accept_numpy_kwargs():
    """``axis=`` / ``keepdims=`` on the dim-taking methods torch's parser gives them to."""
    from ._numpy_kwargs import METHODS, return_statements, with_numpy_kwargs

    with open(__file__, encoding="utf-8") as f:  # the forwards' bodies are inlined
        bodies = return_statements(f.read(), [TensorMethods.__dict__[n] for n in METHODS
                                              if n in TensorMethods.__dict__])
    for name in METHODS:
        fn = TensorMethods.__dict__.get(name)
        if fn is not None:
            setattr(TensorMethods, name, with_numpy_kwargs(fn, name, inline=True,
                                                           body=bodies.get(name)))


_accept_numpy_kwargs()


def _linalg():
    """``sparsetorch.linalg._aliases`` (imported on first use: the package imports the ops)."""
    from .linalg import _aliases

    return _aliases


def _document(tensor_cls):
    """Docstrings for the forwards above, in torch's style (``abs()`` then "See :func:`torch.abs`"):
    the signature from this file, the op's own summary line; those of ``_tensor_docs.DOCS`` for the
    data model's methods and properties. Run by ``_tensor.py`` once ``_ops`` is bound (``help(x.abs)``;
    tests/test_docstrings.py checks every public method has one)."""
    import re

    from ._tensor_docs import DOCS

    for name, doc in DOCS.items():
        v = tensor_cls.__dict__.get(name, TensorMethods.__dict__.get(name))
        if v is not None and not v.__doc__:
            v.__doc__ = doc
    with open(__file__, encoding="utf-8") as f:
        src = f.read()
    forward = re.compile(r"^    def (\w+)\(self(?:, )?([^:]*?)\):\n\s+return (_ops|_linalg\(\))\.(\w+)\(",
                         re.MULTILINE)
    public = set(_ops.__all__)
    for name, sig, via, target in forward.findall(src):
        fn = TensorMethods.__dict__.get(name)
        if fn is None or fn.__doc__:
            continue
        sig = " ".join(sig.split())
        head = f"{name}({sig})\n\n"
        if name.endswith("_") and name[:-1] in TensorMethods.__dict__:
            fn.__doc__ = head + f"In-place version of :meth:`~Tensor.{name[:-1]}`."
            continue
        doc = (getattr(getattr(_ops, target, None), "__doc__", None) or "").strip() if via == "_ops" else ""
        paras = doc.split("\n\n")
        if len(paras) > 1 and paras[0].startswith(target + "("):  # the op's own signature line
            paras = paras[1:]
        summary = " ".join(paras[0].split())
        if via != "_ops" or target in public:
            fn.__doc__ = head + f"See :func:`sparsetorch.{target}`." + (f" {summary}" if summary else "")
        elif summary:
            fn.__doc__ = head + summary


# Python calls these with (self, other) (or (self,), (self, key[, value]), (self, memo)) only,
# so the op function itself is the method (not __pow__: pow(x, y, mod) passes a third argument).
_OPERATORS = {
    "__add__": "_pw._add", "__radd__": "_pw._add", "__sub__": "_pw._sub",
    "__mul__": "_pw.mul", "__rmul__": "_pw.mul", "__truediv__": "_pw._div",
    "__eq__": "_pw.eq", "__ne__": "_pw.ne", "__lt__": "_pw.lt", "__le__": "_pw.le",
    "__gt__": "_pw.gt", "__ge__": "_pw.ge",
    "__iadd__": "add_", "__rsub__": "rsub", "__isub__": "sub_", "__imul__": "mul_",
    "__rtruediv__": "rdiv", "__itruediv__": "div_", "__floordiv__": "floor_divide",
    "__rfloordiv__": "rfloordiv", "__ifloordiv__": "floor_divide_", "__mod__": "remainder",
    "__rmod__": "rremainder", "__imod__": "remainder_", "__rpow__": "rpow",
    "__ipow__": "pow_", "__matmul__": "matmul", "__rmatmul__": "rmatmul", "__neg__": "neg",
    "__abs__": "abs", "__invert__": "bitwise_not", "__and__": "bitwise_and",
    "__rand__": "bitwise_and", "__iand__": "bitwise_and_", "__or__": "bitwise_or",
    "__ror__": "bitwise_or", "__ior__": "bitwise_or_", "__xor__": "bitwise_xor",
    "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_", "__getitem__": "getitem",
    "__setitem__": "setitem", "__repr__": "tensor_repr", "__str__": "tensor_repr",
    "__bool__": "to_bool", "__index__": "index_value", "__deepcopy__": "deepcopy_tensor",
}
_FORWARD_OPS = frozenset(("RESUME", "NOP", "CACHE", "PRECALL", "PUSH_NULL", "LOAD_GLOBAL", "LOAD_ATTR",
                          "LOAD_METHOD", "CALL", "RETURN_VALUE"))
_SKIP = frozenset(("__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__",
                   "__firstlineno__", "__static_attributes__"))


def _op_function(path):
    mod, _, name = path.rpartition(".")
    fn = getattr(_pw if mod == "_pw" else _ops, name)
    return fn if inspect.isfunction(fn) else None


def _same_signature_target(name, fn):
    """The op function a forward ``def name(self, a, b=1): return _ops.X(self, a, b)`` may be
    replaced by: X itself when its parameters after the first are exactly the forward's (names,
    kinds, defaults), so every call, good or bad, behaves the same; else None."""
    if not inspect.isfunction(fn) or getattr(fn, "__wrapped__", None) is not None:
        return None
    code = fn.__code__
    if code.co_names[:1] != ("_ops",) or len(code.co_names) != 2:
        return None
    target = getattr(_ops, code.co_names[1], None)
    if not inspect.isfunction(target) or getattr(target, "__wrapped__", None) is not None \
            or not (target.__doc__ or "").strip():  # help(x.name) must still say something
        return None
    try:
        mine = list(inspect.signature(fn).parameters.values())
        theirs = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None
    if not mine or not theirs or len(mine) != len(theirs) or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD for p in mine) or any(
            (a.name, a.kind, a.default) != (b.name, b.kind, b.default)
            for a, b in zip(mine[1:], theirs[1:])) or theirs[0].kind is not theirs[0].POSITIONAL_OR_KEYWORD:
        return None
    # the body must pass every parameter through positionally, in order (read from the bytecode;
    # any instruction beyond loads, one call and the return keeps the forward)
    loads = []
    for ins in dis.get_instructions(fn):
        op = ins.opname
        if op == "LOAD_FAST":
            loads.append(ins.argval)
        elif op not in _FORWARD_OPS:
            return None
    return target if loads == [p.name for p in mine] else None


def _bind():
    """Write the methods onto ``Tensor``: the one place that does (issue 13, floor 8)."""
    own = set(Tensor.__dict__)
    direct = []
    for cls in (_DataModelForwards, TensorMethods):
        for name, v in cls.__dict__.items():
            if name in _SKIP or name in own:
                continue
            target = _op_function(_OPERATORS[name]) if name in _OPERATORS else \
                _same_signature_target(name, v)
            if target is not None:
                direct.append(name)
                v = target
            setattr(Tensor, name, v)
    return tuple(direct)


DIRECT = _bind()  # the method names bound to their op function itself


def _grad_property(slot):
    """``.grad`` over its slot, with torch's UserWarning when the tensor read is not a leaf, does not
    retain its gradient and has none (torch's ``TensorBase::grad``)."""
    get = slot.__get__

    def grad(self):
        try:
            g = get(self)
        except AttributeError:  # never set: results of ops leave the slot empty (a property
            g = None            # store costs ~100 ns on every op's hot path)
        if g is None and self.grad_fn is not None and not self.retains_grad:
            _torch_warnings.non_leaf_grad()
        return g

    def delete(self):  # ``del x.grad`` leaves None, as in torch
        slot.__set__(self, None)

    return property(grad, slot.__set__, delete, Tensor.__slots__["grad"])


Tensor.grad = _grad_property(Tensor.__dict__["grad"])
_document(Tensor)  # docstrings of the methods (forwards: from the ops)
