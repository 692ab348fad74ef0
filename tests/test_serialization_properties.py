"""Property tests (hypothesis): random tensors of every layout and dtype, random nested
containers, round-trip bit for bit through sparsetorch.save / load."""

import io

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _dtype as D
from sparsetorch.serialization import load, save

def _from_np(a):
    """A tensor on ``a``'s buffer for every dtype (``from_numpy`` refuses ml_dtypes' bfloat16)."""
    from sparsetorch import _dtype
    from sparsetorch._dispatch import wrap

    return wrap(a, _dtype._FROM_NP[a.dtype], st.device("cpu"), st.strided)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as hs

from .test_serialization import assert_same


def roundtrip(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


@hs.composite
def tensors(draw):
    d = draw(hs.sampled_from(list(D.ALL)))
    shape = tuple(draw(hs.lists(hs.integers(0, 4), min_size=0, max_size=3)))
    n = int(np.prod(shape)) if shape else 1
    raw = draw(hs.binary(min_size=n * d.itemsize, max_size=n * d.itemsize))
    a = np.frombuffer(raw, d.np).copy() if d is not D.bool else np.frombuffer(raw, np.uint8) % 2 == 1
    x = _from_np(a.reshape(shape))
    kind = draw(hs.sampled_from(["dense", "coo", "uncoalesced", "csr"]))
    if kind == "dense" or x.ndim == 0:
        return x
    if kind == "csr" and x.ndim == 2:
        return x.to_sparse_csr()
    s = x.to_sparse(draw(hs.integers(1, x.ndim)))  # hybrid when fewer sparse dims
    if kind == "uncoalesced" and s._nnz():
        # duplicate every entry: same pattern twice, values split
        idx, vals = s._indices(), s._values()
        s = st.sparse_coo_tensor(st.cat([idx, idx], 1), st.cat([vals, vals]), s.shape)
    return s


@settings(max_examples=150, deadline=None)
@given(tensors())
def test_random_tensor_roundtrip_bitwise(x):
    assert_same(roundtrip(x), x)


leaves = hs.one_of(hs.none(), hs.booleans(), hs.integers(), hs.floats(allow_nan=True),
                   hs.complex_numbers(allow_nan=True), hs.text(max_size=5), hs.binary(max_size=5))
trees = hs.recursive(leaves, lambda c: hs.one_of(
    hs.lists(c, max_size=3), hs.tuples(c, c),
    hs.dictionaries(hs.one_of(hs.text(max_size=3), hs.integers()), c, max_size=3)), max_leaves=12)


def _same(a, b):
    """Equality where floats compare by bits (NaN payloads, -0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    if isinstance(a, complex):
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=150, deadline=None)
@given(trees)
def test_random_container_roundtrip(obj):
    assert _same(roundtrip(obj), obj)
