"""Profiler and activation checkpointing on a CUDA device (real, or the fake backend)."""

import numpy as np

import sparsetorch as st
from sparsetorch.autograd import profiler
from sparsetorch.utils.checkpoint import checkpoint

from ._util import CUDA_MARKS

pytestmark = CUDA_MARKS


def _model(device):
    st.manual_seed(0)
    return st.nn.Sequential(st.nn.Linear(8, 8), st.nn.Dropout(0.5), st.nn.ReLU(),
                            st.nn.Linear(8, 2)).to(device)


def test_checkpoint_with_dropout_on_device(device):
    m = _model(device)
    x = st.randn(4, 8, device=device, requires_grad=True)
    for reentrant in (True, False):
        st.manual_seed(7)
        m(x).sum().backward()
        want = [p.grad.cpu().numpy().copy() for p in m.parameters()] + [x.grad.cpu().numpy()]
        m.zero_grad()
        x.grad = None
        st.manual_seed(7)
        y = checkpoint(m, x, use_reentrant=reentrant)
        assert y.device == x.device
        y.sum().backward()
        got = [p.grad.cpu().numpy() for p in m.parameters()] + [x.grad.cpu().numpy()]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        m.zero_grad()
        x.grad = None


def test_profiler_records_device_ops(device):
    m = _model(device)
    x = st.randn(4, 8, device=device)
    with profiler.profile(use_device="cuda", record_shapes=True) as prof:
        m(x).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::linear"] == 2 and counts["aten::relu"] == 1
    assert counts["torch::autograd::AccumulateGrad"] == 4
    assert "aten::addmm" in prof.key_averages().table(sort_by="cpu_time_total")
