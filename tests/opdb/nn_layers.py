"""Op-table rows for the nn ops declared in `nn/_functional` (issue 13: every defop has a row):
convolution, pooling (max, average, adaptive), pad, the element-wise activations elu / gelu /
silu / leaky_relu / hardtanh, embedding and embedding_bag. References are small NumPy loops,
written from the definitions (torch parity lives in tests/nn)."""

import itertools
import math

import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F

from ._core import FLOATS, ErrorInput, OpInfo, Sample, make


def _tup(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


# ---- convolution ----

def _np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    unbatched = x.ndim == w.ndim - 1
    if unbatched:
        x = x[None]
    d = x.ndim - 2
    stride, padding, dilation = _tup(stride, d), _tup(padding, d), _tup(dilation, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    k = w.shape[2:]
    size = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(d)]
    out = np.zeros((x.shape[0], w.shape[0], *size), x.dtype)
    cin, cout = w.shape[1], w.shape[0] // groups
    for g in range(groups):
        for off in itertools.product(*map(range, k)):
            sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (size[i] - 1) + 1,
                             stride[i]) for i in range(d))
            xs = xp[(slice(None), slice(g * cin, (g + 1) * cin)) + sl]
            ws = w[(slice(g * cout, (g + 1) * cout), slice(None)) + off]
            out[:, g * cout:(g + 1) * cout] += np.einsum("oc,nc...->no...", ws, xs)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * d)
    return out[0] if unbatched else out


def _conv_samples(d):
    def samples(dtype, rg):
        sp = (5, 4, 3)[:d]
        x = make((2, 4) + sp, dtype, rg, seed=1)
        w = make((6, 4) + (2,) * d, dtype, rg, seed=2)
        b = make((6,), dtype, rg, seed=3)
        wg = make((6, 2) + (2,) * d, dtype, rg, seed=4)
        out = [Sample((x, w, b)), Sample((x, w), dict(stride=2, padding=1), name="stride_pad"),
               Sample((x, wg, b), dict(groups=2, dilation=2 if d == 1 else 1), name="groups"),
               Sample((make((4,) + sp, dtype, rg, seed=5), w, b), name="unbatched")]
        return out
    return samples


def _conv_errors(fn, d):
    def errors():
        x, w = st.ones((2, 4) + (5,) * d), st.ones((6, 3) + (2,) * d)
        w4 = st.ones((6, 4) + (2,) * d)
        return [ErrorInput(Sample((x, w)), RuntimeError, r"expected input\[.*\] to have 3 channels"),
                ErrorInput(Sample((x, w4), dict(stride=0)), RuntimeError,
                           r"non-positive stride is not supported"),
                ErrorInput(Sample((x, w4), dict(dilation=0)), RuntimeError,
                           r"dilation should be greater than zero|non-positive dilation"),
                ErrorInput(Sample((x, w4), dict(padding=-1)), RuntimeError,
                           r"negative padding is not supported")]
    return errors


# ---- pooling ----

def _windows(size, k, s, p, dil=1):
    n = (size + 2 * p - dil * (k - 1) - 1) // s + 1
    return [[i * s - p + j * dil for j in range(k)] for i in range(n)]


def _np_pool(x, kernel_size, stride=None, padding=0, reduce="max"):
    d = 1 if reduce.endswith("1") else 2
    reduce = reduce.rstrip("12")
    k = _tup(kernel_size, d)
    s = _tup(stride if stride else kernel_size, d)
    p = _tup(padding, d)
    wins = [_windows(x.shape[-d + i], k[i], s[i], p[i]) for i in range(d)]
    out = np.zeros(x.shape[:-d] + tuple(len(w) for w in wins), x.dtype)
    for pos in itertools.product(*[range(len(w)) for w in wins]):
        idx = [wins[i][pos[i]] for i in range(d)]
        vals = []
        for cell in itertools.product(*idx):
            inside = all(0 <= c < x.shape[-d + i] for i, c in enumerate(cell))
            vals.append(x[(Ellipsis,) + cell] if inside else
                        np.full(x.shape[:-d], -np.inf if reduce == "max" else 0, x.dtype))
        v = np.stack(vals, -1)
        out[(Ellipsis,) + pos] = v.max(-1) if reduce == "max" else v.sum(-1) / len(vals)
    return out


def _np_adaptive(x, output_size, reduce):
    d = 1 if reduce.endswith("1") else 2
    reduce = reduce.rstrip("12")
    o = _tup(output_size, d)
    out = np.zeros(x.shape[:-d] + o, x.dtype)
    for pos in itertools.product(*map(range, o)):
        sl = []
        for i in range(d):
            n = x.shape[-d + i]
            sl.append(slice(pos[i] * n // o[i], math.ceil((pos[i] + 1) * n / o[i])))
        v = x[(Ellipsis,) + tuple(sl)].reshape(x.shape[:-d] + (-1,))
        out[(Ellipsis,) + pos] = v.max(-1) if reduce == "max" else v.mean(-1)
    return out


def _pool_samples(d):
    def samples(dtype, rg):
        x = make((2, 3) + (7, 6)[:d], dtype, rg, seed=1)
        return [Sample((x, 2)), Sample((x, 3), dict(stride=2, padding=1), name="stride_pad"),
                Sample((make((3,) + (5, 4)[:d], dtype, rg, seed=2), 2), name="unbatched")]
    return samples


def _adaptive_samples(d):
    def samples(dtype, rg):
        x = make((2, 3) + (7, 5)[:d], dtype, rg, seed=1)
        return [Sample((x, 3)), Sample((x, (2, 4)[:d] if d == 2 else 4), name="uneven")]
    return samples


def _pool_errors(kind, d):
    def errors():
        x = st.ones((2, 3) + (4,) * d)
        return [ErrorInput(Sample((x, 3), dict(padding=2)), RuntimeError,
                           r"should be at most half of"),
                ErrorInput(Sample((x, 2), dict(stride=-1)), RuntimeError,
                           r"stride (should|must) be greater than zero"),
                ErrorInput(Sample((x, 2), dict(dilation=0)) if kind == "max" else
                           Sample((x, 0)), RuntimeError,
                           r"dilation (should|must) be greater than zero" if kind == "max" else
                           r"stride should not be zero|kernel.size (should|must) be greater")]
    return errors


# ---- pad ----

def _np_pad(x, pad, mode="constant", value=None):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        return np.pad(x, widths, constant_values=0 if value is None else value)
    return np.pad(x, widths, mode={"reflect": "reflect", "replicate": "edge",
                                   "circular": "wrap"}[mode])


def _pad_samples(dtype, rg):
    x = make((2, 3, 4), dtype, rg, seed=1)
    return [Sample((x, (1, 2))), Sample((x, (1, 0, 2, 1)), dict(value=1.5), name="value"),
            Sample((x, (2, 1)), dict(mode="reflect"), name="reflect"),
            Sample((x, (2, 1)), dict(mode="replicate"), name="replicate"),
            Sample((x, (1, 2)), dict(mode="circular"), name="circular")]


def _pad_errors():
    return [ErrorInput(Sample((st.ones(2, 3, 4), (1, 2, 3))), RuntimeError,
                       r"Padding length must be divisible by 2")]


# ---- activations ----

def _erf(x):
    from scipy.special import erf
    return erf(x)


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype)


def _np_gelu(x, approximate="none"):
    if approximate == "tanh":
        y = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    else:
        y = 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    return y.astype(x.dtype)


def _np_silu(x):
    return (x / (1 + np.exp(-x))).astype(x.dtype)


def _np_leaky(x, negative_slope=0.01):
    return np.where(x > 0, x, x * negative_slope).astype(x.dtype)


def _np_hardtanh(x, min_val=-1.0, max_val=1.0):
    return np.clip(x, min_val, max_val).astype(x.dtype)


def _act_samples(*extra):
    def samples(dtype, rg):
        x = make((3, 5), dtype, rg, low=-4, high=4, seed=1)
        return [Sample((x,))] + [Sample((x,) + a, name=f"args{i}") for i, a in enumerate(extra)]
    return samples


def _gelu_samples(dtype, rg):
    x = make((3, 5), dtype, rg, low=-4, high=4, seed=1)
    return [Sample((x,)), Sample((x,), dict(approximate="tanh"), name="tanh")]


def _gelu_errors():
    return [ErrorInput(Sample((st.ones(2),), dict(approximate="fast")), RuntimeError,
                       r"approximate argument must be either none or tanh")]


# ---- embedding, embedding_bag ----

def _np_embedding(idx, w, padding_idx=None):
    return w[idx]


def _embedding_samples(dtype, rg):
    w = make((7, 3), dtype, rg, seed=1)
    idx = st.tensor([[0, 2, 6], [2, 2, 5]])
    # padding_idx is left to tests/nn: its row's gradient is zero by definition, not the derivative
    return [Sample((idx, w)), Sample((st.tensor([4, 0]), w), name="1d")]


def _embedding_errors():
    w = st.ones(7, 3)
    return [ErrorInput(Sample((st.tensor([0, 7]), w)), IndexError, r"index out of range"),
            ErrorInput(Sample((st.tensor([0.0]), w)), RuntimeError,
                       r"Expected tensor for argument #1 'indices' to have one of the following "
                       r"scalar types: Long, Int")]


def _np_embedding_bag(idx, w, offsets=None, max_norm=None, norm_type=2.0,
                      scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                      include_last_offset=False, padding_idx=None):
    if idx.ndim == 2:
        offsets = np.arange(0, idx.size, idx.shape[1])
        idx = idx.reshape(-1)
    ends = list(offsets[1:]) + ([] if include_last_offset else [idx.size])
    starts = list(offsets[:len(ends)])
    out = np.zeros((len(ends), w.shape[1]), w.dtype)
    for b, (s, e) in enumerate(zip(starts, ends)):
        keep = [j for j in range(s, e) if idx[j] != padding_idx]
        if not keep:
            continue
        rows = w[idx[keep]]
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[keep][:, None]
        out[b] = rows.max(0) if mode == "max" else rows.sum(0) / (len(keep) if mode == "mean" else 1)
    return out


def _embedding_bag_samples(dtype, rg):
    w = make((8, 3), dtype, rg, seed=1)
    idx = st.tensor([1, 2, 4, 5, 4, 3, 2, 7])
    off = st.tensor([0, 3, 3, 6])
    psw = make((8,), dtype, rg, seed=2)
    return [Sample((idx, w, off)), Sample((idx, w, off), dict(mode="sum"), name="sum"),
            Sample((idx, w, off), dict(mode="max"), name="max"),
            Sample((idx, w, off, None, 2.0, False, "sum", False, psw), name="weighted"),
            Sample((idx, w, st.tensor([0, 3, 6, 8])), dict(include_last_offset=True),
                   name="last_offset"),
            Sample((idx, w, off), dict(padding_idx=4), name="padding_idx"),
            Sample((idx, w, off, None, 2.0, False, "mean", False, psw), name="weighted_mean"),
            Sample((st.tensor([[1, 2], [7, 0]]), w), dict(mode="sum"), name="2d")]


def _embedding_bag_errors():
    w = st.ones(8, 3)
    idx = st.tensor([1, 2, 3])
    return [ErrorInput(Sample((idx, w, st.tensor([0, 1]), ), dict(mode="prod")), ValueError,
                       r"mode has to be one of sum, mean"),
            ErrorInput(Sample((idx, w, st.tensor([1, 2]))), RuntimeError,
                       r"offsets\[0\] has to be 0"),
            ErrorInput(Sample((idx, w, st.tensor([0, 1]), None, 2.0, False, "max", False,
                               st.ones(3))), NotImplementedError,
                       r"per_sample_weights is only supported for mode='sum'")]


def _conv_row(d):
    fn = getattr(F, f"conv{d}d")
    return OpInfo(f"nn.functional.conv{d}d", fn, _np_conv, _conv_samples(d), FLOATS, True,
                  _conv_errors(fn, d), atol=2e-5, rtol=1e-5, grad_atol=1e-4)


def _pool_row(kind, d):
    fn = getattr(F, f"{kind}_pool{d}d")
    ref = lambda x, *a, **k: _np_pool(x, *a, reduce=f"{kind}{d}", **k)  # noqa: E731
    return OpInfo(f"nn.functional.{kind}_pool{d}d", fn, ref, _pool_samples(d), FLOATS, True,
                  _pool_errors(kind, d))


def _adaptive_errors(d):
    def errors():
        return [ErrorInput(Sample((st.ones((2, 3) + (4,) * d), -1)), RuntimeError,
                           r"output_size must be greater than or equal to 0|negative dimension")]
    return errors


def _adaptive_row(kind, d):
    fn = getattr(F, f"adaptive_{kind}_pool{d}d")
    ref = lambda x, o: _np_adaptive(x, o, f"{kind}{d}")  # noqa: E731
    return OpInfo(f"nn.functional.adaptive_{kind}_pool{d}d", fn, ref, _adaptive_samples(d),
                  FLOATS, True, _adaptive_errors(d))


OPS = [
    *(_conv_row(d) for d in (1, 2, 3)),
    *(_pool_row(k, d) for k in ("max", "avg") for d in (1, 2)),
    *(_adaptive_row(k, d) for k in ("max", "avg") for d in (1, 2)),
    OpInfo("nn.functional.pad", F.pad, _np_pad, _pad_samples, FLOATS, True, _pad_errors),
    OpInfo("nn.functional.elu", F.elu, _np_elu, _act_samples((0.5,)), FLOATS, True),
    OpInfo("nn.functional.gelu", F.gelu, _np_gelu, _gelu_samples, FLOATS, True, _gelu_errors),
    OpInfo("nn.functional.silu", F.silu, _np_silu, _act_samples(), FLOATS, True),
    OpInfo("nn.functional.leaky_relu", F.leaky_relu, _np_leaky, _act_samples((0.2,)), FLOATS,
           True),
    OpInfo("nn.functional.hardtanh", F.hardtanh, _np_hardtanh, _act_samples((-0.5, 2.0)),
           FLOATS, True),
    OpInfo("nn.functional.embedding", F.embedding, _np_embedding, _embedding_samples, FLOATS,
           True, _embedding_errors),
    OpInfo("nn.functional.embedding_bag", F.embedding_bag, _np_embedding_bag,
           _embedding_bag_samples, FLOATS, True, _embedding_bag_errors),
]
