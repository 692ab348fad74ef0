"""MultiheadAttention (torch.nn.MultiheadAttention): parameters, init and state_dict keys as
torch's, so torch checkpoints load; the math is nn.functional.multi_head_attention_forward."""

from ... import _ops
from .. import functional as F
from .. import init
from .._functional.attention import _mha_forward
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """torch's class of ``MultiheadAttention.out_proj`` (a Linear)."""


class MultiheadAttention(Module):
    r"""Allows the model to jointly attend to information from different representation subspaces.

    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
    ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``. Inputs ``(L, N, E)`` (``(N, L, E)`` when
    ``batch_first``) or unbatched ``(L, E)``.

    Beyond torch, ``attn_mask`` may be a sparse COO / CSR ``(L, S)`` tensor when
    ``need_weights=False`` (no key_padding_mask, bias_kv or zero_attn): its stored entries are the
    *allowed* pairs (scaled_dot_product_attention's convention, the opposite of a dense bool
    mask, whose True entries are masked out); only those pairs are scored."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_ops.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_ops.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_ops.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_ops.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_ops.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_ops.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_ops.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:  # old pickles
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.ndim == 3
        key_padding_mask = F._canonical_mask(
            key_padding_mask, "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
        if attn_mask is not None and attn_mask.layout.name == "strided":
            attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        bf = self.batch_first and is_batched  # (N, T, E) all the way: no transposed copies
        same = self._qkv_same_embed_dim
        out, weights = _mha_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
            need_weights, attn_mask, not same, self.q_proj_weight, self.k_proj_weight,
            self.v_proj_weight, None, None, average_attn_weights, is_causal, bf)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine ``attn_mask (L, S)`` / ``(N*H? , L, S)`` and ``key_padding_mask (N, S)`` into
        one ``(N, num_heads, L, S)`` float mask and its type (torch's helper)."""
        mask_type = None
        merged = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            bsz, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                am = attn_mask.view(bsz, -1, seq_len, seq_len)
            else:
                am = attn_mask.view(1, 1, seq_len, seq_len).expand(bsz, self.num_heads, -1, -1)
            merged = am
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(bsz, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged = am + kpm
        return merged, mask_type
