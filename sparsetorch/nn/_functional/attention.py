"""Attention: scaled_dot_product_attention (dense, boolean and sparse masks) and
multi_head_attention_forward, composites over sparsetorch ops (their gradients come from the ops).

A sparse (COO / CSR) ``attn_mask`` names the allowed (query, key) pairs: only those pairs are
scored (a sampled dense-dense product over the mask's pattern, ``sparse_attention.sddmm``), the
softmax runs per query row over the stored entries only, and the values are summed back with a
CSR @ dense product (``sparse_attention.spmm``). Memory is O(nnz + (L + S) * head_dim) in forward
and backward, never L x S (L = S = 4096, 65 keys per query, E = 64: 19 MB peak for forward and
backward against 385 MB with the same mask dense). A boolean sparse mask allows its stored
``True`` entries; a float sparse mask adds its stored values to the scores of those entries
(implicit entries are not allowed: -inf, not 0; a stored value of exactly 0 counts only if it is
stored). A query row with no allowed key gives zeros, as torch's dense ``scaled_dot_product_attention`` does for a fully masked
row (torch 2.13 on CPU: zeros, not NaN); its gradient is zero too.
"""

import math
import warnings

from ... import _autocast as _ac
from ... import _ops
from ..._dtype import bool as _bool
from ..._dtype import float32, float64, int64
from ..._layout import sparse_coo, sparse_csr, strided
from ..._tensor import Tensor
from .activation import softmax
from .attention_core import _fits, attention_core
from .attention_heads import split_heads
from .conv import pad
from .fused_dropout import usable as usable_dropout
from .linear import dropout
from .sparse_attention import sddmm, spmm

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")
_FUSED_DTYPES = (float32, float64)


def _check(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position "
                        f"{('query', 'key', 'value').index(name) + 1}) must be Tensor, not "
                        f"{type(x).__name__}")


@_ac.policy(_ac.LOWER)  # on torch's CPU lower-precision list
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    r"""``softmax(Q K^T * scale + mask) V`` over the last two dims; ``query (..., L, E)``,
    ``key (..., S, E)``, ``value (..., S, Ev)``.

    ``attn_mask``: boolean (True = take part), float (added to the scores), or a sparse COO / CSR
    tensor of shape ``(L, S)`` or ``(..., L, S)``: then only its stored pairs are scored, memory
    O(nnz). A fully masked query row gives zeros (torch's CPU result)."""
    _check(query, "query")
    _check(key, "key")
    _check(value, "value")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least "
                           "2 dimensions")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, "
                           f"got {query.dtype}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same "
                           f"embedding size, got {query.shape[-1]} and {key.shape[-1]}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same "
                           f"sequence length, got {key.shape[-2]} and {value.shape[-2]}")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads "
                               "in query")
        if hk != hq:
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)
    L, S = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if attn_mask is not None and attn_mask.layout in (sparse_coo, sparse_csr):
        return _sparse_sdpa(query, key, value, attn_mask, dropout_p, sc)
    rows_ok = None
    if is_causal:
        attn_mask = _ops.ones((L, S), dtype=_bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is _bool:
            rows_ok = attn_mask.any(-1, keepdim=True)
            bias = _ops.zeros(attn_mask.shape, dtype=query.dtype, device=query.device)
            attn_mask = bias.masked_fill(attn_mask.logical_not(), _NEG_INF)
        elif attn_mask.dtype.is_floating_point:
            rows_ok = (attn_mask != _NEG_INF).any(-1, keepdim=True)
            if attn_mask.dtype is not query.dtype:
                raise RuntimeError(
                    f"Expected attn_mask dtype to be bool or float or to match query dtype, but "
                    f"got attn_mask.dtype: {attn_mask.dtype} and  query.dtype: {query.dtype} "
                    "instead.")
        else:
            raise RuntimeError(
                f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {attn_mask.dtype} and  query.dtype: {query.dtype} instead.")
        if bool(rows_ok.all()):
            rows_ok = None
        else:  # fully masked rows: a zero bias there, then zero weights (torch gives zeros)
            attn_mask = attn_mask.masked_fill(rows_ok.logical_not(), 0.0)
    if (dropout_p == 0.0 or usable_dropout(query, dropout_p)) and \
            query.dtype in _FUSED_DTYPES and \
            query.shape[:-2] == key.shape[:-2] == value.shape[:-2] and \
            (attn_mask is None or not attn_mask.requires_grad):
        keep = None if rows_ok is None else rows_ok.to(query.dtype)
        return attention_core(query, key, value, attn_mask, keep, sc, dropout_p=dropout_p)
    scores = _ops.matmul(query * sc, key.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    p = softmax(scores, -1)
    if rows_ok is not None:
        p = p.masked_fill(rows_ok.logical_not(), 0.0)
    if dropout_p > 0.0:
        p = dropout(p, dropout_p, True)
    return _ops.matmul(p, value)


# ---- the sparse-mask path: only the stored pairs are scored ----

def _mask_pairs(mask, batch, L, S, device):
    """(rows, cols, bias-or-None) of the allowed pairs, flattened over the batch dims:
    rows index ``query.reshape(-1, E)``, cols index ``key.reshape(-1, E)``."""
    if tuple(mask.shape[-2:]) != (L, S):
        raise RuntimeError(f"scaled_dot_product_attention: sparse attn_mask of shape "
                           f"{list(mask.shape)} does not match the attention shape ({L}, {S})")
    nb = math.prod(batch)
    mb = tuple(mask.shape[:-2])
    if mb and mb != tuple(batch[len(batch) - len(mb):]):
        raise NotImplementedError(
            f"scaled_dot_product_attention: a sparse attn_mask's batch dims {list(mb)} must equal "
            f"the trailing batch dims of the query {list(batch)} (no broadcasting of sized-1 dims "
            "for sparse masks); expand the mask or pass a (L, S) mask")
    if mask.layout is sparse_csr:
        if mask.ndim != 2:
            mask = mask.to_sparse_coo()
        else:
            mask = mask.to_sparse_coo()
    if mask.dense_dim() != 0:
        raise NotImplementedError("scaled_dot_product_attention: hybrid sparse masks are not "
                                  "supported")
    mask = mask.coalesce()
    idx = mask.indices()
    vals = mask.values().detach()
    if mask.dtype is _bool:
        keep = vals
        bias = None
    elif mask.dtype.is_floating_point:
        keep = None
        bias = vals
    else:
        raise RuntimeError(f"scaled_dot_product_attention: a sparse attn_mask must be bool or "
                           f"floating point, got {mask.dtype}")
    mflat = _ops.zeros((idx.shape[1],), dtype=int64, device=device)
    for d in range(len(mb)):
        mflat = mflat * mb[d] + idx[d]
    i, j = idx[len(mb)], idx[len(mb) + 1]
    lead = nb // max(math.prod(mb), 1)  # leading batch dims the mask broadcasts over
    mcount = math.prod(mb) if mb else 1
    if keep is not None:
        sel = keep.nonzero().view(-1)
        mflat, i, j = mflat[sel], i[sel], j[sel]
    if lead > 1:
        off = _ops.arange(lead, device=device).view(-1, 1) * mcount
        bflat = (off + mflat.view(1, -1)).reshape(-1)
        i = i.repeat(lead)
        j = j.repeat(lead)
        if bias is not None:
            bias = bias.repeat(lead)
    else:
        bflat = mflat
    return bflat * L + i, bflat * S + j, bias


def _sparse_sdpa(query, key, value, mask, dropout_p, sc):
    batch = tuple(query.shape[:-2])
    L, E = query.shape[-2], query.shape[-1]
    S = key.shape[-2]
    if tuple(key.shape[:-2]) != batch or tuple(value.shape[:-2]) != batch:
        key = key.expand(batch + tuple(key.shape[-2:]))
        value = value.expand(batch + tuple(value.shape[-2:]))
    nb = math.prod(batch)
    rows, cols, bias = _mask_pairs(mask, batch, L, S, query.device)
    q2 = (query * sc).reshape(nb * L, E)
    k2 = key.reshape(nb * S, E)
    v2 = value.reshape(nb * S, value.shape[-1])
    s = sddmm(q2, k2, rows, cols)  # the scores of the stored pairs only
    if bias is not None:
        s = s + bias.to(s.dtype)
    m = _ops.full((nb * L,), _NEG_INF, dtype=s.dtype, device=s.device)
    m = m.scatter_reduce(0, rows, s.detach(), "amax")
    m = m.masked_fill(m == _NEG_INF, 0.0)  # empty rows (and all -inf rows) stay finite
    e = (s - m.index_select(0, rows)).exp()
    z = _ops.zeros((nb * L,), dtype=s.dtype, device=s.device).index_add(0, rows, e)
    z = z.masked_fill(z == 0, 1.0)  # a row with no allowed key: weights 0, output 0
    p = e / z.index_select(0, rows)
    if dropout_p > 0.0:
        p = dropout(p, dropout_p, True)
    return spmm(p, v2, rows, cols, nb * L).view(batch + (L, v2.shape[1]))  # sparse @ dense


# ---- multi-head attention ----

def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"{mask_name} must be a Tensor, got {type(mask).__name__}")
    if mask.layout is not strided:  # sparse masks: the stored pairs, used by sdpa as they are
        return mask
    if mask.dtype is not _bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.")
    if mask.dtype is _bool:
        return _ops.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill(
            mask, _NEG_INF)
    return mask


def _none_or_dtype(x):
    return None if x is None else x.dtype


def _linear_rows(x, w, b):
    """``linear`` on the rows of ``x`` flattened to 2-D (one GEMM, a 2-D weight gradient: no
    batched product and no batch reduction in backward), reshaped back."""
    lead = tuple(x.shape[:-1])
    x2 = x.reshape(-1, x.shape[-1])
    y = _ops.mm(x2, w.t()) if b is None else _ops.addmm(b, x2, w.t())
    return y.view(lead + (w.shape[0],))


def _in_projection_packed(q, k, v, w, b):
    e = q.shape[-1]
    if k is v:
        if q is k:  # self-attention: one product, three chunks
            return tuple(_linear_rows(q, w, b).chunk(3, -1))
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        q_proj = _linear_rows(q, w_q, b_q)
        k_proj, v_proj = _linear_rows(k, w_kv, b_kv).chunk(2, -1)
        return q_proj, k_proj, v_proj
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear_rows(q, w_q, b_q), _linear_rows(k, w_k, b_k), _linear_rows(v, w_v, b_v)


def _heads(x, bsz, num_heads, head_dim, bf):
    """(T, N, E) (``bf``: (N, T, E)) -> contiguous (N * H, T, head_dim): one copy, so the batched
    products that follow run on contiguous matrices."""
    if bf:
        t = x.shape[1]
        return x.reshape(bsz, t, num_heads, head_dim).permute(0, 2, 1, 3).reshape(
            bsz * num_heads, t, head_dim)
    t = x.shape[0]
    return x.reshape(t, bsz, num_heads, head_dim).permute(1, 2, 0, 3).reshape(
        bsz * num_heads, t, head_dim)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    r"""Multi-head attention over ``(L, N, E)`` query and ``(S, N, E)`` key/value (or unbatched
    ``(L, E)``); returns ``(attn_output, attn_weights or None)`` as torch."""
    return _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                        in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                        out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                        use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                        static_k, static_v, average_attn_weights, is_causal, False)


def _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
                 key_padding_mask, need_weights, attn_mask, use_separate_proj_weight,
                 q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v,
                 average_attn_weights, is_causal, bf):
    """multi_head_attention_forward; ``bf``: batched inputs and output are ``(N, T, E)``
    (MultiheadAttention(batch_first=True): no transposed copies in or out)."""
    is_batched = _mha_is_batched(query, key, value, key_padding_mask, attn_mask)
    if not is_batched:
        bf = False
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    if bf:
        bsz, tgt_len, embed_dim = query.shape
        src_len = key.shape[1]
    else:
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to create "
                           "this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint alone: sdpa builds the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    in_heads = False  # q, k, v already (N * H, T, head_dim)
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):  # (seq, batch) or (batch, seq)
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = _linear_rows(query, q_proj_weight, b_q)
        k = _linear_rows(key, k_proj_weight, b_k)
        v = _linear_rows(value, v_proj_weight, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                                 f"{tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key is value and bias_k is None and static_k is None and static_v is None:
            # self-attention: one GEMM, then one copy lays q, k and v out per head at once
            proj = _linear_rows(query, in_proj_weight, in_proj_bias)
            if proj.layout is strided and proj.dtype in _FUSED_DTYPES:  # one node, one pass back
                q, k, v = split_heads(proj, bsz, tgt_len, num_heads, head_dim, bf)
            else:
                if bf:
                    qkv = proj.view(bsz, tgt_len, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)
                else:
                    qkv = proj.view(tgt_len, bsz, 3, num_heads, head_dim).permute(2, 1, 3, 0, 4)
                qkv = qkv.reshape(3, bsz * num_heads, tgt_len, head_dim)
                q, k, v = qkv[0], qkv[1], qkv[2]
            in_heads = True
        else:
            q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    sparse_mask = attn_mask is not None and attn_mask.layout is not strided
    if sparse_mask:
        if attn_mask.ndim != 2 or need_weights or key_padding_mask is not None or \
                bias_k is not None or add_zero_attn:
            raise NotImplementedError(
                "multi_head_attention_forward: a sparse attn_mask needs a 2-D (L, S) mask, "
                "need_weights=False, no key_padding_mask, bias_k/bias_v or add_zero_attn; "
                "pass attn_mask.to_dense() otherwise")
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                               f"but should be {(tgt_len, src_len)}.")
    elif attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        if bf:
            k = _ops.cat([k, bias_k.repeat(bsz, 1, 1)], 1)
            v = _ops.cat([v, bias_v.repeat(bsz, 1, 1)], 1)
        else:
            k = _ops.cat([k, bias_k.repeat(1, bsz, 1)])
            v = _ops.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    if not in_heads:
        q = _heads(q, bsz, num_heads, head_dim, bf)
        k = _heads(k, bsz, num_heads, head_dim, bf) if static_k is None else _static(
            static_k, "static_k", bsz * num_heads, head_dim)
        v = _heads(v, bsz, num_heads, head_dim, bf) if static_v is None else _static(
            static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _ops.cat([k, _ops.zeros(zshape, dtype=k.dtype, device=k.device)], 1)
        v = _ops.cat([v, _ops.zeros(zshape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    def with_weights(out, w, averaged=False):  # heads back to (L, N, E) / (N, L, E), projected
        if bf:
            out = out.view(bsz, num_heads, tgt_len, head_dim).permute(0, 2, 1, 3).reshape(
                bsz, tgt_len, embed_dim)
        else:
            out = out.transpose(0, 1).reshape(tgt_len, bsz, embed_dim)
        out = _linear_rows(out, out_proj_weight, out_proj_bias)
        if not averaged:
            w = w.view(bsz, num_heads, tgt_len, src_len)
            if average_attn_weights:
                w = w.mean(dim=1)
        if not is_batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w

    if need_weights and dropout_p == 0.0 and q.dtype in _FUSED_DTYPES and \
            (attn_mask is None or (not attn_mask.requires_grad and _fits(attn_mask.shape, (
                q.shape[0], q.shape[1], k.shape[1])))):
        out, w = attention_core(q, k, v, attn_mask, None, math.sqrt(1.0 / head_dim), True, True,
                                heads=num_heads if average_attn_weights else 0)
        if not average_attn_weights:
            return with_weights(out, w)
        return with_weights(out, w, True)
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            w = _ops.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            w = _ops.bmm(q_scaled, k.transpose(-2, -1))
        w = softmax(w, -1)
        if dropout_p > 0.0:
            w = dropout(w, p=dropout_p)
        out = _ops.bmm(w, v)
        return with_weights(out, w)
    if attn_mask is not None and not sparse_mask:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    if bf:
        out = out.permute(0, 2, 1, 3).reshape(bsz, tgt_len, embed_dim)
    else:
        out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = _linear_rows(out, out_proj_weight, out_proj_bias)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _static(t, name, bh, head_dim):
    if tuple(t.shape[::2]) != (bh, head_dim):
        raise AssertionError(f"expecting {name} of size ({bh}, *, {head_dim}), but got "
                             f"{tuple(t.shape)}")
    return t


def _mha_is_batched(query, key, value, key_padding_mask, attn_mask):
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                 "instead")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")
