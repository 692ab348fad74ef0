"""OP_DB: the one table of ops, assembled from one file per op family."""

from ._core import ErrorInput, OpInfo, Sample, make  # noqa: F401
from . import pointwise

OP_DB = []
for _m in (pointwise,):
    OP_DB.extend(_m.OPS)

_optional = ["shape", "indexing", "reduction", "linalg", "creation", "sparse_linalg", "sparse_reduction",
             "sparse_shape"]
for _name in _optional:
    try:
        _mod = __import__(f"{__name__}.{_name}", fromlist=["OPS"])
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
        continue
    OP_DB.extend(_mod.OPS)
