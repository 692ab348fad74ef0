"""Property tests over the op table's sparse column: for random shapes (where the op takes any
shape), densities (empty, sparse, fully dense), dtypes, duplicate patterns and layouts, every op
gives the same answer on a sparse input as on its dense twin -- also after ``coalesce()`` and
after a ``save``/``load`` round trip of the sparse input. ``test_zz_examples_run`` reports the
number of examples."""

import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import sparsetorch as st

from ..opdb import OP_DB

SPARSE_OPS = [i for i in OP_DB if set(i.layouts) - {st.strided}]
EXAMPLES = int(os.environ.get("SPARSETORCH_PROPERTY_EXAMPLES", "400"))  # CI: ~20 s
_RUN = {"examples": 0, "compared": 0, "rejected_by_design": 0}


def _tensor_args(s):
    return [a for a in s.args if isinstance(a, st.Tensor)]


def _shape_free(info):
    """Ops whose samples are ``op(x)`` alone (pointwise and friends): any shape will do."""
    samples = info.sample_inputs(info.dtypes[0], False)
    names = {"abs", "neg", "sign", "sgn", "square", "relu", "ceil", "floor", "trunc", "frac", "sqrt",
             "expm1", "log1p", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "erf",
             "erfinv", "deg2rad", "rad2deg", "isnan", "isinf", "isposinf", "isneginf", "signbit",
             "to_dense", "to_sparse", "to_sparse_coo", "sparse.clone", "coalesce", "nan_to_num"}
    return info.name in names and all(len(s.args) == 1 and not s.kwargs for s in samples)


SHAPE_FREE = {i.name for i in SPARSE_OPS if _shape_free(i)}


def _variant(rng, dense_np, dtype, layout, dup, hybrid):
    """The sparse twin of ``dense_np``: COO (maybe hybrid, maybe with duplicates in any order)
    or CSR; returns (name as in OpInfo.unsupported_variants, tensor)."""
    d = st.tensor(dense_np, dtype=dtype)
    if layout == "csr":
        return ("csr-empty" if not dense_np.any() else "csr"), d.to_sparse_csr()
    if hybrid and d.ndim >= 2:
        return "coo-hybrid", d.to_sparse(d.ndim - 1)
    s = d.to_sparse().coalesce()
    if not dup or s._nnz() == 0:
        return ("coo-empty" if s._nnz() == 0 else "coo"), s
    idx = s.indices().numpy()
    val = s.values().numpy()
    pick = rng.random(idx.shape[1]) < (1.0 if dup == "all" else 0.5)
    if not pick.any():
        pick[0] = True
    if dtype.is_floating_point:  # a split that sums back exactly: v = v/2 + v/2 (binary floats)
        v1 = val.copy()
        v1[pick] = val[pick] / 2
        v2 = val[pick] / 2
    else:  # integers and bools: duplicate a zero (bool: a False) so the sum is unchanged
        v1, v2 = val, np.zeros_like(val[pick])
    i2 = np.concatenate([idx, idx[:, pick]], 1)
    v2 = np.concatenate([v1, v2], 0)
    order = rng.permutation(i2.shape[1])
    u = st.sparse_coo_tensor(st.tensor(i2[:, order]), st.tensor(v2[order], dtype=dtype), s.shape)
    return "coo-uncoalesced", u


def _dense_np(x):
    if isinstance(x, st.Tensor):
        return (x.to_dense() if x.layout is not st.strided else x).detach().double().numpy() \
            if x.dtype.is_floating_point else (x.to_dense() if x.layout is not st.strided else x).numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_dense_np(v) for v in x)
    return np.asarray(x)


def _same(got, want, info, what, dtype):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), what
        for g, w in zip(got, want):
            _same(g, w, info, what, dtype)
        return
    g, w = _dense_np(got), _dense_np(want)
    assert g.shape == w.shape, f"{info.name} {what}: shape {g.shape} != {w.shape}"
    tol = 1e-4 if dtype is st.float32 else 1e-9
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                               equal_nan=True, err_msg=f"{info.name} {what}")


def _roundtrip(t):
    b = io.BytesIO()
    st.save(t, b)
    b.seek(0)
    r = st.load(b)
    assert r.layout is t.layout and r.dtype is t.dtype and tuple(r.shape) == tuple(t.shape)
    if t.layout is st.sparse_coo:
        np.testing.assert_array_equal(r._indices().numpy(), t._indices().numpy())
        assert r.is_coalesced() == t.is_coalesced()
    return r


@hs.composite
def _cases(draw):
    info = draw(hs.sampled_from(SPARSE_OPS))
    dtype = draw(hs.sampled_from(info.dtypes))
    samples = info.sample_inputs(dtype, False)
    sample = draw(hs.sampled_from(samples))
    pos = draw(hs.sampled_from(info.sparse_args))
    shape = None
    if info.name in SHAPE_FREE:
        shape = tuple(draw(hs.lists(hs.integers(0, 4), min_size=1, max_size=3)))
    density = draw(hs.sampled_from([0.0, 1.0, 0.3, 0.6]))
    layouts = [n for n, lay in (("coo", st.sparse_coo), ("csr", st.sparse_csr)) if lay in info.layouts]
    layout = draw(hs.sampled_from(layouts))
    dup = draw(hs.sampled_from([None, "some", "all"]))
    hybrid = draw(hs.booleans()) and dup is None
    seed = draw(hs.integers(0, 2**31 - 1))
    return info, dtype, sample, pos, shape, density, layout, dup, hybrid, seed


@settings(max_examples=EXAMPLES, deadline=None, derandomize="SPARSETORCH_PROPERTY_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_cases())
def test_sparse_equals_dense(case):
    info, dtype, sample, pos, shape, density, layout, dup, hybrid, seed = case
    _RUN["examples"] += 1
    rng = np.random.default_rng(seed)
    base = sample.args[pos]
    if not isinstance(base, st.Tensor) or base.ndim == 0:
        return
    shape = shape if shape is not None else tuple(base.shape)
    if layout == "csr" and len(shape) != 2:
        layout = "coo"
        if st.sparse_coo not in info.layouts:
            return
    vals = base.detach().numpy() if shape == tuple(base.shape) else rng.uniform(-3, 3, shape)
    if hybrid and len(shape) >= 2:
        # whole slices stored or not, and no zeros inside a stored slice: a stored zero is a
        # specified value (it takes part in sparse.softmax, amax, ...), an absent one is not
        keep = np.broadcast_to((rng.random(shape[:-1]) < density)[..., None], shape)
        vals = np.where(vals == 0, 1, vals)
    else:
        keep = rng.random(shape) < density
    vals = np.where(keep, vals, 0).astype(dtype.np)
    if density == 1.0:
        vals = np.where(vals == 0, 1, vals).astype(dtype.np)  # fully dense: every entry stored
    name, sp = _variant(rng, vals, dtype, layout, dup, hybrid)
    args = list(sample.args)
    args[pos] = sp
    dense_args = list(sample.args)
    dense_args[pos] = st.tensor(vals, dtype=dtype)
    if name in info.unsupported_variants:
        with pytest.raises((RuntimeError, NotImplementedError, ValueError), match=info.unsupported_variants[name]):
            info.op(*args, **sample.kwargs)
        _RUN["rejected_by_design"] += 1
        return
    want = info.op(*dense_args, **sample.kwargs)
    _same(info.op(*args, **sample.kwargs), want, info, name, dtype)
    if sp.layout is st.sparse_coo:
        args[pos] = sp.coalesce()
        _same(info.op(*args, **sample.kwargs), want, info, name + " coalesced", dtype)
    if hasattr(st, "save"):
        args[pos] = _roundtrip(sp)
        _same(info.op(*args, **sample.kwargs), want, info, name + " after save/load", dtype)
    _RUN["compared"] += 1


def test_zz_examples_run(capsys):
    # runs after the property test (file order): report what it covered
    with capsys.disabled():
        print(f"\n[reliability] property tests: {_RUN['examples']} examples over {len(SPARSE_OPS)} "
              f"sparse ops ({_RUN['compared']} compared sparse vs dense, coalesced and after "
              f"save/load; {_RUN['rejected_by_design']} rejected by design)")
    assert _RUN["examples"] == 0 or _RUN["compared"] > _RUN["examples"] // 4
