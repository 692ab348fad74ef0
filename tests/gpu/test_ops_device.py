"""The op table (tests/opdb) on CUDA: every row's samples run on the device must give the CPU's
results (values, dtype, shape; sparse layout variants included), land on the device, and give
the CPU's gradients. On a real GPU the whole table runs (all dtypes); on the fake backend a
slice (first dtype, every op, every third sample's gradient) keeps CPU-only CI fast."""

import numpy as np
import pytest

import sparsetorch as st

from ..opdb import OP_DB
from ..opdb._core import layout_variants
from ._util import CUDA_MARKS, FAKE, SLICE, assert_close, assert_on, tensors, to_device

pytestmark = CUDA_MARKS

# ops whose samples draw random numbers or carry no tensor input (creation): compared by
# shape/dtype/device only, or given device= explicitly
_CREATION = {"arange", "eye", "full", "linspace", "ones", "zeros"}


def _dtypes(info):
    return info.dtypes[:1] if SLICE else info.dtypes


# ops of host tensors only: pin_memory pins CPU tensors (a device tensor raises, the row's error
# inputs check it; tests/gpu/test_cupy_behaviours.py checks the pinned memory)
_HOST_ONLY = {"pin_memory"}
_ROWS = [i for i in OP_DB if i.name not in _HOST_ONLY]
CASES = [pytest.param(i, d, id=f"{i.name}-{d.name}") for i in _ROWS for d in _dtypes(i)]
GRAD_CASES = [pytest.param(i, id=i.name) for i in _ROWS if i.supports_autograd]
SPARSE_CASES = [pytest.param(i, id=i.name) for i in _ROWS if set(i.layouts) - {st.strided}]


def _run(info, s, dev):
    memo = {}  # tensors in the keyword arguments (prepend=, weights=, out=...) move too
    args, kwargs = to_device(s.args, dev, memo), to_device(dict(s.kwargs), dev, memo)
    if info.name in _CREATION and not tensors(args):
        kwargs["device"] = dev
    return info.op(*args, **kwargs), args


def _tol(dtype):
    return (1e-3, 1e-3) if dtype is st.float16 else (1e-5, 1e-5)


# samples whose result torch itself leaves undefined on CUDA: a non-accumulating write through
# repeated indices (``x[[0, 0]] = v``: which write lands is up to the GPU's thread order, as in
# torch's index_put_; the CPU's last-write-wins is checked by the CPU suite)
_UNDEFINED_ON_GPU = {("setitem", "8"), ("setitem", "10")}


@pytest.mark.parametrize("info,dtype", CASES)
def test_op_on_device_matches_cpu(info, dtype, device):
    for s in info.sample_inputs(dtype, False):
        if not FAKE and (info.name, s.name) in _UNDEFINED_ON_GPU:
            continue
        want = info.op(*s.args, **s.kwargs)
        got, args = _run(info, s, device)
        if tensors(args) or info.name in _CREATION:
            assert_on(got, device)
        rtol, atol = _tol(dtype)
        assert_close(got, want, rtol, atol, msg=f"{info.name} {s.name}")


def _loss(out, weights):
    total = None
    for t, w in zip(tensors(out), weights):
        if not (t.dtype.is_floating_point or t.dtype.is_complex) or not t.requires_grad:
            continue
        d = t.to_dense() if t.layout is not st.strided else t
        term = (d * w.to(d.device, d.dtype)).sum()
        if term.dtype.is_complex:  # a real loss (its gradient is what grad_output=1 gave)
            term = term.real
        total = term if total is None else total + term
    return total


@pytest.mark.parametrize("info", GRAD_CASES)
def test_gradients_on_device_match_cpu(info, device):
    checked = 0
    # complex-only rows (real, imag, complex, ...) run in complex128, as the CPU table's gradcheck
    dt = st.float64 if st.float64 in info.dtypes or st.complex128 not in info.dtypes else st.complex128
    for k, s in enumerate(info.sample_inputs(dt, True)):
        if SLICE and checked and k % 3:
            continue
        leaves = [t for t in tensors(s.args) if t.requires_grad]
        if not leaves:
            continue
        out_c = info.op(*s.args, **s.kwargs)
        rng = np.random.default_rng(k)
        weights = [st.tensor(rng.standard_normal(tuple(t.shape))) for t in tensors(out_c)]
        loss_c = _loss(out_c, weights)
        if loss_c is None:
            continue
        out_d, args_d = _run(info, s, device)
        leaves_d = [t for t in tensors(args_d) if t.requires_grad]
        g_c = st.autograd.grad(loss_c, leaves, allow_unused=True)
        g_d = st.autograd.grad(_loss(out_d, weights), leaves_d, allow_unused=True)
        for a, b in zip(g_d, g_c):
            assert (a is None) == (b is None), f"{info.name} {s.name}: gradient presence differs"
            if a is not None:
                assert a.device == device, f"{info.name}: gradient on {a.device}"
                assert_close(a, b, 1e-6, 1e-8, msg=f"{info.name} {s.name} grad")
        checked += 1
    if checked == 0:
        pytest.skip(f"{info.name}: no sample gives a differentiable floating output to compare")


@pytest.mark.parametrize("info", SPARSE_CASES)
def test_sparse_variants_on_device_match_cpu(info, device):
    dtype = info.dtypes[0]
    checked = 0
    for s in info.sample_inputs(dtype, False):
        for pos in info.sparse_args:
            base = s.args[pos]
            if not isinstance(base, st.Tensor) or base.ndim == 0:
                continue
            for vname, sp in layout_variants(base, info.layouts):
                if vname in info.unsupported_variants:
                    continue
                args = list(s.args)
                args[pos] = sp
                want = info.op(*args, **s.kwargs)
                memo = {}
                got = info.op(*to_device(tuple(args), device, memo),
                              **to_device(dict(s.kwargs), device, memo))
                assert_on(got, device)
                for g, w in zip(tensors(got), tensors(want)):
                    assert g.layout is w.layout, f"{info.name} {vname}: layout {g.layout}"
                assert_close(got, want, 1e-5, 1e-5, msg=f"{info.name} {s.name} {vname}")
                checked += 1
    assert checked, f"{info.name}: no sparse sample was checked"
