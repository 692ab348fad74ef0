"""nn.utils.rnn (PackedSequence, pack/pad helpers) and packed input to RNN/LSTM/GRU: torch parity
of values and gradients, unsorted lengths, errors."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import nn
from sparsetorch.nn.utils import rnn as R

torch = pytest.importorskip("torch")
TR = torch.nn.utils.rnn


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (st.tensor(a, requires_grad=True),
            torch.tensor(a, requires_grad=True))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _same_packed(p, q):
    _close(p.data, q.data)
    assert p.batch_sizes.tolist() == q.batch_sizes.tolist()
    assert str(p.batch_sizes.dtype) == "sparsetorch.int64" and p.batch_sizes.device.type == "cpu"
    for a, b in ((p.sorted_indices, q.sorted_indices), (p.unsorted_indices, q.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce", [([4, 3, 3, 1], True), ([1, 4, 2, 4], False)])
def test_pack_pad_roundtrip_parity(batch_first, lengths, enforce):
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    xs, xt = _pair(shape)
    p = R.pack_padded_sequence(xs, lengths, batch_first=batch_first, enforce_sorted=enforce)
    q = TR.pack_padded_sequence(xt, torch.tensor(lengths), batch_first=batch_first,
                                enforce_sorted=enforce)
    assert type(p).__name__ == "PackedSequence" and isinstance(p, tuple)
    _same_packed(p, q)
    for kw in ({}, {"padding_value": -2.5, "total_length": 7}):
        ps, ls = R.pad_packed_sequence(p, batch_first=batch_first, **kw)
        pt, lt = TR.pad_packed_sequence(q, batch_first=batch_first, **kw)
        _close(ps, pt)
        assert ls.tolist() == lt.tolist() and str(ls.dtype) == "sparsetorch.int64"
    w = np.random.default_rng(1).standard_normal(tuple(pt.shape))
    (ps * st.tensor(w)).sum().backward()
    (pt * torch.tensor(w)).sum().backward()
    _close(xs.grad, xt.grad)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_and_friends(side, batch_first):
    pairs = [_pair((n, 2), seed=n) for n in (2, 5, 3)]
    ps = R.pad_sequence([a for a, _ in pairs], batch_first, 1.5, side)
    pt = TR.pad_sequence([b for _, b in pairs], batch_first, 1.5, side)
    _close(ps, pt)
    ps.pow(2).sum().backward()
    pt.pow(2).sum().backward()
    for a, b in pairs:
        _close(a.grad, b.grad)
    if side == "right":
        un = R.unpad_sequence(ps, st.tensor([2, 5, 3]), batch_first=batch_first)
        ut = TR.unpad_sequence(pt, torch.tensor([2, 5, 3]), batch_first=batch_first)
        assert len(un) == 3
        for a, b in zip(un, ut):
            _close(a, b)


def test_pack_sequence_unpack_sequence():
    seqs = [_pair((n, 3), seed=n) for n in (3, 5, 1)]
    p = R.pack_sequence([a for a, _ in seqs], enforce_sorted=False)
    q = TR.pack_sequence([b for _, b in seqs], enforce_sorted=False)
    _same_packed(p, q)
    for a, b in zip(R.unpack_sequence(p), TR.unpack_sequence(q)):
        _close(a, b)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        R.pack_sequence([a for a, _ in seqs])


def test_packed_sequence_api():
    p = R.pack_sequence([st.ones(3, 2), st.ones(2, 2)], enforce_sorted=False)
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert p.is_cuda is False
    assert p.to(st.float32) is p
    d = p.double()
    assert d.data.dtype == st.float64 and d.batch_sizes is p.batch_sizes
    assert d.sorted_indices.tolist() == [0, 1] and d.unsorted_indices.tolist() == [0, 1]
    assert p.cpu() is p
    q = R.PackedSequence(p.data, p.batch_sizes, st.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    data, sizes, *_ = p
    assert R.PackedSequence((data, sizes)).batch_sizes is sizes
    assert R.invert_permutation(st.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert R.invert_permutation(None) is None


def test_errors_match_torch():
    x = st.zeros(4, 3, 2)
    cases = [
        (lambda m: m.pack_padded_sequence, ([1, 3, 2],), {}, RuntimeError, "sorted in decreasing"),
        (lambda m: m.pack_padded_sequence, ([3, 2],), {}, RuntimeError, r"len\(lengths\)"),
        (lambda m: m.pack_padded_sequence, ([3, 2, 0],), {"enforce_sorted": False},
         RuntimeError, "greater than 0"),
    ]
    for get, args, kw, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            get(R)(x, *args, **kw)
        with pytest.raises(exc, match=msg):
            get(TR)(torch.zeros(4, 3, 2), *args, **kw)
    with pytest.raises(RuntimeError, match="1D CPU int64 tensor, but got 2D cpu Long"):
        R.pack_padded_sequence(x, st.tensor([[3, 2, 1]]))
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        R.pad_packed_sequence(R.pack_padded_sequence(x, [3, 2, 1]), total_length=2)
    with pytest.raises(RuntimeError, match="one of left or right, but got mid"):
        R.pad_sequence([st.ones(2)], padding_side="mid")
    with pytest.raises(RuntimeError, match="Expected iterable"):
        R.pad_sequence(5)
    with pytest.raises(RuntimeError, match="empty list"):
        R.pad_sequence([])


def _copy_params(src, dst):
    with st.no_grad():
        for (n1, a), (n2, b) in zip(dst.named_parameters(), src.named_parameters()):
            assert n1 == n2
            a.copy_(st.tensor(b.detach().numpy()))


@pytest.mark.parametrize("kind,kw", [
    ("LSTM", {}), ("GRU", {}), ("RNN", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
])
@pytest.mark.parametrize("enforce", [True, False])
def test_rnn_packed_parity(kind, kw, enforce):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kw)
    sm = getattr(nn, kind)(3, 4, dtype=st.float64, **kw)
    _copy_params(tm, sm)
    bf = kw.get("batch_first", False)
    lengths = [5, 4, 2, 1] if enforce else [2, 5, 1, 4]
    xs, xt = _pair((4, 5, 3) if bf else (5, 4, 3), seed=3)
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    hs, ht = _pair((layers * dirs, 4, kw.get("proj_size") or 4), seed=4)
    if kind == "LSTM":
        cs, ct = _pair((layers * dirs, 4, 4), seed=5)
        hs, ht = (hs, cs), (ht, ct)
    ps = R.pack_padded_sequence(xs, lengths, batch_first=bf, enforce_sorted=enforce)
    pt = TR.pack_padded_sequence(xt, lengths, batch_first=bf, enforce_sorted=enforce)
    os_, hns = sm(ps, hs)
    ot, hnt = tm(pt, ht)
    assert isinstance(os_, R.PackedSequence)
    _same_packed(os_, ot)
    hns = hns if kind == "LSTM" else (hns,)
    hnt = hnt if kind == "LSTM" else (hnt,)
    for a, b in zip(hns, hnt):
        _close(a, b)
    outs, _ = R.pad_packed_sequence(os_, batch_first=bf)
    outt, _ = TR.pad_packed_sequence(ot, batch_first=bf)
    _close(outs, outt)
    loss_s = outs.pow(2).sum() + sum(h.sin().sum() for h in hns)
    loss_t = outt.pow(2).sum() + sum(h.sin().sum() for h in hnt)
    loss_s.backward()
    loss_t.backward()
    _close(xs.grad, xt.grad)
    for a, b in zip(hs if kind == "LSTM" else (hs,), ht if kind == "LSTM" else (ht,)):
        _close(a.grad, b.grad)
    for (n, a), (_, b) in zip(sm.named_parameters(), tm.named_parameters()):
        _close(a.grad, b.grad)


def test_rnn_packed_no_hx_and_bad_input_size():
    m = nn.GRU(3, 2)
    p = R.pack_sequence([st.ones(3, 3), st.ones(1, 3)])
    out, h = m(p)
    assert tuple(out.data.shape) == (4, 2) and tuple(h.shape) == (1, 2, 2)
    with pytest.raises(RuntimeError, match="input_size"):
        m(R.pack_sequence([st.ones(3, 2)]))
