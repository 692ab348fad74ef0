"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer) (torch.nn.modules.transformer):
the same submodule names as torch (state_dict keys load torch checkpoints), composites over
MultiheadAttention, Linear, LayerNorm and Dropout. No nested tensors: padded positions are masked
instead; where torch's encoder would take its nested-tensor inference path
(``enable_nested_tensor``, eval mode, batch_first, a left-aligned padding mask, ...) the padded
outputs are zeros as torch's, and the same construction warnings are given."""

import copy
import warnings

from ... import _ops
from ..._dtype import bool as _bool
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from .._functional.fused_dropout import dropout_fused, usable
from .._functional.fused_norm import layer_norm_last, use_fused
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    return _ops.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """torch's rule: an explicit ``is_causal`` wins; else a mask equal to the causal one is causal."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None and mask.layout.name == "strided":
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _norm(mod, x):
    """``mod(x)``; a plain LayerNorm runs as one fused op (same values, fewer passes)."""
    if use_fused(mod, x):
        return layer_norm_last(x, mod.weight, mod.bias, mod.eps)
    return mod(x)


def _drop(mod, x, attn=None):
    """``mod(x)``; a plain training-mode Dropout runs as one fused pass (same values and draws).
    ``attn``: the MultiheadAttention whose output ``x`` is; batch-first, torch holds it as a
    transposed view of (T, N, E) and draws its mask in that order, so the draws follow it."""
    if type(mod) is Dropout and mod.training and not mod.inplace and not mod._forward_hooks \
            and not mod._forward_pre_hooks and usable(x, mod.p):
        order = (1, 0, 2) if attn is not None and attn.batch_first and x.ndim == 3 else None
        return dropout_fused(x, mod.p, order)
    return mod(x)


def _padded(kpm):
    """True at padded positions of a bool or float (-inf = padded) key padding mask."""
    return kpm if kpm.dtype is _bool else kpm != 0


def _why_not_nested(layer):
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    if layer.norm_first:
        return "encoder_layer.norm_first was True"
    if not layer.self_attn.batch_first:
        return ("encoder_layer.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return "encoder_layer.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return "encoder_layer.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return "encoder_layer.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return "encoder_layer.self_attn.num_heads is odd"
    return ""


def _activation(activation):
    return _get_activation_fn(activation) if isinstance(activation, str) else activation


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward block, each with a residual and LayerNorm (post-norm,
    or pre-norm with ``norm_first``)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        activation = _activation(activation)
        if activation is F.relu or activation.__class__.__name__ == "ReLU":
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or activation.__class__.__name__ == "GELU":
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(src_mask), "src_mask",
            src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        mask, kpm = src_mask, src_key_padding_mask
        if self.norm_first:
            x = x + self._sa_block(_norm(self.norm1, x), mask, kpm, is_causal)
            x = x + self._ff_block(_norm(self.norm2, x))
        else:
            x = _norm(self.norm1, x + self._sa_block(x, mask, kpm, is_causal))
            x = _norm(self.norm2, x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return _drop(self.dropout1, x, self.self_attn)

    def _ff_block(self, x):
        shape = x.shape  # rows flattened: 2-D GEMMs and 2-D weight gradients (same values)
        x = self.linear2(_drop(self.dropout, self.activation(self.linear1(x.reshape(-1, shape[-1])))))
        return _drop(self.dropout2, x.view(tuple(shape[:-1]) + (x.shape[-1],)))


class TransformerDecoderLayer(Module):
    r"""Self-attention, cross-attention over ``memory`` and a feed-forward block, each with a
    residual and LayerNorm."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        tm, tk, mm, mk = tgt_mask, tgt_key_padding_mask, memory_mask, memory_key_padding_mask
        if self.norm_first:
            x = x + self._sa_block(_norm(self.norm1, x), tm, tk, tgt_is_causal)
            x = x + self._mha_block(_norm(self.norm2, x), memory, mm, mk, memory_is_causal)
            x = x + self._ff_block(_norm(self.norm3, x))
        else:
            x = _norm(self.norm1, x + self._sa_block(x, tm, tk, tgt_is_causal))
            x = _norm(self.norm2, x + self._mha_block(x, memory, mm, mk, memory_is_causal))
            x = _norm(self.norm3, x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return _drop(self.dropout1, x, self.self_attn)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return _drop(self.dropout2, x, self.multihead_attn)

    def _ff_block(self, x):
        shape = x.shape
        x = self.linear2(_drop(self.dropout, self.activation(self.linear1(x.reshape(-1, shape[-1])))))
        return _drop(self.dropout3, x.view(tuple(shape[:-1]) + (x.shape[-1],)))


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        # torch's nested-tensor inference path: same values at the real positions (padding is
        # masked here instead of cut out) and zeros at the padded ones, under torch's conditions
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(mask), "mask",
            src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, False)
        batch_first = self.layers[0].self_attn.batch_first if self.layers else False
        seq_len = src.shape[1 if batch_first and src.ndim == 3 else 0]
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        out = src
        for mod in self.layers:
            out = mod(out, src_mask=mask, is_causal=is_causal,
                      src_key_padding_mask=src_key_padding_mask)
        if self._nested_path(src, mask, src_key_padding_mask):
            out = out.masked_fill(_padded(src_key_padding_mask).unsqueeze(-1), 0.0)
        if self.norm is not None:
            out = _norm(self.norm, out)
        return out

    def _nested_path(self, src, mask, kpm):
        """torch's conditions for its nested-tensor path (whose padded outputs are zeros)."""
        if not getattr(self, "use_nested_tensor", False) or not self.layers:
            return False
        first = self.layers[0]
        if first.training or src.ndim != 3 or kpm is None or mask is not None:
            return False
        if not first.self_attn.batch_first:
            return False
        pad = _padded(kpm)
        if tuple(pad.shape) != tuple(src.shape[:2]):
            return False
        # mask_check: real tokens left-aligned (no real token after a padded one)
        if self.mask_check and bool(pad[:, :-1].logical_and(pad[:, 1:].logical_not()).any()):
            return False
        if is_grad_enabled():
            a = first.self_attn
            args = (src, a.in_proj_weight, a.in_proj_bias, a.out_proj.weight, a.out_proj.bias,
                    first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                    first.linear1.weight, first.linear1.bias, first.linear2.weight,
                    first.linear2.bias)
            if any(t is not None and t.requires_grad for t in args):
                return False
        return True


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        batch_first = self.layers[0].self_attn.batch_first if self.layers else False
        seq_len = tgt.shape[1 if batch_first and tgt.ndim == 3 else 0]
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        out = tgt
        for mod in self.layers:
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            out = _norm(self.norm, out)
        return out


class Transformer(Module):
    r"""An encoder-decoder transformer ("Attention Is All You Need"); parameters with more than one
    dim are re-initialized with xavier_uniform_, as torch does."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.ndim == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""A float ``(sz, sz)`` mask: ``-inf`` above the diagonal, ``0.0`` elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
