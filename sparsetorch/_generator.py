"""Random number generators: ``Generator`` (torch.Generator) and the default generator.

A ``Generator`` wraps a NumPy ``Generator`` on the PCG64 bit generator. Random tensors are drawn
on the host and then moved to the tensor's device, so one seed gives the same numbers on every
device.

Streams are NOT bit-compatible with torch: ``manual_seed(0)`` makes sparsetorch reproducible
with itself, but ``sparsetorch.rand(3)`` and ``torch.rand(3)`` give different numbers.

State format (``get_state()`` / ``set_state()``): a 1-D ``uint8`` tensor of 48 bytes, all
little-endian::

    [0:16)   PCG64 state (128-bit unsigned)
    [16:32)  PCG64 increment (128-bit unsigned)
    [32:40)  initial seed (64-bit unsigned)
    [40]     has_uint32 flag (0 or 1), bytes [41:44) zero
    [44:48)  buffered uint32 (meaningful only when the flag is 1)
"""

import contextlib
import math
import os

import numpy as np  # host-side RNG: random tensors are drawn on the host, then moved

from . import _dtype as D
from ._device import as_device

__all__ = [
    "STATE_SIZE",
    "Generator",
    "check_generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

STATE_SIZE = 48
_DEFAULT_SEED = 67280421310721  # the seed of a fresh torch.Generator
_U64 = (1 << 64) - 1


def _pcg(seed):
    return np.random.Generator(np.random.PCG64(seed))


class Generator:
    """A pseudo-random number generator (torch.Generator).

    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    """

    __slots__ = ("__weakref__", "_device", "_rng", "_seed")

    def __init__(self, device="cpu"):
        self._device = as_device(device)
        self._seed = _DEFAULT_SEED
        self._rng = _pcg(_DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        """Seed the generator (any int in ``[-2**63, 2**64)``); returns the generator itself."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            if hasattr(seed, "__index__") and not isinstance(seed, bool):
                seed = seed.__index__()
            else:
                raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -(1 << 63) <= seed <= _U64:
            raise ValueError(f"Overflow when unpacking long long: seed {seed} is out of range")
        self._seed = seed & _U64
        self._rng = _pcg(self._seed)
        return self

    def seed(self):
        """Seed from a non-deterministic source; returns the 64-bit seed used."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator state as a ``uint8`` tensor (format in the module docstring)."""
        from . import _dtype as D
        from ._device import CPU
        from ._dispatch import wrap
        from ._layout import strided

        st = self._rng.bit_generator.state
        buf = bytearray(STATE_SIZE)
        buf[0:16] = st["state"]["state"].to_bytes(16, "little")
        buf[16:32] = st["state"]["inc"].to_bytes(16, "little")
        buf[32:40] = self._seed.to_bytes(8, "little")
        buf[40] = 1 if st["has_uint32"] else 0
        buf[44:48] = int(st["uinteger"]).to_bytes(4, "little")
        return wrap(np.frombuffer(bytes(buf), np.uint8).copy(), D.uint8, CPU, strided)

    def set_state(self, new_state):
        """Restore a state returned by :meth:`get_state`; returns the generator itself."""
        from . import _dtype as D
        from ._dispatch import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(
                f"expected a sparsetorch.ByteTensor, but got {type(new_state).__name__}"
            )
        if new_state.dtype is not D.uint8 or new_state.layout.name != "strided":
            raise TypeError("RNG state must be a sparsetorch.ByteTensor (dtype uint8)")
        raw = new_state.detach().cpu().numpy().reshape(-1).tobytes()
        if len(raw) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a Generator state of size {STATE_SIZE} but found the input RNG state "
                f"size to be {len(raw)}"
            )
        bg = np.random.PCG64()
        bg.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": int.from_bytes(raw[0:16], "little"),
                "inc": int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": int(raw[40] != 0),
            "uinteger": int.from_bytes(raw[44:48], "little"),
        }
        self._rng = np.random.Generator(bg)
        self._seed = int.from_bytes(raw[32:40], "little")
        return self

    def __getstate__(self):
        return {"device": str(self._device), "state": self.get_state().numpy().tobytes()}

    def __setstate__(self, d):
        from ._ops.creation import from_numpy

        self._device = as_device(d["device"])
        self.set_state(from_numpy(np.frombuffer(d["state"], np.uint8).copy()))

    def __repr__(self):
        return f"<sparsetorch.Generator object at {id(self):#x}>"


def check_generator(generator, fname):
    """The NumPy generator to draw from: ``generator``'s, or the default generator's."""
    if generator is None:
        return default_generator._rng
    if generator.__class__ is not Generator and not isinstance(generator, Generator):
        raise TypeError(
            f"{fname}(): argument 'generator' must be sparsetorch.Generator, not "
            f"{type(generator).__name__}"
        )
    return generator._rng


# The process-wide default generator. As in torch 2.13, it starts from a non-deterministic seed;
# call ``manual_seed`` for reproducible results.
default_generator = Generator()
default_generator.seed()


# ---- module-level seeding (torch.manual_seed & co. act on the default generator) ----


def manual_seed(seed):
    """Sets the seed of the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seeds the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a ``uint8`` tensor (see ``sparsetorch._generator``)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state from :func:`get_rng_state`'s result."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Forks the RNG: the default generator's state is restored on exit (torch.random.fork_rng)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


# ---- host draws (shared by the random ops) ----


def uniform01(rng, shape, dt):
    """U[0, 1) in dtype ``dt`` (complex: independent real and imaginary parts)."""
    if dt is D.float32:
        return rng.random(shape, dtype=np.float32)
    if dt is D.float64:
        return rng.random(shape)
    if dt is D.float16:  # 11-bit grid: exact in float16 and never rounds up to 1.0
        return rng.integers(0, 2048, shape, dtype=np.int16).astype(np.float16) * np.float16(2**-11)
    if dt is D.bfloat16:  # 8-bit grid: exact in bfloat16 and never rounds up to 1.0
        return (rng.integers(0, 256, shape, dtype=np.int16) * np.float32(2**-8)).astype(dt.np)
    real = dt.to_real()
    return (uniform01(rng, shape, real) + 1j * uniform01(rng, shape, real)).astype(dt.np)


def normal01(rng, shape, dt):
    """N(0, 1) in dtype ``dt`` (complex: each part N(0, 1/2), as torch)."""
    if dt is D.float32:
        return rng.standard_normal(shape, dtype=np.float32)
    if dt is D.float64:
        return rng.standard_normal(shape)
    if dt is D.float16 or dt is D.bfloat16:
        return rng.standard_normal(shape, dtype=np.float32).astype(dt.np)
    real = dt.to_real()
    z = normal01(rng, shape, real) + 1j * normal01(rng, shape, real)
    return (z * math.sqrt(0.5)).astype(dt.np)


def int_bounds(dt):
    if dt is D.bool:
        return 0, 1
    if dt.is_floating_point:
        return -(1 << (np.finfo(dt.np).nmant + 1)), 1 << (np.finfo(dt.np).nmant + 1)
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


def integers(rng, lo, hi, shape, dt):
    """Uniform integers in [lo, hi) as dtype ``dt``."""
    return rng.integers(lo, hi, shape, dtype=np.int64).astype(dt.np)
