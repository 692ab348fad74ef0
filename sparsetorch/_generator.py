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

import os

import numpy as np  # host-side RNG: random tensors are drawn on the host, then moved

from ._device import as_device

__all__ = ["Generator", "default_generator", "check_generator", "STATE_SIZE"]

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

    __slots__ = ("_device", "_seed", "_rng", "__weakref__")

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
        from ._dispatch import wrap
        from . import _dtype as D
        from ._device import CPU
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
        from ._dispatch import Tensor
        from . import _dtype as D

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a sparsetorch.ByteTensor, but got {type(new_state).__name__}")
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
            "state": {"state": int.from_bytes(raw[0:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
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
