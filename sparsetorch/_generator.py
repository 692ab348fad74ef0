"""Random number generators: ``Generator`` (torch.Generator) and the default generator.

A ``Generator`` is torch's CPU generator, bit for bit: a Mersenne Twister (mt19937) seeded with the
low 32 bits of the seed (``init_genrand``), drawn 32 bits at a time (``random()``) or 64 bits as two
draws, the first one high (``random64()``), plus the cached second Box-Muller sample of the scalar
normal path. NumPy's ``MT19937`` bit generator produces the raw stream; the transforms that turn it
into numbers are torch's (``sparsetorch._ops._sampling``), so ``manual_seed(s)`` gives the numbers
torch gives. Random tensors are drawn on the host and then moved to the tensor's device, so one
seed gives the same numbers on every device.

State format (``get_state()`` / ``set_state()``): torch's ``CPUGeneratorImplState``, a 1-D
``uint8`` tensor of 5056 bytes, little-endian; states move between torch and sparsetorch::

    [0:8)        initial seed (uint64)
    [8:12)       left (int32): draws left before the next twist, plus one
    [12:16)      seeded flag (int32, 1)
    [16:24)      next (uint64): index of the next state word
    [24:5016)    the 624 state words, each stored as a uint64
    [5016:5024)  normal_x (double, unused, 0)
    [5024:5032)  normal_y (double): the cached double normal sample
    [5032:5040)  normal_rho (double, unused, 0)
    [5040:5044)  normal_is_valid (int32)
    [5048:5052)  next float normal sample (float32), [5052] its valid flag
"""

import contextlib
import os

import numpy as np  # host-side RNG: random tensors are drawn on the host, then moved

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

STATE_SIZE = 5056
_N = 624  # mt19937 state words
_DEFAULT_SEED = 67280421310721  # the seed of a fresh torch.Generator
_U64 = (1 << 64) - 1
_NORMAL_Y, _NORMAL_VALID, _FLOAT_NORMAL, _FLOAT_VALID = 5024, 5040, 5048, 5052


def _engine(seed):
    """mt19937 seeded as torch seeds it: ``init_genrand(seed & 0xffffffff)``, a twist due."""
    bg = np.random.MT19937(0)
    bg._legacy_seeding(seed & 0xFFFFFFFF)  # init_genrand; position 624: the next draw twists
    return bg


class Generator:
    """A pseudo-random number generator (torch.Generator), with torch's CPU streams.

    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    """

    __slots__ = ("__weakref__", "_bg", "_device", "_fresh", "_next_double", "_next_float", "_seed")

    def __init__(self, device="cpu"):
        self._device = as_device(device)
        self._reseed(_DEFAULT_SEED)

    def _reseed(self, seed):
        self._seed = seed
        self._bg = _engine(seed)
        self._fresh = True  # torch's just-seeded engine reports left=1, next=0
        self._next_double = None  # cached second Box-Muller sample (scalar normal path)
        self._next_float = None

    @property
    def device(self):
        return self._device

    # ---- the raw stream (torch's random() and random64()) ----

    def random32(self, n):
        """``n`` draws of ``random()``: uint32 words of the mt19937 stream (as uint64)."""
        self._fresh = False
        return self._bg.random_raw(n)

    def random64(self, n):
        """``n`` draws of ``random64()``: two words each, the first one the high half."""
        self._fresh = False
        r = self._bg.random_raw(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    def _engine_words(self):
        """The engine's live state as 625 uint32 words (NumPy's ``mt19937_state``: the 624 key
        words, then the index of the next one), for a kernel that draws the raw stream in place
        (``nn/_kernels/dropout.py``); valid until the generator is next seeded or set. Marks
        the generator as drawn from."""
        import ctypes

        self._fresh = False
        buf = (ctypes.c_uint32 * 625).from_address(self._bg.ctypes.state_address)
        return np.ctypeslib.as_array(buf)

    # ---- seeding ----

    def manual_seed(self, seed):
        """Seed the generator (any int in ``[-2**63, 2**64)``); returns the generator itself."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            if hasattr(seed, "__index__") and not isinstance(seed, bool):
                seed = seed.__index__()
            else:
                raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -(1 << 63) <= seed <= _U64:
            raise ValueError(f"Overflow when unpacking long long: seed {seed} is out of range")
        self._reseed(seed & _U64)
        return self

    def seed(self):
        """Seed from a non-deterministic source; returns the 64-bit seed used."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    # ---- state: torch's byte layout (module docstring) ----

    def _state_bytes(self):
        st = self._bg.state["state"]
        pos = int(st["pos"])
        left, nxt = (1, 0) if self._fresh else (_N + 1 - pos, pos)
        buf = bytearray(STATE_SIZE)
        buf[0:8] = self._seed.to_bytes(8, "little")
        buf[8:12] = left.to_bytes(4, "little")
        buf[12:16] = (1).to_bytes(4, "little")
        buf[16:24] = nxt.to_bytes(8, "little")
        buf[24:5016] = np.asarray(st["key"], np.uint32).astype("<u8").tobytes()
        if self._next_double is not None:
            buf[_NORMAL_Y:_NORMAL_Y + 8] = np.float64(self._next_double).astype("<f8").tobytes()
            buf[_NORMAL_VALID] = 1
        if self._next_float is not None:
            buf[_FLOAT_NORMAL:_FLOAT_NORMAL + 4] = np.float32(self._next_float).astype("<f4").tobytes()
            buf[_FLOAT_VALID] = 1
        return bytes(buf)

    def get_state(self):
        """The generator state as a ``uint8`` tensor of 5056 bytes, torch's layout."""
        from . import _dtype as D
        from ._device import CPU
        from ._tensor import wrap
        from ._layout import strided

        raw = np.frombuffer(self._state_bytes(), np.uint8).copy()
        return wrap(raw, D.uint8, CPU, strided)

    def _load_bytes(self, raw):
        if len(raw) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                f"state size to be {len(raw)}"
            )
        seed = int.from_bytes(raw[0:8], "little")
        left = int.from_bytes(raw[8:12], "little", signed=True)
        seeded = int.from_bytes(raw[12:16], "little", signed=True)
        nxt = int.from_bytes(raw[16:24], "little") & 0xFFFFFFFF
        if seeded != 1 or not 0 < left <= _N or nxt > _N:
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw[24:5016], "<u8").astype(np.uint32)
        bg = np.random.MT19937(0)
        # torch twists when ``left`` runs out: left == 1 means the next draw twists first
        bg.state = {"bit_generator": "MT19937",
                    "state": {"key": key, "pos": _N if left == 1 else nxt}}
        self._bg, self._seed = bg, seed
        self._fresh = left == 1 and nxt == 0
        valid = int.from_bytes(raw[_NORMAL_VALID:_NORMAL_VALID + 4], "little") != 0
        self._next_double = (
            float(np.frombuffer(raw[_NORMAL_Y:_NORMAL_Y + 8], "<f8")[0]) if valid else None
        )
        self._next_float = (
            float(np.frombuffer(raw[_FLOAT_NORMAL:_FLOAT_NORMAL + 4], "<f4")[0])
            if raw[_FLOAT_VALID] else None
        )

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state` (ours or torch's); returns the generator."""
        from . import _dtype as D
        from ._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(
                f"expected a sparsetorch.ByteTensor, but got {type(new_state).__name__}"
            )
        if new_state.dtype is not D.uint8 or new_state.layout.name != "strided":
            raise TypeError("RNG state must be a sparsetorch.ByteTensor (dtype uint8)")
        self._load_bytes(new_state.detach().cpu().numpy().reshape(-1).tobytes())
        return self

    def clone_state(self):
        """A new generator in this one's exact state (engine and cached normal sample)."""
        g = Generator(self._device)
        g._load_bytes(self._state_bytes())
        g._fresh = self._fresh
        return g

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __getstate__(self):
        return {"device": str(self._device), "state": self._state_bytes()}

    def __setstate__(self, d):
        self._device = as_device(d["device"])
        self._load_bytes(d["state"])

    def __repr__(self):
        return f"<sparsetorch.Generator object at {id(self):#x}>"


def check_generator(generator, fname):
    """The generator to draw from: ``generator``, or the default generator."""
    if generator is None:
        return default_generator
    if generator.__class__ is not Generator and not isinstance(generator, Generator):
        raise TypeError(
            f"{fname}(): argument 'generator' must be sparsetorch.Generator, not "
            f"{type(generator).__name__}"
        )
    return generator


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
