"""layout objects: ``strided`` (dense), ``sparse_coo``, ``sparse_csr``."""

from ._dtype import NAMESPACE

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr"]


class layout:
    """The memory layout of a Tensor: ``sparsetorch.strided`` (dense), ``sparse_coo`` or
    ``sparse_csr`` (``x.layout``; the ``layout=`` argument of factories and conversions)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return NAMESPACE[0] + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")

_ALL = {x.name: x for x in (strided, sparse_coo, sparse_csr)}


def _by_name(name):
    return _ALL[name]
