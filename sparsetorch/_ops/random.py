"""Random sampling (rand, randn, randint, normal, bernoulli, ...), seeding, and in-place fills.

Numbers are drawn on the host from a :class:`~sparsetorch.Generator` (torch's mt19937) through
torch's own transforms (``_sampling``), then moved to the tensor's device: ``manual_seed(s)`` gives
the numbers torch's CPU generator gives, and float32 results never pass through a float64 array
that could leak. The in-place samplers (``uniform_``, ``normal_``, ``bernoulli_`` ...) are derived
through ``_dispatch.inplace`` from a functional op, so their graph semantics match torch: overwriting a non-leaf gives a zero
gradient to its old history. ``fill_`` / ``zero_`` / ``copy_`` are ``_fill.py``'s (re-exported
here).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np  # host-side RNG draws; kernels below still use be.xp only

from .. import _dtype as D
from .._backend import get_backend
from .._device import as_device
from .._dispatch import bump_version, call, defop, inplace
from .._generator import (  # noqa: F401 - seeding functions are public here too
    Generator,
    check_generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .._layout import strided
from .._tensor import Tensor
from .._variants import method
from ._data import (
    broadcast_shape,
    check_dtype,
    finish,
    out_dtype,
    parse_size,
    place,
    size_args,
    zero_grad,
)
from . import _sampling as SM
from ._fill import copy_, direct, fill_, zero_
from ._util import check_tensor, with_out

if TYPE_CHECKING:
    from .._dtype import dtype
    from .._layout import layout
    from .._typing import DeviceLike, IntOrSize, SizeLike

__all__ = [
    "Generator",
    "bernoulli",
    "bernoulli_",
    "cauchy_",
    "copy_",
    "default_generator",
    "exponential_",
    "fill_",
    "geometric_",
    "get_rng_state",
    "initial_seed",
    "log_normal_",
    "manual_seed",
    "multinomial",
    "normal",
    "normal_",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "random_",
    "randperm",
    "seed",
    "set_rng_state",
    "uniform_",
    "zero_",
]

S = (strided,)


# ---- host draws ----


def int_bounds(dt):
    if dt is D.bool:
        return 0, 1
    if dt.is_floating_point:
        digits = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}[dt.name]
        return -(1 << digits), 1 << digits
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


def _through(v, dt):
    """``static_cast<int64_t>(static_cast<scalar_t>(v))`` (half types convert through float)."""
    a = np.asarray(v, np.int64)
    if dt.np in (np.float16,) or dt.name == "bfloat16":
        a = a.astype(np.float32)
    return int(a.astype(dt.np).astype(np.float64))


def _float_range(lo, hi, dt):
    """torch's ``update_from`` / ``update_to``: ends a floating dtype cannot hold move inwards."""
    digits = int_bounds(dt)[1].bit_length() - 1
    up = _through(lo + 1, dt)
    if up < lo:
        lo = up + (1 << (abs(lo + 1).bit_length() - 1 - digits + 1))
    down = _through(hi - 1, dt)
    if down >= hi:
        hi = down - (1 << (abs(hi - 1).bit_length() - 1 - digits + 1))
    if lo >= hi:
        raise RuntimeError(
            "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
            f"got from={lo} >= to={hi}"
        )
    return lo, hi


def _from_to(g, shape, dt, lo, hi):
    """Integers in [lo, hi): torch's random_from_to (or the full 64-bit kernel)."""
    if dt.is_floating_point and hi - lo < 1 << 64:
        lo, hi = _float_range(lo, hi, dt)
    if hi - lo >= 1 << 64:
        return SM.random_full_64(g, shape, dt)
    return SM.random_from_to(g, shape, dt, hi - lo, lo)


def _continuous(dt, what, shown):
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{what} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {shown}"
        )


def _float_only(dt, kernel):
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "int64": "long int", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def _check_from_to(lo, hi, dt):
    """[lo, hi) for random_/randint: torch's ordering and dtype-range checks (and its warning
    for floating ends beyond the integers the dtype holds exactly)."""
    if lo >= hi:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
        )
    if dt.is_complex:
        return
    name = _C_NAMES.get(dt.name, dt.name)
    if dt.is_floating_point:
        fi = D.finfo(dt)
        mn, mx = float(fi.min), float(fi.max)
    else:
        mn, mx = int_bounds(dt)
    if lo < mn or lo > mx:
        raise RuntimeError(f"from is out of bounds for {name}")
    if hi - 1 < mn or hi - 1 > mx:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    if dt.is_floating_point:
        digits = int_bounds(dt)[1].bit_length() - 1
        for v, what in ((lo, "from"), (hi - 1, "to - 1")):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, "
                    "please fix the code in advance",
                    UserWarning,
                    stacklevel=3,
                )


# ---- random factories ----


def rand(
    *args: IntOrSize,
    size: SizeLike | None = None,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Numbers drawn uniformly from ``[0, 1)``, with the shape given by ``size``.

    >>> g = Generator().manual_seed(0); rand(2, 3, generator=g).shape
    sparsetorch.Size([2, 3])
    """
    check_dtype(dtype, "rand")
    shape = size_args("rand", args, size)
    dt = out_dtype(dtype, out, "rand") or D.get_default_dtype()
    _float_only(dt, "check_uniform_bounds")
    arr = SM.uniform(check_generator(generator, "rand"), shape, dt)
    return finish(place(arr, dt, as_device(device)), requires_grad, out, "rand")


def randn(
    *args: IntOrSize,
    size: SizeLike | None = None,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Numbers drawn from the standard normal distribution, with the shape given by ``size``."""
    check_dtype(dtype, "randn")
    shape = size_args("randn", args, size)
    dt = out_dtype(dtype, out, "randn") or D.get_default_dtype()
    _float_only(dt, "normal_kernel_cpu")
    arr = SM.normal(check_generator(generator, "randn"), shape, dt)
    return finish(place(arr, dt, as_device(device)), requires_grad, out, "randn")


def _int_value(v, fname, arg, pos):
    if isinstance(v, Tensor) and not (v.dtype.is_floating_point or v.dtype.is_complex):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be int, not {type(v).__name__}"
        )
    return int(v)


def _randint_args(fname, args, low, high, size, npos):
    """Resolve torch's ``(high, size)`` / ``(low, high, size)`` positional forms."""
    args = list(args)
    if len(args) > npos:
        raise TypeError(f"{fname}() takes at most {npos} positional arguments ({len(args)} given)")
    if npos == 3 and size is None and args:
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None:
        raise TypeError(f"{fname}() missing required argument 'high'")
    lo = 0 if low is None else _int_value(low, fname, "low", 1)
    hi = _int_value(high, fname, "high", 2 if low is not None else 1)
    return lo, hi, size


def randint(
    *args: IntOrSize,
    low: int | None = None,
    high: int | None = None,
    size: SizeLike | None = None,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` (``low`` defaults to 0); int64 by default.

    Called as ``randint(high, size)`` or ``randint(low, high, size)``.
    """
    check_dtype(dtype, "randint")
    lo, hi, size = _randint_args("randint", args, low, high, size, 3)
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}"
        )
    shape = parse_size((size,), "randint")
    dt = out_dtype(dtype, out, "randint") or D.int64
    _check_from_to(lo, hi, dt)
    arr = _from_to(check_generator(generator, "randint"), shape, dt, lo, hi)
    return finish(place(arr, dt, as_device(device)), requires_grad, out, "randint")


def randperm(
    n,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """A random permutation of the integers ``0 .. n-1`` (int64 by default)."""
    check_dtype(dtype, "randperm")
    n = _int_value(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = out_dtype(dtype, out, "randperm") or D.int64
    if n and not dt.is_complex and n - 1 > int_bounds(dt)[1]:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    arr = SM.randperm(check_generator(generator, "randperm"), n).astype(dt.np)
    return finish(place(arr, dt, as_device(device)), requires_grad, out, "randperm")


def dense_order(t):
    """For a strided tensor that is dense and non-overlapping but not contiguous (a permuted
    layout, e.g. ``x.t()``), its dimensions from the largest stride to the smallest; None
    otherwise. torch's ``empty_like`` keeps such strides, so its random ``*_like`` results and
    dropout noise are drawn in that memory order."""
    if t.layout is not strided or t.ndim < 2 or t.is_contiguous():
        return None
    shape, strides = tuple(t.shape), t.stride()
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return None
            expected *= shape[d]
    return order


def _permuted(t, order, requires_grad):
    """``t`` (drawn in the permuted shape) seen in the logical order: the strides torch gives."""
    v = t.permute(*[int(i) for i in np.argsort(order)]).detach()
    return v.requires_grad_() if requires_grad else v


def empty_like_preserve(t):
    """``empty_like`` keeping the strides of a dense permuted tensor (torch's preserve_format)."""
    from .creation import empty, empty_like

    order = dense_order(t)
    if order is None:
        return empty_like(t)
    shape = tuple(t.shape)
    out = empty(tuple(shape[d] for d in order), dtype=t.dtype, device=t.device)
    return _permuted(out, order, False)


def _like_args(fname, input, dtype, device):
    check_tensor(input, fname)
    check_dtype(dtype, fname)
    return tuple(input.shape), dtype or input.dtype, device or input.device


def rand_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """:func:`rand` with the size (and by default dtype and device) of ``input``."""
    shape, dt, dev = _like_args("rand_like", input, dtype, device)
    order = dense_order(input)
    if order is not None:  # torch fills the strided result in memory order
        r = rand(tuple(shape[d] for d in order), generator=generator, dtype=dt, device=dev)
        return _permuted(r, order, requires_grad)
    return rand(shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    layout: layout | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """:func:`randn` with the size (and by default dtype and device) of ``input``."""
    shape, dt, dev = _like_args("randn_like", input, dtype, device)
    order = dense_order(input)
    if order is not None:  # memory order, and torch's scalar path (the result is not contiguous)
        check_dtype(dt, "randn_like")
        _float_only(dt, "normal_kernel_cpu")
        g = check_generator(generator, "randn_like")
        arr = SM.normal(g, tuple(shape[d] for d in order), dt, 0.0, 1.0, False)
        return _permuted(place(arr, dt, as_device(dev)), order, requires_grad)
    return randn(shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad)


def randint_like(
    input,
    *args,
    low=None,
    high=None,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
):
    """:func:`randint` with the size (and by default dtype and device) of ``input``;
    called as ``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    shape, dt, dev = _like_args("randint_like", input, dtype, device)
    lo, hi, _ = _randint_args("randint_like", args, low, high, None, 2)
    order = dense_order(input)
    if order is not None:  # torch fills the strided result in memory order
        r = randint(lo, hi, tuple(shape[d] for d in order), generator=generator, dtype=dt,
                    device=dev)
        return _permuted(r, order, requires_grad)
    return randint(
        lo, hi, shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad
    )


# ---- sampling from tensors: normal, bernoulli, poisson, multinomial ----


def _host(t):
    a = t._data
    return a if isinstance(a, np.ndarray) else a.get()


# ``values`` are drawn on the host and moved to the device before the call; the kernel just hands
# them over, so the op exists for its autograd node (zero gradient, as torch's *Backward nodes).
def _sampling_op(name):
    return defop(
        name, {S: lambda be, x, values: values}, params=("values",), grads={"input": zero_grad}
    )


_normal_op = defop(
    "normal",
    {(strided, strided): lambda be, m, s, z: m + s * z},
    inputs=("mean", "std"),
    params=("noise",),
    grads={"mean": zero_grad, "std": zero_grad},
)
_bernoulli_op = _sampling_op("bernoulli")
_poisson_op = _sampling_op("poisson")


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Normal samples with the given ``mean`` and ``std`` (Tensors broadcast; with two numbers
    ``size`` gives the shape)."""
    rng = check_generator(generator, "normal")
    mt, st_ = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st_:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got (float, float): "
                "give a size, or a Tensor mean or std"
            )
        check_dtype(dtype, "normal")
        dt = out_dtype(dtype, out, "normal") or D.get_default_dtype()
        _float_only(dt, "normal_kernel_cpu")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        arr = SM.normal(rng, parse_size((size,), "normal"), dt, float(mean), float(std))
        return finish(place(arr, dt, as_device(device)), requires_grad, out, "normal")
    if size is not None:
        raise TypeError("normal(): 'size' is only accepted when mean and std are numbers")
    ref = mean if mt else std
    dt = ref.dtype
    _float_only(dt, "normal_kernel_cpu")
    if st_:
        if bool((_host(std) < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = broadcast_shape(mean.shape if mt else (), std.shape if st_ else ())
    if st_:  # torch: normal_(0, 1), then mul_(std).add_(mean)
        z = SM.normal(rng, shape, dt)
    else:  # torch: normal_(0, std), then add_(mean)
        z = SM.normal(rng, shape, dt, 0.0, float(std))
        std = 1.0
    noise = place(z, dt, ref.device)._data
    r = call(_normal_op, (mean, std), (noise,), dt, None)
    return with_out(r, out, "normal") if out is not None else r


def _check_prob_tensor(p, what):
    h = _host(p)
    if h.size and not bool(((h >= 0) & (h <= 1)).all()):
        raise RuntimeError(f"{what}: Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return h


@method
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: element ``i`` is 1 with probability ``input[i]`` (or ``p`` when given)."""
    check_tensor(input, "bernoulli")
    rng = check_generator(generator, "bernoulli")
    shape = tuple(input.shape)
    if p is None:
        _float_only(input.dtype, "bernoulli_tensor_cpu_p_")
        probs = _check_prob_tensor(input, "bernoulli")
        values = SM.bernoulli_tensor(rng, np.array(probs, order="C"), input.dtype)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        values = SM.bernoulli_scalar(rng, shape, input.dtype, p)
    r = call(_bernoulli_op, (input,), (place(values, input.dtype, input.device)._data,))
    return with_out(r, out, "bernoulli") if out is not None else r


def poisson(input, generator=None):
    """Samples from Poisson distributions with rates ``input`` (same dtype as ``input``)."""
    check_tensor(input, "poisson")
    _float_only(input.dtype, "poisson_cpu")
    lam = _host(input)
    if lam.size and not bool((lam >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    values = SM.poisson(check_generator(generator, "poisson"), lam, input.dtype)
    return call(_poisson_op, (input,), (place(values, input.dtype, input.device)._data,))


@method
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices sampled from the categorical distributions in the rows of ``input``
    (non-negative weights, not necessarily normalised); int64, never differentiable."""
    check_tensor(input, "multinomial")
    rng = check_generator(generator, "multinomial")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: "
            f"{input.dtype.scalar_name}"
        )
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = _int_value(num_samples, "multinomial", "num_samples", 2)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    raw = _host(input).reshape(-1, input.shape[-1])
    w = raw.astype(np.float64)
    k = w.shape[1]
    if not replacement and n > k:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not bool((np.isfinite(w) & (w >= 0)).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = w.sum(1)
    if bool((total <= 0).any()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = None
    order = dense_order(input)
    if order is not None and (not replacement or n == 1):  # torch's empty_like(p).exponential_()
        full = tuple(input.shape)
        q = SM.exponential(rng, tuple(full[d] for d in order), input.dtype, 1.0)
        q = np.transpose(q, np.argsort(order)).reshape(raw.shape)
    res = SM.multinomial(rng, raw, n, replacement, input.dtype, q)
    res = res.reshape(input.shape[:-1] + (n,))
    r = place(res, D.int64, input.device)
    return with_out(r, out, "multinomial") if out is not None else r


# ---- in-place random fills ----

_uniform_op = _sampling_op("uniform")
_normal_fill_op = _sampling_op("normal")
_bernoulli_fill_op = _sampling_op("bernoulli")
_random_op = _sampling_op("random")
_exponential_op = _sampling_op("exponential")


def _overwrite(self, name, op, values):
    """Write host ``values`` into ``self`` in place through the op ``op`` (graph-aware)."""
    data = place(values, self.dtype, self.device)._data
    if direct(self):
        get_backend(self.device).xp.copyto(self._data, data)
        bump_version(self)
        return self
    return inplace(lambda src, v: call(op, (src,), (v,)), self, (data,), None, name)


def _in_order(self, draw):
    """``draw(shape, contiguous)`` in the order torch's TensorIterator fills ``self``: memory
    order (dimensions from the largest stride to the smallest), returned in logical order."""
    shape = tuple(self.shape)
    if len(shape) < 2 or self.is_contiguous():
        return draw(shape, True)
    strides = self.stride()
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    values = draw(tuple(shape[d] for d in order), False)
    return np.transpose(values, np.argsort(order))


def _dense_self(self, name):
    check_tensor(self, name, "self")
    if self.layout is not strided:
        raise NotImplementedError(f"{name}: not implemented for {self.layout.name} tensors")
    return tuple(self.shape)


def uniform_(input, from_=0.0, to=1.0, *, generator=None):
    """Fills ``input`` with numbers drawn uniformly from ``[from_, to)``."""
    _dense_self(input, "uniform_")
    dt = input.dtype
    _float_only(dt, "check_uniform_bounds")
    from_, to = float(from_), float(to)
    real = dt.to_real()
    fi = D.finfo(real)
    lo, hi = float(fi.min), float(fi.max)
    for v, what in ((from_, "from"), (to, "to")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {_C_NAMES.get(real.name, real.name)}")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    if to - from_ > hi:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{real.scalar_name}>::max(), "
            f"but found to={to:g} and from={from_:g} which result in to-from to exceed the limit"
        )
    g = check_generator(generator, "uniform_")
    values = _in_order(input, lambda s, c: SM.uniform(g, s, dt, from_, to))
    return _overwrite(input, "uniform_", _uniform_op, values)


@method
def normal_(input, mean=0.0, std=1.0, *, generator=None):
    """Fills ``input`` with samples from N(``mean``, ``std``**2)."""
    _dense_self(input, "normal_")
    dt = input.dtype
    _float_only(dt, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    g = check_generator(generator, "normal_")
    values = _in_order(input, lambda s, c: SM.normal(g, s, dt, float(mean), float(std), c))
    return _overwrite(input, "normal_", _normal_fill_op, values)


@method
def bernoulli_(input, p=0.5, *, generator=None):
    """Fills ``input`` with 0/1 samples, 1 with probability ``p`` (a number or a tensor
    broadcastable to ``input``)."""
    shape = _dense_self(input, "bernoulli_")
    rng = check_generator(generator, "bernoulli_")
    if isinstance(p, Tensor):
        if broadcast_shape(shape, tuple(p.shape)) != shape:
            raise RuntimeError(
                f"bernoulli_: p of shape {list(p.shape)} can't be broadcast to "
                f"self of shape {list(shape)}"
            )
        probs = np.array(np.broadcast_to(_check_prob_tensor(p, "bernoulli_"), shape), order="C")
        if input.ndim >= 2 and not input.is_contiguous():
            order = sorted(range(input.ndim), key=lambda d: -input.stride()[d])
            drawn = SM.bernoulli_tensor(rng, np.ascontiguousarray(probs.transpose(order)), input.dtype)
            values = np.transpose(drawn, np.argsort(order))
        else:
            values = SM.bernoulli_tensor(rng, probs, input.dtype)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        values = _in_order(input, lambda s, c: SM.bernoulli_scalar(rng, s, input.dtype, p))
    return _overwrite(input, "bernoulli_", _bernoulli_fill_op, values)


def _random_args(args, kwargs):
    """torch's overloads: ``random_()``, ``random_(to)``, ``random_(from, to)`` (``to`` may be
    None: up to the dtype's maximum); returns ``(from, to, full)``, ``full`` for ``random_()``."""
    kw = dict(kwargs)
    if "from_" in kw:
        kw["from"] = kw.pop("from_")
    unknown = set(kw) - {"from", "to"}
    if unknown or len(args) > 2:
        raise TypeError(f"random_() received an invalid combination of arguments - got {args}, {kwargs}")
    names = ("from", "to")
    vals = dict(zip(names, args))
    for k, v in kw.items():
        if k in vals:
            raise TypeError(f"random_() got multiple values for argument '{k}'")
        vals[k] = v
    for arg, v in vals.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise TypeError(f"random_(): argument '{arg}' must be int, not {type(v).__name__}")
    if not vals:
        return 0, None, True
    if "from" not in vals or (len(vals) == 1 and len(args) == 1):  # random_(to)
        to = vals.get("to", vals.get("from"))
        if to is None:
            raise TypeError("random_(): argument 'to' must be int, not NoneType")
        return 0, int(to), False
    return int(vals["from"]), vals.get("to"), False


def random_(input, *args, generator=None, **kwargs):
    """Fills ``input`` with integers from ``[from, to)``; ``random_(to)`` means ``[0, to)``,
    ``random_(from, None)`` ``[from, max]`` and ``random_()`` ``[0, max]`` for the dtype (``max``
    of a floating dtype: ``2**mantissa_digits``)."""
    _dense_self(input, "random_")
    dt = input.dtype
    if dt.is_complex:
        raise NotImplementedError(f"\"random_\" not implemented for '{dt.scalar_name}'")
    lo, hi, full = _random_args(args, kwargs)
    g = check_generator(generator, "random_")
    if full:  # torch's uniform_int over [0, max]
        values = _in_order(input, lambda s, c: SM.random_int(g, s, dt))
        return _overwrite(input, "random_", _random_op, values)
    if hi is None:
        if dt is D.int64 and lo == -(1 << 63):
            hi = 1 << 63
        else:
            hi = int_bounds(dt)[1] + 1
            if dt.is_floating_point:
                lo = _float_range(lo, hi + 1, dt)[0]
    else:
        hi = int(hi)
    _check_from_to(lo, hi, dt)
    values = _in_order(input, lambda s, c: _from_to(g, s, dt, lo, hi))
    return _overwrite(input, "random_", _random_op, values)


@method
def exponential_(input, lambd=1.0, *, generator=None):
    """Fills ``input`` with samples from the exponential distribution with rate ``lambd``."""
    _dense_self(input, "exponential_")
    dt = input.dtype
    _continuous(dt, "Exponential", dt.scalar_name)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    g = check_generator(generator, "exponential_")
    values = _in_order(input, lambda s, c: SM.exponential(g, s, dt, float(lambd)))
    return _overwrite(input, "exponential_", _exponential_op, values)


_geometric_op = _sampling_op("geometric")
_cauchy_op = _sampling_op("cauchy")
_log_normal_op = _sampling_op("log_normal")


@method
def geometric_(input, p, *, generator=None):
    """Fills ``input`` with samples of the geometric distribution (trials to the first success,
    success probability ``p``)."""
    _dense_self(input, "geometric_")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{input.dtype.scalar_name}'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    g = check_generator(generator, "geometric_")
    values = _in_order(input, lambda s, c: SM.geometric(g, s, input.dtype, float(p)))
    return _overwrite(input, "geometric_", _geometric_op, values)


@method
def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    """Fills ``input`` with samples of the Cauchy distribution."""
    _dense_self(input, "cauchy_")
    dt = input.dtype
    _continuous(dt, "Cauchy", _C_NAMES.get(dt.name, dt.name))
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    g = check_generator(generator, "cauchy_")
    values = _in_order(input, lambda s, c: SM.cauchy(g, s, dt, float(median), float(sigma)))
    return _overwrite(input, "cauchy_", _cauchy_op, values)


@method
def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    """Fills ``input`` with samples whose logarithm is N(``mean``, ``std``**2)."""
    _dense_self(input, "log_normal_")
    dt = input.dtype
    _float_only(dt, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    g = check_generator(generator, "log_normal_")
    values = _in_order(input, lambda s, c: SM.log_normal(g, s, dt, float(mean), float(std)))
    return _overwrite(input, "log_normal_", _log_normal_op, values)
