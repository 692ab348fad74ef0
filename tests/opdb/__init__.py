"""OP_DB: the one table of ops, assembled from one file per op family."""

from ._core import ErrorInput, OpInfo, Sample, make  # noqa: F401
from . import (
    creation, distance_fill, fft, indexing, linalg, linalg_module, misc, pointwise, queries, reduction,
    set_ops, shape, sparse_core, sparse_legacy, sparse_linalg, sparse_reduction, sparse_shape, special,
)

OP_DB = []
for _m in (pointwise, creation, shape, indexing, reduction, linalg, sparse_core, sparse_linalg,
           sparse_reduction, sparse_shape, set_ops, misc, special, linalg_module, sparse_legacy, fft,
           distance_fill, queries):
    OP_DB.extend(_m.OPS)

from . import nn as _nn_rows  # noqa: E402 - nn.functional rows (issue 15)

OP_DB.extend(_nn_rows.OPS)

from . import nn_fused as _nn_fused_rows  # noqa: E402 - fused nn ops (issue 14)

OP_DB.extend(_nn_fused_rows.OPS)

from . import nn_layers as _nn_layer_rows  # noqa: E402 - conv, pooling, pad, activations, embeddings

OP_DB.extend(_nn_layer_rows.OPS)
