"""Sparse column of the op table: every (op, layout variant, dtype) against the dense result,
float64 gradcheck through the stored values, and masked-gradient semantics."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.sparse._payload import validate_coo, validate_csr

from .opdb import OP_DB
from .opdb._core import layout_variants

SPARSE_OPS = [i for i in OP_DB if set(i.layouts) - {st.strided}]


def _dense(x):
    if isinstance(x, st.Tensor):
        return (x.to_dense() if x.layout is not st.strided else x).detach().numpy()
    return np.asarray(x)


def _check_invariants(t):
    if not isinstance(t, st.Tensor) or t.layout is st.strided:
        return
    p = t._data
    if t.layout is st.sparse_coo:
        validate_coo(np, p.indices, p.values, p.shape, "result")
        if p.coalesced and p.nnz > 1:
            lin = np.ravel_multi_index(tuple(p.indices), p.shape[: p.sparse_dim])
            assert (np.diff(lin) > 0).all(), "result claims coalesced but indices are not sorted/unique"
    else:
        validate_csr(np, p.crow, p.col, p.values, p.shape, "result")


def _swap(args, pos, value):
    args = list(args)
    args[pos] = value
    return tuple(args)


def _cases():
    for info in SPARSE_OPS:
        for dtype in info.dtypes:
            yield pytest.param(info, dtype, id=f"{info.name}-{dtype.name}")


@pytest.mark.parametrize("info,dtype", list(_cases()))
def test_sparse_matches_dense(info, dtype):
    checked = 0
    for s in info.sample_inputs(dtype, False):
        for pos in info.sparse_args:
            base = s.args[pos]
            if not isinstance(base, st.Tensor) or base.ndim == 0:
                continue
            for vname, sp in layout_variants(base, info.layouts):
                if vname in info.unsupported_variants:
                    with pytest.raises((RuntimeError, NotImplementedError, ValueError),
                                       match=info.unsupported_variants[vname]):
                        info.op(*_swap(s.args, pos, sp), **s.kwargs)
                    checked += 1
                    continue
                got = info.op(*_swap(s.args, pos, sp), **s.kwargs)
                want = info.op(*_swap(s.args, pos, sp.to_dense()), **s.kwargs)
                _check_invariants(got)
                np.testing.assert_allclose(_dense(got).astype(np.float64), _dense(want).astype(np.float64),
                                           rtol=1e-5, atol=1e-5, err_msg=f"{info.name} {s.name} {vname}")
                checked += 1
    assert checked, f"{info.name}: no sparse sample was checked"


GRAD_CASES = [pytest.param(i, id=i.name) for i in SPARSE_OPS if i.supports_autograd]


@pytest.mark.parametrize("info", GRAD_CASES)
def test_sparse_gradcheck_and_masked_grad(info):
    checked = 0
    dt = st.float64 if st.float64 in info.dtypes or st.complex128 not in info.dtypes else st.complex128
    for si, s in enumerate(info.sample_inputs(dt, False)):
        fast = si > 0  # the full Jacobian on the first sample; random projections on the rest
        for pos in info.sparse_args:
            base = s.args[pos]
            if not isinstance(base, st.Tensor) or base.ndim == 0:
                continue
            for vname, sp in layout_variants(base, info.layouts):
                if sp._nnz() == 0 or vname in info.unsupported_variants:
                    continue  # nothing to differentiate / a rejected input (checked above)
                pattern = sp.detach()
                v0 = pattern._values().detach().clone().requires_grad_(True)

                def fn(v, _p=pattern, _s=s, _pos=pos):
                    x = st._ops.with_values(_p, v)
                    out = info.op(*_swap(_s.args, _pos, x), **_s.kwargs)
                    return out.to_dense() if out.layout is not st.strided else out

                assert st.autograd.gradcheck(fn, (v0,), atol=1e-5, fast_mode=fast), \
                    f"{info.name} {s.name} {vname}"
                # masked semantics: a sparse leaf's gradient is sparse with the leaf's pattern
                leaf = st._ops.with_values(pattern, pattern._values().detach().clone()).requires_grad_(True)
                out = info.op(*_swap(s.args, pos, leaf), **s.kwargs)
                (out.to_dense() if out.layout is not st.strided else out).sum().backward()
                g = leaf.grad
                assert g is not None and g.layout is leaf.layout, f"{info.name} {vname}: grad layout"
                assert g._nnz() <= max(leaf._nnz(), 1) * 2, f"{info.name} {vname}: grad not O(nnz)"
                mask = np.zeros(tuple(leaf.shape[: leaf.sparse_dim()]), dtype=bool)
                q = leaf.detach().to_sparse_coo()._data
                mask[tuple(q.indices)] = True
                gd = _dense(g)
                assert not np.any(gd[~_expand_mask(mask, gd)]), f"{info.name} {vname}: grad outside pattern"
                checked += 1
    assert checked, f"{info.name}: no sparse gradcheck ran"


def _expand_mask(mask, g):
    m = mask
    while m.ndim < g.ndim:
        m = m[..., None]
    return np.broadcast_to(m, g.shape)
