"""``torch.ops.quantized``'s 8-bit and 4-bit row-wise embedding bags (inference; no gradients).

``embedding_bag_byte_prepack(weight)``: each float32 row becomes its bytes ``round((x - min) *
255 / (max - min + 1e-8))`` followed by the row's scale ``(max - min) / 255`` and bias ``min``
as two float32 (``d + 8`` uint8 columns). ``embedding_bag_byte_rowwise_offsets`` sums the
dequantized rows of each bag (``scale * q + bias``, times the per-sample weight), one id after
another with a fused multiply-add, the order torch's CPU kernel uses, so the sums match torch's
bit for bit. ``embedding_bag_4bit_prepack`` packs two 4-bit values a byte (low nibble first)
with a float16 scale ``(max - min') / 15`` and bias ``min'`` (``min`` rounded to float16), as
torch's; ``embedding_bag_4bit_rowwise_offsets`` sums them the same way. dlrm_s_pytorch.py's
``--inference-only --quantize-emb-with-bit=8`` (``=4``) uses them.
"""

import numpy as np  # host-side computation of a CPU-only inference op (as torch's: fbgemm, CPU)

from .. import _dtype as D
from .._dispatch import wrap
from .._layout import strided
from .._tensor import Tensor

__all__ = ["embedding_bag_4bit_prepack", "embedding_bag_4bit_rowwise_offsets",
           "embedding_bag_byte_prepack", "embedding_bag_byte_rowwise_offsets"]


def _cpu_array(t, name, fname):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if t.layout is not strided or t.device.type != "cpu":
        raise NotImplementedError(
            f"{fname}: only strided CPU tensors (got {t.layout.name} on {t.device})")
    return np.asarray(t._data)


def embedding_bag_byte_prepack(weight):
    """``weight`` (float32, ``(n, d)`` or batched ``(..., n, d)``) as 8-bit rows with their
    float32 scale and bias appended: uint8 ``(..., n, d + 8)``."""
    w = _cpu_array(weight, "weight", "embedding_bag_byte_prepack")
    if w.ndim < 1 or w.dtype not in (np.float32, np.float16):
        raise RuntimeError("embedding_bag_byte_prepack: expected a float32 or float16 weight with "
                           f"at least one dimension (got {weight.dtype} of {w.ndim} dimensions)")
    w = w.astype(np.float32, copy=False)
    mn = w.min(axis=-1, keepdims=True) if w.shape[-1] else np.zeros(w.shape[:-1] + (1,), w.dtype)
    mx = w.max(axis=-1, keepdims=True) if w.shape[-1] else mn
    rng = mx - mn
    scale = rng / np.float32(255.0)
    inv = np.float32(255.0) / (rng + np.float32(1e-8))
    q = np.rint((w - mn) * inv).astype(np.uint8)
    sb = np.concatenate([scale, mn], axis=-1).astype(np.float32)
    out = np.concatenate([q, np.ascontiguousarray(sb).view(np.uint8)], axis=-1)
    return wrap(out, D.uint8, weight.device, strided)


def embedding_bag_4bit_prepack(weight, optimized_qparams=False, nbins=200, ratio=0.16):
    """``weight`` (float32 ``(n, d)``, ``d`` even) as 4-bit rows, two a byte (low nibble first),
    with a float16 scale and bias appended: uint8 ``(n, d / 2 + 4)``."""
    fname = "embedding_bag_4bit_prepack"
    w = _cpu_array(weight, "weight", fname)
    if w.ndim != 2 or w.dtype not in (np.float32, np.float16):
        raise RuntimeError(f"{fname}: expected a 2-D float32 or float16 weight")
    if w.shape[1] % 2:
        raise RuntimeError("qembeddingbag_4bit_prepack only works for the number of columns a "
                           "multiple of 2")
    if optimized_qparams:
        raise NotImplementedError(f"{fname}: optimized_qparams=True")
    w = w.astype(np.float32, copy=False)
    n, d = w.shape
    if d:
        mn = w.min(axis=1).astype(np.float16).astype(np.float32)  # the bias is stored in fp16
        rng = w.max(axis=1) - mn
    else:
        mn = rng = np.zeros(n, np.float32)
    scale = np.where(rng == 0, np.float32(1.0), rng / np.float32(15.0)).astype(np.float32)
    scale = scale.astype(np.float16).astype(np.float32)
    scale[scale == 0] = 1.0
    with np.errstate(divide="ignore"):
        inv = np.float32(1.0) / scale
    huge = np.isinf(inv)
    scale[huge] = 1.0
    inv[huge] = 1.0
    q = np.clip(np.rint((w - mn[:, None]) * inv[:, None]), 0, 15).astype(np.uint8)
    packed = q[:, 0::2] | (q[:, 1::2] << 4)
    sb = np.ascontiguousarray(np.stack([scale, mn], axis=1).astype(np.float16)).view(np.uint8)
    return wrap(np.concatenate([packed, sb], axis=1), D.uint8, weight.device, strided)


def embedding_bag_byte_rowwise_offsets(weight, indices, offsets=None, scale_grad_by_freq=False,
                                       mode=0, pruned_weights=False, per_sample_weights=None,
                                       compressed_indices_mapping=None,
                                       include_last_offset=False):
    """Bag sums of the prepacked rows ``weight[indices]`` (``mode=0``, sum), bags starting at
    ``offsets`` (or the rows of a 2-D ``indices``): float32 ``(bags, d)``."""
    fname = "embedding_bag_byte_rowwise_offsets"
    q = _packed(weight, 8, fname)
    d = q.shape[1] - 8
    sb = np.ascontiguousarray(q[:, d:]).view(np.float32)  # (n, 2): scale, bias
    return _bag_sums(fname, weight, lambda r: q[r, :d], d, sb[:, 0], sb[:, 1], indices, offsets,
                     mode, pruned_weights, per_sample_weights, compressed_indices_mapping,
                     include_last_offset)


def embedding_bag_4bit_rowwise_offsets(weight, indices, offsets=None, scale_grad_by_freq=False,
                                       mode=0, pruned_weights=False, per_sample_weights=None,
                                       compressed_indices_mapping=None,
                                       include_last_offset=False):
    """Bag sums of the 4-bit prepacked rows ``weight[indices]``: float32 ``(bags, d)``."""
    fname = "embedding_bag_4bit_rowwise_offsets"
    q = _packed(weight, 4, fname)
    half = q.shape[1] - 4
    sb = np.ascontiguousarray(q[:, half:]).view(np.float16).astype(np.float32)

    def rows(r):
        p = q[r, :half]
        out = np.empty((p.shape[0], 2 * half), np.uint8)
        out[:, 0::2] = p & 15
        out[:, 1::2] = p >> 4
        return out

    return _bag_sums(fname, weight, rows, 2 * half, sb[:, 0], sb[:, 1], indices, offsets, mode,
                     pruned_weights, per_sample_weights, compressed_indices_mapping,
                     include_last_offset)


def _packed(weight, extra, fname):
    q = _cpu_array(weight, "weight", fname)
    if q.dtype != np.uint8 or q.ndim != 2 or q.shape[1] < extra:
        raise RuntimeError(f"{fname}: weight must be a 2-D uint8 tensor from the matching "
                           "prepack")
    return q


def _bag_sums(fname, weight, rows, d, scale, bias, indices, offsets, mode, pruned_weights,
              per_sample_weights, compressed_indices_mapping, include_last_offset):
    """``out[bag] = fma(s, q, out[bag] + b)`` over the bag's ids in order (torch's CPU order)."""
    if mode != 0 or pruned_weights or compressed_indices_mapping is not None:
        raise NotImplementedError(f"{fname}: only mode=0 (sum) without pruned weights")
    ids = _cpu_array(indices, "indices", fname)
    if ids.dtype.kind not in "iu":
        raise RuntimeError(f"{fname}: indices must be int32 or int64 (got {indices.dtype})")
    if offsets is None:
        if ids.ndim != 2:
            raise RuntimeError(f"{fname}: indices must be 2-D when offsets is None")
        nb, cols = ids.shape
        starts = np.arange(nb, dtype=np.int64) * cols
        ids = ids.reshape(-1)
    else:
        if ids.ndim != 1:
            raise RuntimeError(f"{fname}: indices must be 1-D when offsets are given")
        starts = _cpu_array(offsets, "offsets", fname).astype(np.int64).reshape(-1)
    ends = np.append(starts[1:], ids.size) if starts.size else starts
    if include_last_offset and offsets is not None and starts.size:
        starts, ends = starts[:-1], ends[:-1]
    n = scale.shape[0]
    ids = ids.astype(np.int64, copy=False)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise RuntimeError(f"{fname}: index out of range for a weight of {n} rows")
    psw = None
    if per_sample_weights is not None:
        psw = _cpu_array(per_sample_weights, "per_sample_weights", fname).astype(np.float32)
    lengths = np.maximum(ends - starts, 0)
    out = np.zeros((starts.size, d), np.float32)
    for p in range(int(lengths.max()) if lengths.size else 0):  # the p-th id of every bag
        bags = np.nonzero(lengths > p)[0]
        pos = starts[bags] + p
        r = ids[pos]
        s, b = scale[r], bias[r]
        if psw is not None:
            s, b = s * psw[pos], b * psw[pos]
        # fma(s, q, out + b): a float32 product is exact in float64
        acc = (out[bags] + b[:, None]).astype(np.float64)
        acc += s[:, None].astype(np.float64) * rows(r)
        out[bags] = acc.astype(np.float32)
    return wrap(out, D.float32, weight.device, strided)
