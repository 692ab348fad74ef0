"""The op table's bfloat16 column: each float32 row again on bfloat16 samples (tests/opdb/bfloat16.py)."""

import numpy as np
import pytest

import sparsetorch as st

from .opdb import OP_DB
from .opdb._core import layout_variants, to_numpy
from .opdb.bfloat16 import AS_TORCH, ATOL, RESULT_DTYPE, RTOL, SKIP, SKIP_PREFIXES

ROWS = [i for i in OP_DB if st.float32 in i.dtypes and i.ref is not None and i.name not in SKIP
        and not i.name.startswith(SKIP_PREFIXES)]
SWEPT = [pytest.param(i, id=i.name) for i in ROWS if i.name not in AS_TORCH]
TORCH_ROWS = [pytest.param(i, id=i.name) for i in ROWS if i.name in AS_TORCH]
SPARSE = [pytest.param(i, id=i.name) for i in ROWS
          if i.name not in AS_TORCH and set(i.layouts) - {st.strided}]


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _scale(*values):
    """The largest finite magnitude among tensors (inputs, reference results): a bfloat16
    rounding error is relative to it (a sum of products that cancels keeps the terms' error)."""
    m = 1.0
    for v in values:
        if isinstance(v, (list, tuple)):
            m = max(m, _scale(*v))
        elif isinstance(v, (st.Tensor, np.ndarray)):
            a = np.abs(np.asarray(to_numpy(v)))
            if a.dtype.kind in "fc" and a.size:
                m = max(m, float(np.max(np.where(np.isfinite(a), a, 0))))
    return m


def _check(info, got, want, where="", scale=1.0):
    got, want = _tuple(got), _tuple(want)
    assert len(got) == len(want), f"{info.name}{where}: {len(got)} results, reference {len(want)}"
    for g, w in zip(got, want):
        if isinstance(g, st.Tensor) and g.dtype.is_floating_point:
            expect = RESULT_DTYPE.get(info.name, st.bfloat16)
            assert expect is None or g.dtype is expect, f"{info.name}{where}: result {g.dtype}"
        ga, wa = np.asarray(to_numpy(g)), np.asarray(to_numpy(w))
        assert ga.shape == wa.shape, f"{info.name}{where}: shape {ga.shape} != {wa.shape}"
        if ga.dtype.kind in "fc" and wa.dtype.kind in "fc":
            np.testing.assert_allclose(ga.astype(np.complex128 if ga.dtype.kind == "c" else np.float64),
                                       wa, rtol=RTOL, atol=ATOL * scale, equal_nan=True,
                                       err_msg=f"{info.name}{where}")
        else:
            np.testing.assert_array_equal(ga, wa, err_msg=f"{info.name}{where}")


@pytest.mark.parametrize("info", SWEPT)
def test_bfloat16_matches_numpy(info):
    for s in info.sample_inputs(st.bfloat16, False):
        got = info.op(*s.args, **s.kwargs)
        want = info.ref(*to_numpy(s.args), **s.kwargs)
        _check(info, got, want, f" [{s.name}]", _scale(s.args, want))


def _to_torch(torch, x):
    if isinstance(x, st.Tensor):
        return torch.tensor(to_numpy(x)).to(getattr(torch, x.dtype.name))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(torch, v) for v in x)
    return getattr(torch, x.name) if isinstance(x, st.dtype) else x


def _torch_op(torch, name):
    f = torch
    for part in name.split("(")[0].split("."):
        f = getattr(f, part)
    return f


@pytest.mark.parametrize("info", TORCH_ROWS)
def test_bfloat16_as_torch(info):
    torch = pytest.importorskip("torch")
    fn = _torch_op(torch, info.name)
    for s in info.sample_inputs(st.bfloat16, False):
        try:
            want = fn(*_to_torch(torch, s.args), **{k: _to_torch(torch, v) for k, v in s.kwargs.items()})
        except (RuntimeError, NotImplementedError):
            with pytest.raises((RuntimeError, NotImplementedError), match=r"(?i)bfloat16|float|half"):
                info.op(*s.args, **s.kwargs)
            continue
        want = tuple(w.float().numpy() for w in _tuple(want))
        _check(info, info.op(*s.args, **s.kwargs), want, f" [{s.name}]", _scale(s.args, want))


@pytest.mark.parametrize("info", SPARSE)
def test_bfloat16_sparse_matches_dense(info):
    checked = 0
    for s in info.sample_inputs(st.bfloat16, False):
        for pos in info.sparse_args:
            base = s.args[pos]
            if not isinstance(base, st.Tensor) or base.ndim == 0:
                continue
            for vname, sp in layout_variants(base, info.layouts):
                if vname in info.unsupported_variants:
                    continue
                args = list(s.args)
                args[pos] = sp
                got = info.op(*args, **s.kwargs)
                args[pos] = sp.to_dense()
                # duplicates of an uncoalesced input are summed (rounded) in bfloat16 first
                _check(info, got, info.op(*args, **s.kwargs), f" [{s.name} {vname}]",
                       4 * _scale(s.args))
                checked += 1
    assert checked, f"{info.name}: no sparse sample was checked"
