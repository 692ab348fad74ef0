"""torch.amp against torch: autocast's output dtypes per op, regions (nested, disabled,
decorator, threads, cache), the state functions, custom_fwd/bwd, and GradScaler (a training loop
with a skipped step, growth/backoff, unscale_, state_dict, disabled pass-through)."""

import pickle
import threading
import warnings

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _ops(T):
    """Ops of torch's CPU autocast lists (and a few off them) that sparsetorch has."""
    F = T.nn.functional
    f = lambda *s: T.ones(*s)
    h = lambda *s: T.ones(*s, dtype=T.bfloat16)
    a, b = f(3, 4), f(4, 5)
    x4 = f(2, 3, 6, 6)
    e = T.eye(3) * 2
    return {
        # lower-precision list
        "mm": lambda: T.mm(a, b), "matmul": lambda: T.matmul(a, b), "@": lambda: a @ b,
        "matmul_2d1d": lambda: T.matmul(a, f(4)), "bmm": lambda: T.bmm(f(2, 3, 4), f(2, 4, 5)),
        "addmm": lambda: T.addmm(f(3, 5), a, b), "Tensor.mm": lambda: a.mm(b),
        "baddbmm": lambda: T.baddbmm(f(2, 3, 5), f(2, 3, 4), f(2, 4, 5)),
        "linear": lambda: F.linear(a, f(5, 4), f(5)), "Linear": lambda: T.nn.Linear(4, 5)(a),
        "conv1d": lambda: F.conv1d(f(2, 3, 8), f(4, 3, 3)), "conv2d": lambda: F.conv2d(x4, f(4, 3, 3, 3), f(4)),
        "Conv2d": lambda: T.nn.Conv2d(3, 4, 3)(x4), "conv3d": lambda: F.conv3d(f(1, 2, 4, 4, 4), f(3, 2, 2, 2, 2)),
        "conv_transpose1d": lambda: F.conv_transpose1d(f(2, 3, 6), f(3, 4, 3)),
        "conv_transpose2d": lambda: F.conv_transpose2d(x4, f(3, 4, 3, 3)),
        "ConvTranspose2d": lambda: T.nn.ConvTranspose2d(3, 4, 3)(x4),
        "prelu": lambda: F.prelu(a, f(1)), "PReLU": lambda: T.nn.PReLU()(a),
        "sdpa": lambda: F.scaled_dot_product_attention(f(2, 3, 4), f(2, 3, 4), f(2, 3, 4)),
        "mha": lambda: T.nn.MultiheadAttention(4, 2, batch_first=True)(*[f(2, 3, 4)] * 3)[0],
        "group_norm": lambda: F.group_norm(h(2, 4, 3), 2), "interpolate": lambda: F.interpolate(h(1, 2, 4, 4), scale_factor=2),
        "einsum": lambda: T.einsum("ij,jk->ik", a, b), "tensordot": lambda: T.tensordot(a, b, 1),
        "inner": lambda: T.inner(a, a), "vecdot": lambda: T.linalg.vecdot(a, a),
        "multi_dot": lambda: T.linalg.multi_dot([a, b, f(5, 2)]), "matrix_power": lambda: T.matrix_power(f(3, 3), 2),
        "sparse.mm": lambda: T.sparse.mm(a.to_sparse(), b), "sparse@": lambda: a.to_sparse() @ b,
        "sparse.addmm": lambda: T.sparse.addmm(f(3, 5), a.to_sparse(), b),
        # off the lists: run as outside autocast
        "mv": lambda: T.mv(a, f(4)), "dot": lambda: T.dot(f(4), f(4)), "addmv": lambda: T.addmv(f(3), a, f(4)),
        "outer": lambda: T.outer(f(3), f(4)), "addr": lambda: T.addr(f(3, 4), f(3), f(4)),
        "kron": lambda: T.kron(a, a), "bilinear": lambda: F.bilinear(f(2, 3), f(2, 4), f(5, 3, 4)),
        "add": lambda: a + a, "relu": lambda: T.relu(a), "exp": lambda: T.exp(a), "sum": lambda: a.sum(),
        "softmax": lambda: T.softmax(a, 1), "layer_norm": lambda: F.layer_norm(a, (4,)),
        "cosine_similarity": lambda: F.cosine_similarity(a, a), "embedding": lambda: F.embedding(T.tensor([0, 1]), a),
        "max_pool2d": lambda: F.max_pool2d(x4, 2), "cat_mixed": lambda: T.cat([h(3, 4), a]),
        "bf16_add": lambda: h(3) + h(3), "bf16_softmax": lambda: T.softmax(h(3, 4), 1),
        # float32 list, on bfloat16 inputs
        "mse_loss": lambda: F.mse_loss(h(3, 4), h(3, 4)), "l1_loss": lambda: F.l1_loss(h(3, 4), h(3, 4)),
        "smooth_l1": lambda: F.smooth_l1_loss(h(3, 4), h(3, 4)), "huber": lambda: F.huber_loss(h(3, 4), h(3, 4)),
        "cross_entropy": lambda: F.cross_entropy(h(3, 4), T.tensor([0, 1, 2])),
        "nll_loss": lambda: F.nll_loss(h(3, 4), T.tensor([0, 1, 2])),
        "bce": lambda: F.binary_cross_entropy(h(3, 4) * 0.5, h(3, 4) * 0.5),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(h(3, 4), h(3, 4)),
        "kl_div": lambda: F.kl_div(h(3, 4), h(3, 4), reduction="batchmean"),
        "soft_margin": lambda: F.soft_margin_loss(h(3, 4), h(3, 4)),
        "margin_ranking": lambda: F.margin_ranking_loss(h(3), h(3), h(3)),
        "hinge": lambda: F.hinge_embedding_loss(h(3, 4), h(3, 4)),
        "cosine_embedding": lambda: F.cosine_embedding_loss(h(3, 4), h(3, 4), h(3)),
        "prod": lambda: T.prod(h(3, 4)), "cdist": lambda: T.cdist(h(3, 4), h(3, 4)),
        "trace": lambda: T.trace(h(3, 3)), "quantile": lambda: T.quantile(h(5), 0.5),
        "inverse": lambda: T.inverse(e.bfloat16()), "linalg.inv": lambda: T.linalg.inv(e.bfloat16()),
        "cholesky": lambda: T.linalg.cholesky(e.bfloat16()), "pinverse": lambda: T.pinverse(e.bfloat16()),
        "solve": lambda: T.linalg.solve(e.bfloat16(), h(3)), "qr": lambda: T.linalg.qr(e.bfloat16())[0],
        "svd": lambda: T.linalg.svd(e.bfloat16())[0], "eigh": lambda: T.linalg.eigh(e.bfloat16())[0],
        "svdvals": lambda: T.linalg.svdvals(e.bfloat16()), "lstsq": lambda: T.linalg.lstsq(e.bfloat16(), h(3, 2))[0],
        "pad_reflect": lambda: F.pad(h(1, 2, 4), (1, 1), mode="reflect"),
        "pad_constant": lambda: F.pad(h(1, 2, 4), (1, 1)),
        # promote list
        "index_copy": lambda: f(3, 4).index_copy(0, T.tensor([0]), h(1, 4)),
        # float64 is never cast
        "mm_f64": lambda: T.mm(a.double(), b.double()),
    }


def _dtypes(T, **kw):
    out = {}
    with T.autocast("cpu", **kw):
        for k, fn in _ops(T).items():
            if k in ("cat_mixed", "index_copy") and kw["dtype"] is T.float16:
                continue  # torch: "Unexpected floating ScalarType" (bfloat16 inputs, float16 region)
            out[k] = str(fn().dtype).split(".")[1]
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_output_dtypes_match_torch(dtype):
    ours = _dtypes(st, dtype=getattr(st, dtype))
    theirs = _dtypes(torch, dtype=getattr(torch, dtype))
    diff = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert not diff, diff


def test_outside_autocast_nothing_changes():
    a = st.ones(3, 4)
    assert (a @ a.t()).dtype is st.float32 and not st.is_autocast_enabled("cpu")
    with st.autocast("cpu"):
        assert (a @ a.t()).dtype is st.bfloat16
    assert (a @ a.t()).dtype is st.float32 and st.nn.functional.linear(a, a).dtype is st.float32


def test_nested_and_disabled_regions():
    a = st.ones(2, 2)
    with st.autocast("cpu"):
        with st.autocast("cpu", enabled=False):
            assert not st.is_autocast_enabled("cpu") and (a @ a).dtype is st.float32
            with st.autocast("cpu", dtype=st.float16):
                assert (a @ a).dtype is st.float16 and st.get_autocast_dtype("cpu") is st.float16
            assert st.get_autocast_dtype("cpu") is st.bfloat16
        assert st.is_autocast_enabled("cpu") and (a @ a).dtype is st.bfloat16
    assert not st.is_autocast_enabled("cpu")


def test_decorator_and_exception_restore_state():
    @st.autocast("cpu")
    def f(x):
        return x @ x

    assert f(st.ones(2, 2)).dtype is st.bfloat16 and not st.is_autocast_enabled("cpu")
    with pytest.raises(ZeroDivisionError), st.autocast("cpu"):
        raise ZeroDivisionError
    assert not st.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match=r"requires a callable, but got int"):
        st.autocast("cpu")(3)


def test_autocast_is_per_thread():
    seen = []
    with st.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((st.ones(2, 2) @ st.ones(2, 2)).dtype))
        t.start()
        t.join()
    assert seen == [st.float32]


def test_backward_gives_float32_grads_and_cache_as_torch():
    for T in (st, torch):
        x = T.ones(2, 2, requires_grad=True)
        with T.autocast("cpu"):
            for _ in range(2):  # the cached cast is reused, backward runs twice through it
                (x @ x).sum().backward()
            assert x.grad.dtype is T.float32 and x.grad.tolist() == [[8.0, 8.0], [8.0, 8.0]]
            with T.no_grad():
                x.add_(1)
            stale = (x @ x).tolist()  # torch's cache keeps the old cast until the region ends
        fresh = None
        with T.autocast("cpu"):
            fresh = (x @ x).tolist()
        assert stale == [[2.0, 2.0], [2.0, 2.0]] and fresh == [[8.0, 8.0], [8.0, 8.0]], T.__name__


def test_state_functions_match_torch():
    for T in (st, torch):
        assert T.is_autocast_enabled() is False and T.is_autocast_enabled("cpu") is False
        assert T.get_autocast_dtype("cpu") is T.bfloat16 and T.get_autocast_dtype("cuda") is T.float16
        T.set_autocast_enabled("cpu", True)
        assert T.is_autocast_enabled("cpu") and (T.ones(2, 2) @ T.ones(2, 2)).dtype is T.bfloat16
        T.set_autocast_enabled("cpu", False)
        T.set_autocast_dtype("cpu", T.float16)
        assert T.get_autocast_dtype("cpu") is T.float16
        T.set_autocast_dtype("cpu", T.bfloat16)
        assert T.autocast_increment_nesting() == 1 and T.autocast_decrement_nesting() == 0
        T.set_autocast_cache_enabled(False)
        assert T.is_autocast_cache_enabled() is False
        T.set_autocast_cache_enabled(True)
        T.clear_autocast_cache()
        with pytest.warns(DeprecationWarning, match=r"is_autocast_enabled\('cpu'\)"):
            assert T.is_autocast_cpu_enabled() is False
        with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cuda'\)"):
            assert T.get_autocast_gpu_dtype() is T.float16


def test_autocast_argument_errors_as_torch():
    for T in (st, torch):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            T.autocast(3)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            T.autocast("foo")
        with pytest.raises(RuntimeError, match="unknown device type for autocast"):
            T.is_autocast_enabled("meta")
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
            ctx = T.autocast("cpu", dtype=T.float64)
        with ctx:
            assert not T.is_autocast_enabled("cpu")
        assert T.amp.is_autocast_available("cpu") and not T.amp.is_autocast_available("meta")


def test_deprecated_spellings_warn_as_torch():
    for T in (st, torch):
        with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cpu', args...\)"):
            ctx = T.cpu.amp.autocast()
        with ctx:
            assert T.is_autocast_enabled("cpu") and T.get_autocast_dtype("cpu") is T.bfloat16
        assert isinstance(ctx, T.amp.autocast)
        with pytest.warns(FutureWarning, match=r"torch.amp.GradScaler\('cpu', args...\)"):
            s = T.cpu.amp.GradScaler()
        assert s.is_enabled() and isinstance(s, T.amp.GradScaler)
        assert T.GradScaler is T.amp.GradScaler and T.autocast is T.amp.autocast


@pytest.mark.skipif(st.cuda.is_available(), reason="checks the no-CUDA fallbacks")
def test_cuda_amp_without_cuda_disables_with_torch_warnings():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = st.cuda.amp.GradScaler()
        ctx = st.autocast("cuda")
    msgs = [str(x.message) for x in w]
    assert any("torch.amp.GradScaler('cuda', args...)" in m for m in msgs)
    assert any("CUDA is not available.  Disabling." in m for m in msgs)
    assert any("CUDA is not available or torch_xla is imported. Disabling autocast." in m for m in msgs)
    assert not s.is_enabled() and s.scale(st.tensor(2.0)).item() == 2.0
    with ctx:
        assert not st.is_autocast_enabled("cuda")


def test_custom_fwd_bwd():
    class MyMM(st.autograd.Function):
        @staticmethod
        @st.amp.custom_fwd(device_type="cpu", cast_inputs=st.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            assert not st.is_autocast_enabled("cpu")
            return a.mm(b)

        @staticmethod
        @st.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)

    a = st.ones(2, 2, dtype=st.bfloat16, requires_grad=True)
    with st.autocast("cpu"):
        y = MyMM.apply(a, st.ones(2, 2))
    assert y.dtype is st.float32
    y.sum().backward()
    assert a.grad.dtype is st.bfloat16


# ---- GradScaler ----

def _train(T, steps=8, inf_at=4, **scaler_kw):
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((4, 16)).astype(np.float32) * 0.3
    x = T.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    y = T.tensor(rng.integers(0, 4, 32))
    l1, l2 = T.nn.Linear(8, 16), T.nn.Linear(16, 4)
    with T.no_grad():
        l1.weight.copy_(T.tensor(w1))
        l1.bias.zero_()
        l2.weight.copy_(T.tensor(w2))
        l2.bias.zero_()
    model = T.nn.Sequential(l1, T.nn.ReLU(), l2)
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = T.amp.GradScaler("cpu", **scaler_kw)
    log = []
    for step in range(steps):
        opt.zero_grad()
        with T.autocast("cpu"):
            out = model(x)
            loss = T.nn.functional.cross_entropy(out, y)
        assert out.dtype is T.bfloat16 and loss.dtype is T.float32
        if step == inf_at:
            loss = loss * float("inf")
        before = l1.weight.detach().clone()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        skipped = bool((l1.weight.detach() == before).all())
        log.append((loss.item(), scaler.get_scale(), skipped, scaler._get_growth_tracker()))
    return log, scaler.state_dict()


def test_grad_scaler_training_loop_matches_torch():
    kw = {"init_scale": 2.0 ** 10, "growth_interval": 3}
    ours, ours_state = _train(st, **kw)
    theirs, theirs_state = _train(torch, **kw)
    assert ours_state == theirs_state
    for (l1, s1, k1, g1), (l2, s2, k2, g2) in zip(ours, theirs):
        assert (s1, k1, g1) == (s2, k2, g2)
        assert l1 == pytest.approx(l2, rel=2e-3) or (np.isinf(l1) and np.isinf(l2))
    assert [k for _, _, k, _ in ours] == [False] * 4 + [True] + [False] * 3


def test_grad_scaler_unscale_step_update_errors():
    for T in (st, torch):
        p = T.nn.Parameter(T.ones(3))
        opt = T.optim.SGD([p], lr=1.0)
        s = T.amp.GradScaler("cpu", init_scale=4.0, growth_factor=2.0, backoff_factor=0.25,
                             growth_interval=1)
        with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
            s.unscale_(opt)
        s.scale(p.sum()).backward()
        assert p.grad.tolist() == [4.0, 4.0, 4.0]
        s.unscale_(opt)
        assert p.grad.tolist() == [1.0, 1.0, 1.0]
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            s.unscale_(opt)
        s.update()
        assert s.get_scale() == 8.0 and p.tolist() == [0.0, 0.0, 0.0]
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: 0)
        s.update(3.0)
        assert s.get_scale() == 3.0
        with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
            T.amp.GradScaler("cpu", growth_factor=1.0)


def test_grad_scaler_nan_backoff_and_state_dict():
    for T in (st, torch):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=1.0)
        s = T.amp.GradScaler("cpu", init_scale=16.0)
        (s.scale(p.sum()) * float("nan")).backward()
        assert s.step(opt) is None
        s.update()
        assert p.tolist() == [1.0, 1.0] and s.get_scale() == 8.0
        sd = s.state_dict()
        assert sd == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                      "growth_interval": 2000, "_growth_tracker": 0}
        s2 = T.amp.GradScaler("cpu")
        s2.load_state_dict(sd)
        assert s2.get_scale() == 8.0
        s3 = pickle.loads(pickle.dumps(s))
        assert s3.get_scale() == 8.0 and s3.state_dict() == sd
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            s2.load_state_dict({})


def test_grad_scaler_disabled_is_a_pass_through():
    for T in (st, torch):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=1.0)
        s = T.amp.GradScaler("cpu", enabled=False)
        loss = p.sum()
        assert s.scale(loss) is loss and s.get_scale() == 1.0 and s.state_dict() == {}
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        assert p.tolist() == [0.0, 0.0] and not s.is_enabled()


def test_grad_scaler_sparse_and_bfloat16_grads():
    emb = st.nn.Embedding(5, 3, sparse=True)
    lin = st.nn.Linear(3, 1).bfloat16()
    opt = st.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)
    s = st.amp.GradScaler("cpu", init_scale=8.0)
    out = lin(emb(st.tensor([1, 2, 2])).bfloat16()).float().sum()
    s.scale(out).backward()
    g_sparse = emb.weight.grad.coalesce().to_dense().clone()
    g_lin = lin.weight.grad.float().clone()
    s.unscale_(opt)
    st.testing.assert_close(emb.weight.grad.coalesce().to_dense(), g_sparse / 8)
    st.testing.assert_close(lin.weight.grad.float(), g_lin / 8)
    assert lin.weight.grad.dtype is st.bfloat16 and emb.weight.grad.layout is st.sparse_coo
    s.step(opt)
    s.update()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        p = st.nn.Parameter(st.ones(2, dtype=st.float16))
        o = st.optim.SGD([p], lr=1.0)
        s.scale(p.float().sum()).backward()
        s.unscale_(o)


def test_audit_recurrent_layers_under_cpu_autocast_give_torchs_dtypes():
    # torch: linear's bias is cast too (RNN/cells in bfloat16), an unpacked LSTM without
    # projections runs oneDNN's layer in bfloat16, GRU / packed LSTM / LSTM cells stay float32
    torch = pytest.importorskip("torch")

    def dtypes(lib):
        x = lib.ones(5, 2, 4) * 0.5
        pk = lib.nn.utils.rnn.pack_sequence([lib.ones(3, 4), lib.ones(2, 4)])
        out = []

        def names(o):
            if hasattr(o, "batch_sizes"):  # a PackedSequence (a tuple too)
                o = o.data
            elif isinstance(o, tuple):
                return tuple(names(i) for i in o)
            return str(o.dtype).split(".")[-1]

        with lib.autocast("cpu"):
            for make in (lambda: lib.nn.LSTM(4, 3), lambda: lib.nn.GRU(4, 3),
                         lambda: lib.nn.RNN(4, 3), lambda: lib.nn.LSTM(4, 3, num_layers=2),
                         lambda: lib.nn.LSTM(4, 3, proj_size=2)):
                out.append((names(make()(x)), names(make()(pk))))
            for cell in (lib.nn.RNNCell, lib.nn.LSTMCell, lib.nn.GRUCell):
                out.append(names(cell(4, 3)(x[0])))
        out.append(names(lib.nn.LSTM(4, 3)(x)))  # off again: float32
        return out

    assert dtypes(st) == dtypes(torch)
