"""torch.ops.quantized's 8-bit and 4-bit row-wise embedding bags (dlrm's
--quantize-emb-with-bit=8 / 4): bit-for-bit parity with torch's prepack and bag sums."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch._ops._aten import ops

torch = pytest.importorskip("torch")


def _table(rows=50, d=16, seed=0):
    w = np.random.default_rng(seed).uniform(-1, 1, (rows, d)).astype(np.float32)
    w[3] = 0.25  # a constant row: range 0
    return w


@pytest.mark.parametrize("bits,shape", [("byte", (50, 16)), ("byte", (7, 3)), ("byte", (2, 5, 8)),
                                        ("4bit", (50, 16)), ("4bit", (7, 2)), ("4bit", (9, 64))])
def test_prepack_matches_torch(bits, shape):
    w = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    w[..., 1, :] = 0.7  # a constant row
    name = f"embedding_bag_{bits}_prepack"
    got = getattr(ops.quantized, name)(st.tensor(w))
    want = getattr(torch.ops.quantized, name)(torch.tensor(w))
    assert got.dtype is st.uint8 and np.array_equal(got.numpy(), want.numpy())


def _both(w, ids, offsets, bits="byte", **kw):
    qs = getattr(ops.quantized, f"embedding_bag_{bits}_prepack")(st.tensor(w))
    qt = getattr(torch.ops.quantized, f"embedding_bag_{bits}_prepack")(torch.tensor(w))
    conv = {k: (None if v is None else v if isinstance(v, bool) else (st.tensor(v), torch.tensor(v)))
            for k, v in kw.items()}
    a = getattr(ops.quantized, f"embedding_bag_{bits}_rowwise_offsets")(
        qs, st.tensor(ids), None if offsets is None else st.tensor(offsets),
        **{k: v[0] if isinstance(v, tuple) else v for k, v in conv.items()})
    b = getattr(torch.ops.quantized, f"embedding_bag_{bits}_rowwise_offsets")(
        qt, torch.tensor(ids), None if offsets is None else torch.tensor(offsets),
        **{k: v[1] if isinstance(v, tuple) else v for k, v in conv.items()})
    return a, b


@pytest.mark.parametrize("bits", ["byte", "4bit"])
def test_bag_sums_match_torch_bit_for_bit(bits):
    r = np.random.default_rng(2)
    w = _table()
    ids = r.integers(0, 50, 400)
    offsets = np.sort(r.choice(np.arange(1, 400), 30, replace=False))
    offsets = np.concatenate([[0], offsets, [400, 400]])  # empty bags at the end
    for kw in ({}, {"per_sample_weights": r.random(400).astype(np.float32)}):
        a, b = _both(w, ids, offsets, bits, **kw)
        assert a.dtype is st.float32 and np.array_equal(a.numpy(), b.numpy())
    a, b = _both(w, ids.astype(np.int32), offsets.astype(np.int32), bits)
    assert np.array_equal(a.numpy(), b.numpy())
    a, b = _both(w, ids, offsets[:-1], bits, include_last_offset=True)
    assert a.shape == b.shape and np.array_equal(a.numpy(), b.numpy())
    a, b = _both(w, ids.reshape(40, 10), None, bits)  # a 2-D input: one bag per row
    assert np.array_equal(a.numpy(), b.numpy())


def test_dlrm_quantize_embedding_path():
    # dlrm_s_pytorch.quantize_embedding / apply_emb: prepack each table, look up with offsets
    w = _table(rows=4, d=16)
    q = ops.quantized.embedding_bag_byte_prepack(st.tensor(w))
    assert q.element_size() * q.nelement() == 4 * 24
    out = ops.quantized.embedding_bag_byte_rowwise_offsets(
        q, st.tensor([0, 1, 3, 2]), st.tensor([0, 2]), per_sample_weights=None)
    deq = np.rint((w - w.min(1, keepdims=True)) * (255 / (np.ptp(w, 1, keepdims=True) + 1e-8)))
    assert np.allclose(out.numpy(), [w[[0, 1]].sum(0), w[[3, 2]].sum(0)], atol=0.02)
    assert deq.max() <= 255


def test_errors():
    q = ops.quantized.embedding_bag_byte_prepack(st.rand(5, 4))
    with pytest.raises(RuntimeError, match="index out of range"):
        ops.quantized.embedding_bag_byte_rowwise_offsets(q, st.tensor([5]), st.tensor([0]))
    with pytest.raises(RuntimeError, match="uint8"):
        ops.quantized.embedding_bag_byte_rowwise_offsets(st.rand(5, 12), st.tensor([0]),
                                                          st.tensor([0]))
    with pytest.raises(NotImplementedError, match="mode=0"):
        ops.quantized.embedding_bag_byte_rowwise_offsets(q, st.tensor([0]), st.tensor([0]), mode=1)
    for lib in (st, torch):
        with pytest.raises(RuntimeError, match="columns a multiple of 2"):
            getattr(ops if lib is st else torch.ops, "quantized").embedding_bag_4bit_prepack(
                lib.rand(3, 5))
    with pytest.raises(AttributeError, match="has no attribute 'embedding_bag_2bit_prepack'"):
        ops.quantized.embedding_bag_2bit_prepack
