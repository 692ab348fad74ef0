"""Safe checkpoints: ``sparsetorch.save`` / ``sparsetorch.load`` with torch's signatures.

Format (version 1): a ZIP archive of uncompressed ("stored") members

- ``sparsetorch/manifest.json``: ``{"format": "sparsetorch-checkpoint", "version": 1,
  "arrays": N, "root": NODE}``, ASCII JSON. A NODE is JSON ``null``/``true``/``false``, a string,
  an int in int64 range, a finite float, a JSON list (a Python ``list``), or an object whose
  ``"T"`` names its type: ``int`` (``"hex"``: a big int), ``float`` / ``complex`` (``"bits"`` /
  ``"re"``, ``"im"``: the IEEE-754 float64 bytes as little-endian hex, so NaN payloads and -0.0
  survive), ``tuple`` / ``set`` / ``frozenset`` / ``Size`` (``"items"``), ``dict`` / ``odict``
  (``"items"``: ``[key, value]`` pairs; an OrderedDict's attributes such as a state dict's
  ``_metadata`` in ``"attrs"``), ``dtype`` / ``layout`` / ``device`` (``"name"``), ``bytes`` /
  ``bytearray`` / ``ndarray`` / ``npscalar`` (``"data"``: an array reference), ``tensor`` /
  ``parameter`` / ``buffer`` (``"ref"``: its number in save order, ``"layout"``, ``"dtype"``,
  ``"shape"``, ``"device"``: the saved location, ``"requires_grad"``, then ``"data"`` (strided),
  ``"indices"``, ``"values"``, ``"coalesced"`` (sparse_coo) or ``"crow"``, ``"col"``,
  ``"values"`` (sparse_csr); a strided tensor that shares its buffer with other saved tensors
  has ``"view"``: ``{"offset", "strides"}`` in elements of that flat buffer; optional ``"attrs"``:
  instance attributes, str names that shadow nothing the class defines), and ``ref`` (``"ref"``:
  the same tensor object saved earlier, loaded as the same object).
- ``sparsetorch/data/<k>``: array ``k`` as raw little-endian C-order bytes, aligned to 64 bytes
  in the file. An array reference is ``{"array": k, "dtype": name, "shape": [...]}``; dtype names
  come from a fixed allow-list (bool, (u)int8..64, float16/32/64, complex64/128).

Loading never executes anything from the file (no pickle at all, so ``weights_only`` changes
nothing). Member sizes are checked against ``dtype x shape`` and against the real file before
any allocation, CRC-32s are verified, sparse tensors pass the constructors' invariant checks,
and every defect raises :class:`SerializationError` (a ``RuntimeError``) naming the place.
Saving to a path is atomic (temporary file, fsync, rename).

Differences from torch: files are not interchangeable with ``torch.save``'s (a PyTorch
checkpoint is refused with a message saying so); a callable ``map_location`` receives each
*tensor* (on the CPU) and its saved location, not a storage; arbitrary picklable objects are
refused at save time (``TypeError`` naming their place in ``obj``); containers nest at most 200
levels deep; a lone view is saved as its own elements (torch saves its whole storage), while
tensors that view one buffer share it again after loading, as in torch.
"""

from ._format import SerializationError
from ._load import load
from ._save import save

__all__ = ["SerializationError", "load", "save"]
