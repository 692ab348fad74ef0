"""Op-table rows for the nn.functional ops of issue 15: scaled_dot_product_attention (dense, bool,
causal and sparse masks), multi_head_attention_forward, conv_transpose1d/2d, group_norm, prelu,
interpolate. References are small independent NumPy formulas (torch parity lives in tests/nn/)."""

import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make

# ---- scaled_dot_product_attention ----

def _np_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * (1.0 / np.sqrt(q.shape[-1]) if scale is None else scale)
    allowed = np.ones(s.shape[-2:], bool)
    if is_causal:
        allowed = np.tril(allowed)
    if attn_mask is not None and attn_mask.dtype == bool:
        allowed = allowed & attn_mask
    elif attn_mask is not None:
        s = s + attn_mask
    allowed = np.broadcast_to(allowed, s.shape)
    s = np.where(allowed, s, -np.inf)
    m = np.max(np.where(allowed, s, -1e300), -1, keepdims=True)
    e = np.where(allowed, np.exp(s - m), 0)
    z = e.sum(-1, keepdims=True)
    p = e / np.where(z == 0, 1, z)
    return (p @ v).astype(q.dtype)


def _sdpa_samples(dtype, rg):
    q = make((2, 3, 4), dtype, rg, seed=1)
    k = make((2, 5, 4), dtype, rg, seed=2)
    v = make((2, 5, 3), dtype, rg, seed=3)
    bmask = make((3, 5), st.bool, seed=4)
    bmask[1] = False  # a fully masked row: zeros
    fmask = make((3, 5), dtype, seed=5)
    return [Sample((q, k, v)), Sample((q, k, v, bmask), name="bool_mask"),
            Sample((q, k, v, fmask), name="float_mask"),
            Sample((q, k, v, None, 0.0, True), name="causal"),
            Sample((q, k, v, None, 0.0, False, 0.7), name="scale"),
            Sample((q, k, v, bmask.to_sparse()), name="sparse_coo_mask"),
            Sample((q, k, v, bmask.to_sparse_csr()), name="sparse_csr_mask")]


def _sdpa_errors():
    q = st.ones(2, 3, 4)
    return [ErrorInput(Sample((q, q, q, st.ones(3, 3, dtype=st.bool), 0.0, True)), RuntimeError,
                       r"attn_mask should not be set when is_causal=True"),
            ErrorInput(Sample((q, q.double(), q)), RuntimeError, r"same dtype"),
            ErrorInput(Sample((q, st.ones(2, 3, 5), q)), RuntimeError, r"same embedding size"),
            ErrorInput(Sample((q, 1.0, q)), TypeError, r"'key' \(position 2\) must be Tensor"),
            ErrorInput(Sample((q, q, q, st.ones(3, 3, dtype=st.int64))), RuntimeError,
                       r"attn_mask dtype to be bool or float"),
            ErrorInput(Sample((q, q, q, st.ones(2, 2).to_sparse())), RuntimeError,
                       r"sparse attn_mask of shape \[2, 2\] does not match")]


# ---- multi_head_attention_forward (no NumPy reference: gradcheck and errors) ----

def _mha(q, k, v, w_in, b_in, w_out, b_out, need_weights=False):
    return F.multi_head_attention_forward(q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0, w_out,
                                          b_out, training=False, need_weights=need_weights)[0]


def _mha_samples(dtype, rg):
    x = make((3, 2, 4), dtype, rg, seed=1)
    return [Sample((x, x, x, make((12, 4), dtype, rg, seed=2), make((12,), dtype, rg, seed=3),
                    make((4, 4), dtype, rg, seed=4), make((4,), dtype, rg, seed=5))),
            Sample((x, make((5, 2, 4), dtype, rg, seed=6), make((5, 2, 4), dtype, rg, seed=7),
                    make((12, 4), dtype, rg, seed=2), None, make((4, 4), dtype, rg, seed=4), None,
                    True), name="cross_weights")]


def _mha_errors():
    x = st.ones(3, 2, 4)
    w, b, wo = st.ones(12, 4), st.ones(12), st.ones(4, 4)
    return [ErrorInput(Sample((st.ones(3, 2, 6), x, x, w, b, wo, None)), AssertionError,
                       r"was expecting embedding dimension of 4, but got 6"),
            ErrorInput(Sample((st.ones(2, 2, 2, 4), x, x, w, b, wo, None)), AssertionError,
                       r"query should be unbatched 2D or batched 3D tensor")]


# ---- conv_transpose1d / 2d ----

def _np_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1):
    nd = x.ndim - 2
    tup = (lambda v: (v,) * nd if isinstance(v, int) else tuple(v))
    stride, padding, output_padding, dilation = map(tup, (stride, padding, output_padding,
                                                          dilation))
    n, c = x.shape[:2]
    k = w.shape[2:]
    og = w.shape[1]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i]
            for i in range(nd)]
    y = np.zeros((n, og * groups) + tuple(full), x.dtype)
    cg = c // groups
    for pos in np.ndindex(*x.shape[2:]):
        for off in np.ndindex(*k):
            o = tuple(pos[i] * stride[i] + off[i] * dilation[i] for i in range(nd))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]  # (n, cg)
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + off]  # (cg, og)
                y[(slice(None), slice(g * og, (g + 1) * og)) + o] += xs @ ws
    y = y[(slice(None), slice(None)) + tuple(slice(padding[i], full[i] - padding[i] + 0)
                                             for i in range(nd))]
    out = tuple((x.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1)
                + output_padding[i] + 1 for i in range(nd))
    y = y[(slice(None), slice(None)) + tuple(slice(0, s) for s in out)]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nd)
    return y.astype(x.dtype)


def _ct1_samples(dtype, rg):
    x = make((2, 4, 5), dtype, rg, seed=1)
    w = make((4, 3, 3), dtype, rg, seed=2)
    b = make((6,), dtype, rg, seed=3)
    return [Sample((x, w)), Sample((x, w, b[:3], 2, 1, 1), name="stride_pad_outpad"),
            Sample((x, w, b, 3, 0, 2, 2, 2), name="groups_dilation")]


def _ct2_samples(dtype, rg):
    x = make((1, 2, 3, 4), dtype, rg, seed=1)
    w = make((2, 2, 2, 3), dtype, rg, seed=2)
    return [Sample((x, w, make((2,), dtype, rg, seed=3))),
            Sample((x, w, None, (2, 1), (1, 0), (1, 0)), name="stride_pad_outpad")]


def _ct_errors():
    return [ErrorInput(Sample((st.ones(1, 2, 3, 3), st.ones(2, 2, 2, 2), None, 1, 0, 1)),
                       RuntimeError, r"output padding must be smaller than either stride or "
                       r"dilation"),
            ErrorInput(Sample((st.ones(1, 3, 3, 3), st.ones(2, 2, 2, 2))), RuntimeError,
                       r"expected input\[1, 3, 3, 3\] to have 2 channels"),
            ErrorInput(Sample((st.ones(3, 3), st.ones(3, 2, 2, 2))), RuntimeError,
                       r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d")]


def _ct1_errors():
    return [ErrorInput(Sample((st.ones(1, 2, 3), st.ones(2, 2, 2), st.ones(3))), RuntimeError,
                       r"expected bias to be 1-dimensional with 2 elements")]


# ---- group_norm, prelu ----

def _np_group_norm(x, g, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    xr = x.reshape(n, g, -1).astype(np.float64)
    y = ((xr - xr.mean(-1, keepdims=True)) / np.sqrt(xr.var(-1, keepdims=True) + eps))
    y = y.reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y.astype(x.dtype)


def _gn_samples(dtype, rg):
    x = make((2, 6, 3), dtype, rg, seed=1)
    return [Sample((x, 3)), Sample((x, 2, make((6,), dtype, rg, seed=2),
                                    make((6,), dtype, rg, seed=3)), name="affine"),
            Sample((make((3, 4, 2, 2), dtype, rg, seed=4), 1, None, None, 1e-3), name="4d_eps")]


def _gn_errors():
    return [ErrorInput(Sample((st.ones(2, 4, 3), 3)), RuntimeError,
                       r"divisible by num_groups, but got input of shape \[2, 4, 3\]"),
            ErrorInput(Sample((st.ones(4), 2)), RuntimeError,
                       r"Expected at least 2 dimensions for input tensor but received 1")]


def _np_prelu(x, w):
    wb = w.reshape(()) if w.size == 1 else w.reshape((-1,) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, wb * x).astype(x.dtype)


def _prelu_samples(dtype, rg):
    x = make((3, 4, 2), dtype, rg, seed=1)
    return [Sample((x, make((1,), dtype, rg, seed=2))),
            Sample((x, make((4,), dtype, rg, seed=3)), name="per_channel"),
            Sample((make((5,), dtype, rg, seed=4), make((1,), dtype, rg, seed=5)), name="1d")]


def _prelu_errors():
    return [ErrorInput(Sample((st.ones(2, 4), st.ones(3))), RuntimeError,
                       r"Mismatch of parameter numbers and input channel size. Found parameter "
                       r"numbers = 3 and channel size = 4")]


# ---- interpolate ----

def _np_interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Independent formulas: nearest with an integer factor repeats, area with an integer factor
    averages blocks, (bi)linear with align_corners=True interpolates between the grid ends."""
    nd = x.ndim - 2
    if mode == "nearest":
        for d in range(nd):
            x = np.repeat(x, int(scale_factor), axis=2 + d)
        return x
    if mode == "area":
        f = x.shape[2] // size
        shape = x.shape[:2] + sum(((s // f, f) for s in x.shape[2:]), ())
        return x.reshape(shape).mean(axis=tuple(range(3, 3 + 2 * nd, 2))).astype(x.dtype)
    for d in range(nd):
        n = x.shape[2 + d]
        src = np.arange(size) * (n - 1) / (size - 1)
        i0 = np.minimum(np.floor(src).astype(int), n - 1)
        i1 = np.minimum(i0 + 1, n - 1)
        lam = (src - i0).reshape((-1,) + (1,) * (nd - 1 - d))
        x = np.take(x, i0, 2 + d) * (1 - lam) + np.take(x, i1, 2 + d) * lam
    return x.astype(x.dtype)


def _interp_samples(dtype, rg):
    x1 = make((2, 3, 4), dtype, rg, seed=1)
    x2 = make((1, 2, 4, 6), dtype, rg, seed=2)
    return [Sample((x1,), {"scale_factor": 2}, name="nearest1d"),
            Sample((x2,), {"scale_factor": 3}, name="nearest2d"),
            Sample((x1,), {"size": 7, "mode": "linear", "align_corners": True}, name="linear"),
            Sample((x2,), {"size": 5, "mode": "bilinear", "align_corners": True},
                   name="bilinear"),
            Sample((make((1, 2, 4, 4), dtype, rg, seed=3),), {"size": 2, "mode": "area"},
                   name="area")]


def _interp_errors():
    x = st.ones(1, 2, 4, 4)
    return [ErrorInput(Sample((x,), {"size": 3, "scale_factor": 2}), ValueError,
                       r"only one of size or scale_factor should be defined"),
            ErrorInput(Sample((x,), {"size": 3, "align_corners": True}), ValueError,
                       r"align_corners option can only be set with the interpolating modes"),
            ErrorInput(Sample((x,), {"size": 3, "mode": "linear"}), NotImplementedError,
                       r"Got 4D input, but linear mode needs 3D input"),
            ErrorInput(Sample((x,), {"size": (3, 3, 3)}), ValueError,
                       r"Input and output must have the same number of spatial dimensions")]


# ---- channel-wise dropout and rrelu: their deterministic forms (evaluation, p=0); the random
# masks and slopes are compared with torch's for a seed in tests/nn/test_stochastic.py ----

def _np_same(x, *args, **kwargs):
    return x


def _feature_dropout_samples(ndim):
    def samples(dtype, rg):
        x = make((2, 3, 4, 2, 2)[:ndim], dtype, rg, seed=1)
        return [Sample((x, 0.3, False)), Sample((x,), {"p": 0.0, "training": True}, name="p0")]
    return samples


def _feature_dropout_errors():
    x = st.ones(2, 3, 4)
    return [ErrorInput(Sample((st.ones(3),)), RuntimeError, r"dropout1d: Expected 2D or 3D input"),
            ErrorInput(Sample((x, 1.5)), ValueError, r"dropout probability has to be between"),
            ErrorInput(Sample((st.ones(3), 0.5, True)), RuntimeError,
                       r"Feature dropout requires at least 2 dimensions in the input")]


def _np_rrelu(x, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return np.where(x > 0, x, x * ((lower + upper) / 2)).astype(x.dtype)


def _rrelu_samples(dtype, rg):
    x = make((3, 4), dtype, rg, seed=2)
    return [Sample((x,)), Sample((x, 0.1, 0.5), name="bounds")]


def _rrelu_errors():
    return [ErrorInput(Sample((st.ones(3), 0.5, 0.2)), RuntimeError,
                       r"Lower bound should be less than or equal to the upper bound")]


def _fd_errors(pick):
    return lambda: [_feature_dropout_errors()[i] for i in pick]


OPS = [
    OpInfo("nn.functional.scaled_dot_product_attention", F.scaled_dot_product_attention, _np_sdpa,
           _sdpa_samples, FLOATS, True, _sdpa_errors),
    OpInfo("nn.functional.multi_head_attention_forward", _mha, None, _mha_samples, FLOATS, True,
           _mha_errors),
    OpInfo("nn.functional.conv_transpose1d", F.conv_transpose1d, _np_conv_transpose,
           _ct1_samples, FLOATS, True, _ct1_errors),
    OpInfo("nn.functional.conv_transpose2d", F.conv_transpose2d, _np_conv_transpose,
           _ct2_samples, FLOATS, True, _ct_errors),
    OpInfo("nn.functional.group_norm", F.group_norm, _np_group_norm, _gn_samples, FLOATS, True,
           _gn_errors, atol=1e-5),
    OpInfo("nn.functional.prelu", F.prelu, _np_prelu, _prelu_samples, FLOATS, True,
           _prelu_errors),
    OpInfo("nn.functional.interpolate", F.interpolate, _np_interpolate, _interp_samples, FLOATS,
           True, _interp_errors),
    OpInfo("nn.functional.dropout", F.dropout, _np_same, _feature_dropout_samples(2), FLOATS, True,
           _fd_errors((1,))),  # training draws: tests/nn/test_fused_dropout.py against torch
    OpInfo("nn.functional.dropout1d", F.dropout1d, _np_same, _feature_dropout_samples(3), FLOATS,
           True, _fd_errors((0, 1))),
    OpInfo("nn.functional.dropout2d", F.dropout2d, _np_same, _feature_dropout_samples(4), FLOATS,
           True, _fd_errors((1,))),
    OpInfo("nn.functional.dropout3d", F.dropout3d, _np_same, _feature_dropout_samples(5), FLOATS,
           True, _fd_errors((1,))),
    OpInfo("nn.functional.feature_alpha_dropout", F.feature_alpha_dropout, _np_same,
           _feature_dropout_samples(3), FLOATS, True, _fd_errors((1, 2))),
    OpInfo("nn.functional.rrelu", F.rrelu, _np_rrelu, _rrelu_samples, FLOATS, True, _rrelu_errors),
]
