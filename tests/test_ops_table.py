"""Generic tests driven by OP_DB: NumPy equivalence, variants, float64 gradcheck, bad inputs."""

import re

import numpy as np
import pytest

import sparsetorch as st


from .opdb import OP_DB
from .opdb._core import tensors_in, to_numpy


def _cases(field=None):
    for info in OP_DB:
        if field is not None and not getattr(info, field):
            continue
        yield info


def _param(info, dtype):
    return pytest.param(info, dtype, id=f"{info.name}-{dtype.name}")


EQUIV = [_param(i, d) for i in _cases() for d in i.dtypes if i.ref is not None]
GRAD = [pytest.param(i, id=i.name) for i in _cases("supports_autograd")]
ERRORS = [pytest.param(i, id=i.name) for i in _cases("error_inputs")]
METHODS = [_param(i, d) for i in _cases("method") for d in i.dtypes[:1]]
INPLACE = [_param(i, d) for i in _cases("inplace") for d in i.dtypes[:1]]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _check_result(info, got, want, dtype, inputs_dtypes):
    got_t = _as_tuple(got)
    want_t = _as_tuple(want)
    assert len(got_t) == len(want_t), f"{info.name}: {len(got_t)} results, reference has {len(want_t)}"
    for g, w in zip(got_t, want_t):
        if isinstance(g, st.Tensor):
            if info.keeps_float32 and dtype is st.float32:
                assert g.dtype is not st.float64, f"{info.name}: float64 leaked from float32 input"
            ga = g.detach().numpy()
        else:
            ga = np.asarray(g)
        wa = np.asarray(w)
        assert ga.shape == wa.shape, f"{info.name}: shape {ga.shape} != reference {wa.shape}"
        if wa.dtype == bool or ga.dtype == bool:
            np.testing.assert_array_equal(ga, wa)
        else:
            tol = (1e-3, 1e-3) if dtype is st.float16 else (info.rtol * 10 if dtype is st.float32 else 1e-7, info.atol)
            np.testing.assert_allclose(ga.astype(np.float64) if ga.dtype.kind != "c" else ga,
                                       wa.astype(np.float64) if wa.dtype.kind != "c" else wa,
                                       rtol=max(tol[0], 1e-6 if dtype is st.float32 else 1e-7),
                                       atol=tol[1], equal_nan=True)


@pytest.mark.parametrize("info,dtype", EQUIV)
def test_matches_numpy(info, dtype):
    for s in info.sample_inputs(dtype, False):
        got = info.op(*s.args, **s.kwargs)
        want = info.ref(*to_numpy(s.args), **s.kwargs)
        _check_result(info, got, want, dtype, None)


@pytest.mark.parametrize("info,dtype", METHODS)
def test_method_variant(info, dtype):
    for s in info.sample_inputs(dtype, False):
        a = info.op(*s.args, **s.kwargs)
        b = getattr(s.args[0], info.method)(*s.args[1:], **s.kwargs)
        for x, y in zip(_as_tuple(a), _as_tuple(b)):
            np.testing.assert_array_equal(np.asarray(x.detach().numpy() if isinstance(x, st.Tensor) else x),
                                          np.asarray(y.detach().numpy() if isinstance(y, st.Tensor) else y))


@pytest.mark.parametrize("info,dtype", INPLACE)
def test_inplace_variant(info, dtype):
    for s in info.sample_inputs(dtype, False):
        want = info.op(*s.args, **s.kwargs)
        if tuple(want.shape) != tuple(s.args[0].shape) or not st.can_cast(want.dtype, s.args[0].dtype):
            continue  # broadcasting / type-promoting samples can't be done in place
        x = s.args[0].clone()
        v0 = x._version
        r = getattr(x, info.inplace)(*s.args[1:], **s.kwargs)
        assert r is x, f"{info.inplace} must return self"
        assert x._version > v0, f"{info.inplace} must bump the version counter"
        np.testing.assert_allclose(x.numpy().astype(np.float64), want.numpy().astype(np.float64),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("info", GRAD)
def test_gradcheck(info):
    from sparsetorch.autograd import gradcheck

    dt = st.float64 if st.float64 in info.dtypes or st.complex128 not in info.dtypes else st.complex128
    for s in info.sample_inputs(dt, True):
        tensors = [t for t in tensors_in(s.args) if t.requires_grad]
        if not tensors:
            continue

        def fn(*ts, _s=s):
            it = iter(ts)
            args = _replace(_s.args, it)
            return info.op(*args, **_s.kwargs)

        assert gradcheck(fn, tuple(tensors), atol=info.grad_atol), f"{info.name} {s.name}"


def _replace(args, it):
    out = []
    for a in args:
        if isinstance(a, st.Tensor) and a.requires_grad:
            out.append(next(it))
        elif isinstance(a, (list, tuple)):
            out.append(type(a)(_replace(a, it)))
        else:
            out.append(a)
    return tuple(out)


@pytest.mark.parametrize("info", ERRORS)
def test_bad_inputs(info):
    for e in info.error_inputs():
        with pytest.raises(e.error) as exc:
            info.op(*e.sample.args, **e.sample.kwargs)
        assert re.search(e.match, str(exc.value)), f"{info.name}: message {str(exc.value)!r} !~ {e.match!r}"
        assert "numpy" not in type(exc.value).__module__
