"""Checkpoints interchangeable with PyTorch: ``sparsetorch.save`` / ``sparsetorch.load`` with
torch's signatures and torch's file format.

``save`` writes PyTorch's ZIP checkpoint (``archive/data.pkl`` + ``archive/data/<key>`` storages,
``byteorder``, ``version``; members stored uncompressed and 64-byte aligned), so ``torch.load``
reads a ``model.pt`` written here, with ``weights_only=True`` too, bit for bit for every layout
and dtype both libraries have. ``_use_new_zipfile_serialization=False`` writes torch's legacy
format. Saving to a path is atomic (temporary file, fsync, rename).

``load`` reads PyTorch's ZIP and legacy formats and sparsetorch's older JSON-manifest format
(version 1, described in :mod:`._format`). With ``weights_only=True`` (the default) the pickle in
a torch file is interpreted by our own restricted unpickler (:mod:`._unpickler`): an allowlist
no larger than torch's ``weights_only`` one, implemented here (:mod:`._rebuild`), so nothing
named by the file is imported or called; anything else raises :class:`SerializationError`
naming the global and how to allow it (:func:`add_safe_globals`, :class:`safe_globals`,
:func:`get_safe_globals`, :func:`clear_safe_globals`, :func:`get_unsafe_globals_in_checkpoint`,
as in torch). ``weights_only=False`` runs
the full :mod:`pickle`, which executes code named by the file: pass it only for trusted files
(whole modules saved with ``save(model)`` need it; in a file written by torch, a class named
``torch.X`` becomes ``sparsetorch.X`` where we have it, so a pickled ``torch.nn`` model loads as
ours). Declared storage sizes are checked against
the file before anything is allocated; member names that could escape a folder are refused.

Differences from torch: a callable ``map_location`` receives each *tensor* (on the CPU) and its
saved location, not a storage; tensor subclasses other than ``nn.Parameter`` and sparse layouts
other than COO/CSR are refused; ``nn.Buffer`` objects are saved as plain tensors; a view whose
strides NumPy can express but torch cannot (negative) is saved as a copy.
"""

from ._format import SerializationError
from ._load import get_unsafe_globals_in_checkpoint, load
from ._safe_globals import (
                            WeightsOnlyError,
                            add_safe_globals,
                            clear_safe_globals,
                            get_safe_globals,
                            safe_globals,
)
from ._save import save

__all__ = ["SerializationError", "WeightsOnlyError", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load", "safe_globals", "save"]
