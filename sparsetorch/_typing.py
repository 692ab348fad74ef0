"""Type aliases of the public signatures (torch's ``torch.types`` names), for annotations only.

Annotated modules import these under ``if TYPE_CHECKING:`` (with ``from __future__ import
annotations``), so nothing here runs in a normal import: the aliases cost nothing at run time and
this ground-floor module imports only other ground-floor modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["DeviceLike", "IntOrSize", "Number", "SizeLike"]

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._device import device

    # A Python scalar (torch.types.Number; bool is an int for the checker).
    Number = int | float | complex
    # What ``device=`` accepts: a device, "cpu" / "cuda:1", or a CUDA ordinal (torch.types.Device).
    DeviceLike = device | str | int
    # A shape: torch.Size, a tuple or a list of ints (torch.types._size).
    SizeLike = Sequence[int]
    # The ``*size`` of zeros/ones/rand...: ints, or one shape.
    IntOrSize = int | Sequence[int]
