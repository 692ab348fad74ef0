"""Op-table rows for the fused nn ops of issue 14 (linear, activations, losses, layer/batch norm).
References are small independent NumPy formulas (torch parity and node names live in
tests/nn/test_fused_ops.py)."""

import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make
from .reduction import _np_log_softmax, _np_softmax


def _red(loss, reduction, denom=None):
    if reduction == "mean":
        return np.asarray(loss.sum() / (loss.size if denom is None else denom), loss.dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), loss.dtype)
    return loss


def _logsig(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


# ---- linear ----

def _np_linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def _linear_samples(dtype, rg):
    x = make((4, 3), dtype, rg, seed=1)
    w = make((2, 3), dtype, rg, seed=2)
    b = make((2,), dtype, rg, seed=3)
    return [Sample((x, w, b)), Sample((x, w), name="no_bias"),
            Sample((make((2, 2, 3), dtype, rg, seed=4), w, b), name="3d_input"),
            Sample((make((3,), dtype, rg, seed=5), w, b), name="1d_input")]


def _linear_errors():
    return [ErrorInput(Sample((st.ones(4, 3), st.ones(2, 5))), RuntimeError,
                       r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x2\)")]


# ---- activations ----

def _np_softplus(x, beta=1.0, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(x.dtype)


def _np_mish(x):
    return (x * np.tanh(np.logaddexp(0, x))).astype(x.dtype)


def _act_samples(dtype, rg):
    return [Sample((make((3, 5), dtype, rg, low=-25, high=25, seed=1),))]


def _softplus_samples(dtype, rg):
    x = make((3, 5), dtype, rg, low=-8, high=8, seed=1)
    return [Sample((x,)), Sample((x, 2.0, 5.0), name="beta_threshold")]


# ---- losses ----

def _np_mse(x, t, reduction="mean"):
    d = x - t
    return _red(d * d, reduction)


def _np_nll(x, t, weight=None, ignore_index=-100, reduction="mean"):
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight
    wt = w[safe] * valid
    loss = -np.take_along_axis(x, safe[:, None], 1)[:, 0] * wt
    return _red(loss.astype(x.dtype), reduction, wt.sum())


def _np_ce(x, t, reduction="mean"):
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return _np_nll(logp.astype(x.dtype), t, reduction=reduction)


def _np_bce(x, t, weight=None, reduction="mean"):
    loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight
    return _red(loss.astype(x.dtype), reduction)


def _np_bcel(x, t, weight=None, size_average=None, reduce=None, reduction="mean",
             pos_weight=None):
    lw = 1 if pos_weight is None else (pos_weight - 1) * t + 1
    loss = (1 - t) * x - lw * _logsig(x)
    if weight is not None:
        loss = loss * weight
    return _red(loss.astype(x.dtype), reduction)


def _mse_samples(dtype, rg):
    x, t = make((3, 4), dtype, rg, seed=1), make((3, 4), dtype, rg, seed=2)
    return [Sample((x, t), {"reduction": r}, r) for r in ("mean", "sum", "none")]


def _nll_samples(dtype, rg):
    x = make((5, 4), dtype, rg, seed=1)
    t = st.tensor([0, 3, 1, -100, 2])
    w = make((4,), dtype, positive=True, seed=3)
    return [Sample((x, t), {"reduction": r}, r) for r in ("mean", "sum", "none")] + [
        Sample((x, t, w), {}, "weight")]


def _ce_samples(dtype, rg):
    x = make((5, 4), dtype, rg, seed=1)
    t = st.tensor([0, 3, 1, 1, 2])
    return [Sample((x, t), {"reduction": r}, r) for r in ("mean", "sum", "none")]


def _bce_samples(dtype, rg):
    x = make((3, 4), dtype, rg, low=0.05, high=0.95, seed=1)
    t = make((3, 4), dtype, rg, low=0.0, high=1.0, seed=2)
    w = make((4,), dtype, low=0.1, high=2.0, seed=3)
    return [Sample((x, t), {"reduction": r}, r) for r in ("mean", "sum", "none")] + [
        Sample((x, t, w), {}, "weight")]


def _bcel_samples(dtype, rg):
    x = make((3, 4), dtype, rg, low=-6, high=6, seed=1)
    t = make((3, 4), dtype, rg, low=0.0, high=1.0, seed=2)
    w = make((4,), dtype, low=0.1, high=2.0, seed=3)
    pw = make((3, 1), dtype, low=0.5, high=3.0, seed=4)
    return [Sample((x, t), {"reduction": r}, r) for r in ("mean", "sum", "none")] + [
        Sample((x, t, w, None, None, "mean", pw), {}, "weight_pos_weight"),
        Sample((x, t, None, None, None, "none", pw), {}, "pos_weight_none")]


def _loss_errors():
    x = st.ones(2, 3)
    return [ErrorInput(Sample((x, st.ones(2, 3), st.ones(2))), RuntimeError,
                       r"The size of tensor a \(3\) must match the size of tensor b \(2\)"),
            ErrorInput(Sample((x, st.ones(3, 3))), ValueError,
                       r"Target size .* must be the same as input size"),
            ErrorInput(Sample((x, st.ones(2, 3)), {"reduction": "avg"}), ValueError,
                       r"avg is not a valid value for reduction")]


def _nll_errors():
    return [ErrorInput(Sample((st.zeros(2, 3), st.tensor([0, 3]))), IndexError,
                       r"Target 3 is out of bounds"),
            ErrorInput(Sample((st.zeros(2, 3), st.tensor([0, 1])), {"weight": st.ones(2)}),
                       RuntimeError, r"weight tensor should be defined either for all 3 classes")]


# ---- normalization ----

def _np_layer_norm(x, shape, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = x.mean(axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y.astype(x.dtype)


def _np_batch_norm(x, rm, rv, w=None, b=None, training=False, momentum=0.1, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mu = x.mean(axes, keepdims=True)
        var = ((x - mu) ** 2).mean(axes, keepdims=True)
    else:
        mu, var = rm.reshape(shape), rv.reshape(shape)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y.astype(x.dtype)


def _ln_samples(dtype, rg):
    x = make((2, 3, 4), dtype, rg, seed=1)
    return [Sample((x, (4,), make((4,), dtype, rg, seed=2), make((4,), dtype, rg, seed=3))),
            Sample((x, (3, 4)), name="two_dims"),
            Sample((x, (4,), make((4,), dtype, rg, seed=2), None, 1e-2), name="eps")]


def _bn_samples(dtype, rg):
    x = make((4, 3, 2), dtype, rg, seed=1)
    w, b = make((3,), dtype, rg, seed=2), make((3,), dtype, rg, seed=3)
    rm, rv = make((3,), dtype, seed=4), make((3,), dtype, positive=True, seed=5)
    return [Sample((x, None, None, w, b, True), name="train"),
            Sample((x, rm, rv, w, b, False), name="eval"),
            Sample((make((5, 3), dtype, rg, seed=6), None, None, None, None, True), name="2d")]


def _ln_errors():
    return [ErrorInput(Sample((st.ones(2, 3), (4,))), RuntimeError,
                       r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]")]


def _bn_errors():
    return [ErrorInput(Sample((st.ones(1, 3), None, None, None, None, True)), ValueError,
                       r"Expected more than 1 value per channel when training")]


# ---- F.softmax / F.log_softmax: the row kernels (last dim), the slab kernels (another dim),
# and a strided view that takes the op's NumPy path (dtype= in tests/nn/test_softmax_kernels.py) ----

def _fsm_samples(dtype, rg):
    x = make((4, 7), dtype, rg, seed=1)
    return [Sample((x,), {"dim": -1}, name="rows"),
            Sample((make((3, 5, 4), dtype, rg, seed=2),), {"dim": 1}, name="slabs"),
            Sample((make((6,), dtype, rg, seed=3),), {"dim": 0}, name="1d"),
            Sample((x.t(),), {"dim": 1}, name="strided_view")]


def _fsm_errors():
    return [ErrorInput(Sample((st.ones(3, dtype=st.int64), 0)), NotImplementedError,
                       "not implemented for 'Long'")]


OPS = [
    OpInfo("nn.functional.linear", F.linear, _np_linear, _linear_samples, FLOATS, True,
           _linear_errors),
    OpInfo("nn.functional.logsigmoid", F.logsigmoid, _logsig, _act_samples, FLOATS, True),
    OpInfo("nn.functional.softplus", F.softplus, _np_softplus, _softplus_samples, FLOATS, True),
    OpInfo("nn.functional.mish", F.mish, _np_mish, _act_samples, FLOATS, True),
    OpInfo("nn.functional.mse_loss", F.mse_loss, _np_mse, _mse_samples, FLOATS, True),
    OpInfo("nn.functional.nll_loss", F.nll_loss, _np_nll, _nll_samples, FLOATS, True,
           _nll_errors),
    OpInfo("nn.functional.cross_entropy", F.cross_entropy, _np_ce, _ce_samples, FLOATS,
           True),
    OpInfo("nn.functional.binary_cross_entropy", F.binary_cross_entropy, _np_bce, _bce_samples,
           FLOATS, True, grad_atol=1e-4),
    OpInfo("nn.functional.binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
           _np_bcel, _bcel_samples, FLOATS, True, _loss_errors),
    OpInfo("nn.functional.layer_norm", F.layer_norm, _np_layer_norm, _ln_samples, FLOATS, True,
           _ln_errors),
    OpInfo("nn.functional.batch_norm", F.batch_norm, _np_batch_norm, _bn_samples, FLOATS, True,
           _bn_errors),
    OpInfo("nn.functional.softmax", F.softmax, _np_softmax, _fsm_samples, FLOATS,
           True, _fsm_errors),
    OpInfo("nn.functional.log_softmax", F.log_softmax, _np_log_softmax,
           _fsm_samples, FLOATS, True, _fsm_errors),
]
