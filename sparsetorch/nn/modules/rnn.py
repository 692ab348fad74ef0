"""Recurrent layers: RNN, LSTM, GRU and their single-step cells.

Composites of sparsetorch ops, so autograd needs no recurrent-specific code. Parameter names,
shapes, registration order, gate orders (LSTM i,f,g,o; GRU r,z,n) and the initial uniform
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) follow torch, so state_dicts load either way. The
input projection of a whole sequence is one matmul per layer and direction; only the hidden
recurrence loops over time.
"""

import math
import warnings

from ... import _ops as _st

from ... import _autocast as _ac
from ... import _dtype as D
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- one time step ----

def _linear(x, w, b):
    y = _st.matmul(x, w.t())
    if b is None:
        return y
    if b.dtype is not y.dtype and _ac.active():  # autocast casts linear's bias too (as torch)
        b = b.to(y.dtype)
    return y + b


def _onednn_autocast(tensors, device_type):
    """Under CPU autocast torch runs an unpacked LSTM without projections as oneDNN's RNN layer,
    which takes input and states in the autocast dtype (so all results come out in it)."""
    s = _ac.state()
    if not s.enabled.get(device_type, False):
        return tensors
    target = s.dtype[device_type]
    return [t.to(target) if t is not None and t.dtype is D.float32 else t for t in tensors]


def _rnn_step(mode, xw, h, w_hh, b_hh):
    """One step given the precomputed input projection ``xw``; returns the new state."""
    hw = _linear(h[0] if mode == "LSTM" else h, w_hh, b_hh)
    if mode == "RNN_TANH":
        return _st.tanh(xw + hw)
    if mode == "RNN_RELU":
        return _st.relu(xw + hw)
    if mode == "LSTM":
        i, f, g, o = (xw + hw).chunk(4, -1)
        c = _st.sigmoid(f) * h[1] + _st.sigmoid(i) * _st.tanh(g)
        return _st.sigmoid(o) * _st.tanh(c), c
    # GRU: n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = hw.chunk(3, -1)
    r = _st.sigmoid(xr + hr)
    z = _st.sigmoid(xz + hz)
    n = _st.tanh(xn + r * hn)
    return (1 - z) * n + z * h


# ---- sequence layers ----

class RNNBase(Module):
    r"""Base class for RNN, LSTM and GRU (torch.nn.RNNBase)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + sfx,
                            Parameter(_st.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with no_grad():
            for w in self.parameters():
                w.uniform_(-stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in self._layer_names(layer, d)]
                for layer in range(self.num_layers) for d in range(2 if self.bidirectional else 1)]

    def _layer_names(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        names = ["weight_ih", "weight_hh"]
        if self.bias:
            names += ["bias_ih", "bias_hh"]
        if self.proj_size:
            names.append("weight_hr")
        return [n + sfx for n in names]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _check_hidden(self, h, expected, msg):
        if tuple(h.shape) != expected:
            raise RuntimeError(f"{msg} {expected}, got {list(h.shape)}")

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        lstm = self.mode == "LSTM"
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        if input.ndim not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D{tail}")
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
            if hx is not None:
                hs = hx if lstm else (hx,)
                if any(h.ndim != 2 for h in hs):
                    if lstm:
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({hs[0].ndim}-D, {hs[1].ndim}-D) tensors")
                    raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.ndim}-D tensor")
                hx = tuple(h.unsqueeze(1) for h in hs) if lstm else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        steps, n = input.shape[0], input.shape[1]
        dirs = 2 if self.bidirectional else 1
        out_h = self.proj_size or self.hidden_size
        h_shape = (self.num_layers * dirs, n, out_h)
        c_shape = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = _st.zeros(h_shape, dtype=input.dtype, device=input.device)
            c0 = _st.zeros(c_shape, dtype=input.dtype, device=input.device) if lstm else None
        elif lstm:
            h0, c0 = hx
            self._check_hidden(h0, h_shape, "Expected hidden[0] size")
            self._check_hidden(c0, c_shape, "Expected hidden[1] size")
        else:
            h0, c0 = hx, None
            self._check_hidden(h0, h_shape, "Expected hidden size")
        x = input
        if lstm and not self.proj_size and _ac.active():
            x, h0, c0 = _onednn_autocast([x, h0, c0], x.device.type)
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = [getattr(self, nm) for nm in self._layer_names(layer, d)]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size else None
                xw = _linear(x, w_ih, b_ih)  # the whole sequence's input projection at once
                h = (h0[k], c0[k]) if lstm else h0[k]
                seq = [None] * steps
                for t in (range(steps - 1, -1, -1) if d else range(steps)):
                    h = _rnn_step(self.mode, xw[t], h, w_hh, b_hh)
                    if w_hr is not None:
                        h = (_st.matmul(h[0], w_hr.t()), h[1])
                    seq[t] = h[0] if lstm else h
                outs.append(_st.stack(seq, 0))
                h_n.append(h[0] if lstm else h)
                if lstm:
                    c_n.append(h[1])
            x = outs[0] if dirs == 1 else _st.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        h_n = _st.stack(h_n, 0)
        c_n = _st.stack(c_n, 0) if lstm else None
        if not batched:
            x, h_n = x.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        elif self.batch_first:
            x = x.transpose(0, 1)
        return (x, (h_n, c_n)) if lstm else (x, h_n)

    def _forward_packed(self, packed, hx):
        """A PackedSequence in, a PackedSequence out; each sequence's hidden state is taken at
        its own last step (the batch shrinks over time, as ``batch_sizes`` says)."""
        lstm = self.mode == "LSTM"
        data, sizes_t, sorted_idx, unsorted_idx = packed
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        sizes = [int(v) for v in sizes_t.tolist()]
        n = sizes[0]
        dirs = 2 if self.bidirectional else 1
        h_shape = (self.num_layers * dirs, n, self.proj_size or self.hidden_size)
        c_shape = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = _st.zeros(h_shape, dtype=data.dtype, device=data.device)
            c0 = _st.zeros(c_shape, dtype=data.dtype, device=data.device) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if sorted_idx is not None:
                h0 = h0.index_select(1, sorted_idx)
                c0 = c0.index_select(1, sorted_idx) if lstm else None
            self._check_hidden(h0, h_shape, "Expected hidden[0] size" if lstm else
                               "Expected hidden size")
            if lstm:
                self._check_hidden(c0, c_shape, "Expected hidden[1] size")
        starts, off = [], 0
        for bs in sizes:
            starts.append(off)
            off += bs
        x, h_n, c_n = data, [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = [getattr(self, nm) for nm in self._layer_names(layer, d)]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size else None
                xw = _linear(x, w[0], b_ih)
                init = (h0[k], c0[k]) if lstm else (h0[k],)
                seq = [None] * len(sizes)
                if d == 0:  # forward in time: finished sequences drop off the end of the batch
                    h, done = init, []
                    for t, bs in enumerate(sizes):
                        if bs < h[0].shape[0]:
                            done.append(tuple(v[bs:] for v in h))
                            h = tuple(v[:bs] for v in h)
                        h = self._packed_step(xw[starts[t]:starts[t] + bs], h, w[1], b_hh, w_hr)
                        seq[t] = h[0]
                    last = [_st.cat([h[i]] + [p[i] for p in reversed(done)], 0)
                            if done else h[i] for i in range(len(h))]
                else:  # backward in time: sequences join the batch at their last step
                    h = tuple(v[:sizes[-1]] for v in init)
                    for t in range(len(sizes) - 1, -1, -1):
                        bs = sizes[t]
                        if bs > h[0].shape[0]:
                            h = tuple(_st.cat([v, v0[v.shape[0]:bs]], 0)
                                      for v, v0 in zip(h, init))
                        h = self._packed_step(xw[starts[t]:starts[t] + bs], h, w[1], b_hh, w_hr)
                        seq[t] = h[0]
                    last = list(h)
                outs.append(_st.cat(seq, 0))
                h_n.append(last[0])
                if lstm:
                    c_n.append(last[1])
            x = outs[0] if dirs == 1 else _st.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        h_n = _st.stack(h_n, 0)
        c_n = _st.stack(c_n, 0) if lstm else None
        if unsorted_idx is not None:
            h_n = h_n.index_select(1, unsorted_idx)
            c_n = c_n.index_select(1, unsorted_idx) if lstm else None
        out = PackedSequence(x, sizes_t, sorted_idx, unsorted_idx)
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    def _packed_step(self, xw, h, w_hh, b_hh, w_hr):
        """One step on the active rows; the state is a 1-tuple (h,) or (h, c)."""
        if self.mode != "LSTM":
            return (_rnn_step(self.mode, xw, h[0], w_hh, b_hh),)
        h = _rnn_step(self.mode, xw, h, w_hh, b_hh)
        return h if w_hr is None else (_st.matmul(h[0], w_hr.t()), h[1])


class RNN(RNNBase):
    r"""Applies a multi-layer Elman RNN with tanh or ReLU non-linearity to an input sequence.

    ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``. Returns ``(output, h_n)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    r"""Applies a multi-layer long short-term memory (LSTM) RNN to an input sequence.

    Gates in torch's order i, f, g, o. Returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    r"""Applies a multi-layer gated recurrent unit (GRU) RNN to an input sequence.

    Gates in torch's order r, z, n with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


# ---- cells ----

class RNNCellBase(Module):
    r"""Base class for the single-step cells."""

    _mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate = num_chunks * hidden_size
        self.weight_ih = Parameter(_st.empty((gate, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_st.empty((gate, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_st.empty(gate, device=device, dtype=dtype))
            self.bias_hh = Parameter(_st.empty(gate, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with no_grad():
            for w in self.parameters():
                w.uniform_(-stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, name):
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        hs = []
        for i, h in enumerate(hx if isinstance(hx, tuple) else (hx,)):
            if h is None:
                h = _st.zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
            elif not batched:
                h = h.unsqueeze(0)
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} "
                                   f"batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                                   f"expected {self.hidden_size}")
            hs.append(h)
        return x, hs, batched

    def forward(self, input, hx=None):
        lstm = self._mode == "LSTM"
        name = type(self).__name__
        x, hs, batched = self._prepare(input, (None, None) if lstm and hx is None else hx, name)
        xw = _linear(x, self.weight_ih, self.bias_ih)
        h = _rnn_step(self._mode, xw, tuple(hs) if lstm else hs[0], self.weight_hh, self.bias_hh)
        if not batched:
            h = tuple(t.squeeze(0) for t in h) if lstm else h.squeeze(0)
        return h


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell with tanh or ReLU non-linearity."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class LSTMCell(RNNCellBase):
    r"""A long short-term memory (LSTM) cell; returns ``(h_1, c_1)``."""

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)


class GRUCell(RNNCellBase):
    r"""A gated recurrent unit (GRU) cell."""

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)
