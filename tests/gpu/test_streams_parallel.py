"""With a CUDA device (a GPU, or the fake backend): streams and events, torch.accelerator,
nn.DataParallel over the devices, and the deterministic scatter-add under
``use_deterministic_algorithms(True)``."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import _xpcompat, nn

from ._util import CUDA_MARKS, FAKE, requires_two

pytestmark = CUDA_MARKS


def test_streams_events_and_timing(device):
    s = st.cuda.Stream()
    assert s.device == device and isinstance(s.cuda_stream, int)
    start, end = st.cuda.Event(enable_timing=True), st.cuda.Event(enable_timing=True)
    start.record()
    with st.cuda.stream(s):
        assert st.cuda.current_stream() == s
        y = (st.ones(1000, device=device) * 3).sum()
    assert st.cuda.current_stream() != s or FAKE
    s.synchronize()
    assert s.query()
    end.record(s)
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    assert y.item() == 3000.0
    st.cuda.current_stream().wait_stream(s)
    ev = s.record_event()
    ev.wait(st.cuda.default_stream())
    assert isinstance(st.cuda.default_stream().cuda_stream, int)
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        st.cuda.Event().elapsed_time(st.cuda.Event())
    with pytest.raises(RuntimeError, match="must be recorded"):
        st.cuda.Event(enable_timing=True).elapsed_time(end)


def test_accelerator_with_a_device(device):
    a = st.accelerator
    assert a.is_available() and a.current_accelerator() == st.device("cuda")
    assert a.device_count() == st.cuda.device_count() and a.current_device_index() == 0
    a.synchronize()
    with a.device_index(0):
        assert a.current_device_index() == 0
    assert isinstance(a.current_stream(), st.cuda.Stream)


def test_data_parallel_one_device_moves_the_module(device):
    dp = nn.DataParallel(nn.Linear(4, 2), device_ids=[0])
    assert dp.device_ids == [0] and dp.module.weight.device == device
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = st.randn(3, 4, device=device)
    np.testing.assert_array_equal(dp(x).cpu().detach().numpy(),
                                  dp.module(x).cpu().detach().numpy())


@requires_two
def test_data_parallel_over_two_devices_matches_one(device):
    st.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    ref = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    ref.load_state_dict(net.state_dict())
    dp = nn.DataParallel(net.to(device))
    assert dp.device_ids == list(range(st.cuda.device_count())) and dp.output_device == 0
    x = st.randn(7, 4)
    y = dp(x.to(device))
    assert y.device == device and y.shape == (7, 3)
    want = ref(x)
    np.testing.assert_allclose(y.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    y.square().sum().backward()
    want.square().sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert p.grad.device == device
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    par = nn.parallel
    parts = par.scatter((x.to(device), 3, {"k": x.to(device)}), [0, 1])
    assert [p[0].device.index for p in parts] == [0, 1] and parts[1][1] == 3
    assert parts[1][2]["k"].shape == (3, 4)
    out = par.gather([st.ones(2, device="cuda:0"), st.ones(3, device="cuda:1")], -1)
    assert out.device.type == "cpu" and out.shape == (5,)
    reps = par.replicate(net, [0, 1])
    assert reps[0][0].weight is net[0].weight and reps[1][0].weight.device.index == 1
    outs = par.parallel_apply(reps, [(x[:3].to("cuda:0"),), (x[3:].to("cuda:1"),)])
    assert [o.device.index for o in outs] == [0, 1]
    assert par.data_parallel(net, x.to(device), [0, 1]).shape == (7, 3)


@pytest.mark.parametrize("flag", ["use_deterministic_algorithms", "cudnn.deterministic"])
def test_deterministic_scatter_add_takes_the_sorted_path(device, monkeypatch, flag):
    calls = []
    real = _xpcompat.scatter_reduce

    def spy(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(_xpcompat, "scatter_reduce", spy)
    idx = st.randint(0, 50, (20000,), device=device)
    src = st.randn(20000, device=device)
    plain = st.zeros(50, device=device).scatter_add(0, idx, src)
    assert not calls  # CuPy's native add.at
    try:
        if flag == "cudnn.deterministic":
            st.backends.cudnn.deterministic = True
        else:
            st.use_deterministic_algorithms(True)
        runs = [st.zeros(50, device=device).scatter_add(0, idx, src).cpu().numpy()
                for _ in range(3)]
        grad_runs = []
        for _ in range(2):
            w = st.randn(50, 4, device=device).requires_grad_()
            emb = nn.functional.embedding(idx[:500], w)
            emb.sum().backward()
            grad_runs.append(w.grad.cpu().numpy())
    finally:
        st.use_deterministic_algorithms(False)
        st.backends.cudnn.deterministic = False
    assert "add" in calls
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])  # bit-identical
    np.testing.assert_allclose(runs[0], plain.cpu().numpy(), rtol=1e-4, atol=1e-4)
    want = np.zeros(50, np.float32)
    np.add.at(want, idx.cpu().numpy(), src.cpu().numpy())
    np.testing.assert_allclose(runs[0], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(grad_runs[0], grad_runs[1])


def test_deterministic_sparse_dense_products_repeat_bit_for_bit(device):
    st.manual_seed(0)
    i = st.stack([st.randint(0, 300, (20000,)), st.randint(0, 300, (20000,))])
    coo = st.sparse_coo_tensor(i, st.randn(20000), (300, 300)).to(device)
    csr = coo.coalesce().to_sparse_csr()
    x = st.randn(300, 48, device=device)
    ids = st.randint(0, 300, (4000,), device=device)
    offsets = st.arange(0, 4000, 40, device=device)
    plain = (csr @ x).cpu().numpy()
    st.use_deterministic_algorithms(True)
    try:
        outs = [((csr @ x).cpu().numpy(), st.sparse.mm(coo, x).cpu().numpy()) for _ in range(3)]
        grads = []
        for _ in range(2):
            w = x.detach().requires_grad_()
            bag = nn.functional.embedding_bag(ids, w, offsets, mode="sum")
            bag.square().sum().backward()
            grads.append((bag.detach().cpu().numpy(), w.grad.cpu().numpy()))
    finally:
        st.use_deterministic_algorithms(False)
    for a, b in outs[1:]:
        np.testing.assert_array_equal(a, outs[0][0])
        np.testing.assert_array_equal(b, outs[0][1])
    # other summation orders than cuSPARSE's (and the uncoalesced COO sums its duplicates apart)
    np.testing.assert_allclose(outs[0][0], plain, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(outs[0][1], plain, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


@pytest.mark.skipif(FAKE, reason="the complex cuSPARSE path exists on a real GPU only")
def test_complex_sparse_dense_product_alerts_under_the_flag(device):
    a = st.eye(4, dtype=st.complex64).to_sparse_csr().to(device)
    x = st.ones(4, 2, dtype=st.complex64, device=device)
    st.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
            a @ x
        st.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="does not have a deterministic implementation"):
            a @ x
    finally:
        st.use_deterministic_algorithms(False)


def test_deterministic_writes_through_repeated_indices(device):
    st.manual_seed(0)
    idx = st.randint(0, 20, (5000,))
    src = st.randn(5000)
    want_scatter = st.zeros(20).scatter(0, idx, src)
    want_put = st.zeros(20).index_put((idx,), src)
    want_copy = st.zeros(20, 3).index_copy(0, idx, src[:, None].expand(5000, 3).contiguous())
    want_set = st.zeros(20)
    want_set[idx] = src
    st.use_deterministic_algorithms(True)
    try:
        d_idx, d_src = idx.to(device), src.to(device)
        for _ in range(2):
            got_set = st.zeros(20, device=device)
            got_set[d_idx] = d_src
            for got, want in (
                (st.zeros(20, device=device).scatter(0, d_idx, d_src), want_scatter),
                (st.zeros(20, device=device).index_put((d_idx,), d_src), want_put),
                (st.zeros(20, 3, device=device).index_copy(
                    0, d_idx, d_src[:, None].expand(5000, 3).contiguous()), want_copy),
                (got_set, want_set),
            ):
                np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())  # the last wins
    finally:
        st.use_deterministic_algorithms(False)
