"""device objects: ``device("cpu")``, ``device("cuda")``, ``device("cuda:1")``, ``device("cuda", 1)``."""

__all__ = ["device"]

_TYPES = ("cpu", "cuda")


class device:
    """Where a tensor lives. Creating a cuda device never fails; using one without a GPU does."""

    __slots__ = ("type", "index")
    type: str  # "cpu" or "cuda" (annotations for the type checker; the slots hold the values)
    index: int | None

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string like 'cpu' or 'cuda:0', got {type!r}")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"device(): type {type!r} already has an index; don't pass index={index}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}' (the index must be an integer >= 0)")
            index = int(idx)
        if type not in _TYPES:
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type!r}"
            )
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index!r}")
        if type == "cpu" and index is not None and index != 0:
            raise RuntimeError("CPU device index must be 0 or None")
        if type == "cpu":
            return CPU if "CPU" in globals() else _make("cpu", None)
        return _make(type, index)

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (str(self),))


_INTERNED = {}  # (type, index) -> device: one object per device, so "same device" is `is`


def _make(type, index):
    d = _INTERNED.get((type, index))
    if d is None:
        d = _INTERNED[(type, index)] = object.__new__(device)
        d.type = type
        d.index = index
    return d


CPU = _make("cpu", None)


def as_device(d):
    """Normalise ``None``/str/int/device to a device (None means cpu; 'cuda' gets the current
    CUDA device's index, as the device of a new tensor does in torch)."""
    if d is None:
        return CPU
    if d.__class__ is not device:
        d = device(d)
    if d.index is None and d is not CPU:  # 'cuda' means the current CUDA device, as torch
        from ._backend import current_index

        return _make("cuda", current_index())
    return d
