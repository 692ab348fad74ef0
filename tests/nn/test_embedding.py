"""Embedding, EmbeddingBag, SparseLinear: semantics, sparse-vs-dense gradients, torch parity."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as F
from sparsetorch import nn
from sparsetorch.autograd import gradcheck, gradgradcheck
from sparsetorch.sparse import _spmm

MODES = ["sum", "mean", "max", "sqrtn"]


def _dense(g):
    return (g.to_dense() if g.layout is not st.strided else g).numpy()


def _bag_case(rng, num=12, dim=4, n=25):
    ids = rng.integers(0, num, n)
    offsets = np.array([0, 3, 3, 10, 24])  # an empty bag, a bag of one (the last)
    w = rng.standard_normal((num, dim))
    return ids, offsets, w


def _reference(ids, bounds, w, mode, pad=None, psw=None):
    """Bags written out in NumPy (float64)."""
    out = np.zeros((len(bounds) - 1, w.shape[1]))
    for b in range(len(bounds) - 1):
        js = [j for j in range(bounds[b], bounds[b + 1]) if ids[j] != pad]
        if not js:
            continue
        rows = np.stack([w[ids[j]] * (1.0 if psw is None else psw[j]) for j in js])
        if mode == "max":
            out[b] = rows.max(0)
        else:
            out[b] = rows.sum(0) / {"sum": 1, "mean": len(js), "sqrtn": np.sqrt(len(js))}[mode]
    return out


@pytest.fixture(params=[True, False], ids=["numba", "numpy"])
def kernels(request):
    old = _spmm.use_numba(request.param)
    yield request.param
    _spmm.use_numba(old)


# ---- EmbeddingBag: semantics ----

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", [None, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_bag_forward_matches_reference(kernels, mode, pad, weighted):
    if weighted and mode == "max":
        return  # max takes no per_sample_weights (tested in test_bag_errors)
    rng = np.random.default_rng(1)
    ids, offsets, w = _bag_case(rng)
    ids[[1, 4, 11]] = 5
    psw = rng.standard_normal(ids.size) if weighted else None
    out = F.embedding_bag(st.tensor(ids), st.tensor(w), st.tensor(offsets), mode=mode,
                          padding_idx=pad, per_sample_weights=None if psw is None else st.tensor(psw))
    ref = _reference(ids, list(offsets) + [ids.size], w, mode, pad, psw)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert out.dtype is st.float64


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", [None, 5])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", ["1d", "1d_last", "2d"])
def test_bag_sparse_grad_equals_dense_grad(kernels, mode, pad, weighted, shape):
    if weighted and mode == "max":
        return
    rng = np.random.default_rng(2)
    ids, offsets, w0 = _bag_case(rng)
    ids[[2, 7]] = 5
    kw = {}
    if shape == "2d":
        ids = ids[:24].reshape(4, 6)
        off = None
    elif shape == "1d_last":
        off = st.tensor(np.array([0, 3, 3, 10, 20]))  # ids after the last offset: in no bag
        kw["include_last_offset"] = True
    else:
        off = st.tensor(offsets)
    psw0 = rng.standard_normal(ids.shape) if weighted else None
    grads = {}
    for sparse in (False, True):
        w = st.tensor(w0, requires_grad=True)
        psw = None if psw0 is None else st.tensor(psw0, requires_grad=True)
        out = F.embedding_bag(st.tensor(ids), w, off, mode=mode, sparse=sparse, padding_idx=pad,
                              per_sample_weights=psw, **kw)
        out.backward(st.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape) - 7))
        assert w.grad.layout is (st.sparse_coo if sparse else st.strided)
        if sparse:
            assert w.grad.is_coalesced()
        grads[sparse] = (_dense(w.grad), None if psw is None else psw.grad.numpy())
    np.testing.assert_allclose(grads[True][0], grads[False][0], rtol=1e-12, atol=1e-12)
    if weighted:
        np.testing.assert_allclose(grads[True][1], grads[False][1], rtol=1e-12)


def test_bag_empty_bags_give_zeros():
    w = st.randn(5, 3)
    for mode in MODES:
        out = F.embedding_bag(st.tensor([1, 2]), w, st.tensor([0, 0, 2, 2]), mode=mode)
        assert out.shape == (4, 3)
        assert float(out[0].abs().sum()) == 0 and float(out[2].abs().sum()) == 0
    out = F.embedding_bag(st.tensor([3, 3]), w, st.tensor([0]), mode="mean", padding_idx=3)
    assert float(out.abs().sum()) == 0  # padding-only bag: empty


def test_bag_sqrtn_is_sum_over_sqrt_size():
    w = st.randn(10, 4, dtype=st.float64)
    ids = st.tensor([1, 2, 3, 4, 4, 9])
    off = st.tensor([0, 4])
    s = F.embedding_bag(ids, w, off, mode="sum")
    q = F.embedding_bag(ids, w, off, mode="sqrtn")
    np.testing.assert_allclose(q.numpy(), s.numpy() / np.sqrt([[4.0], [2.0]]))


@pytest.mark.parametrize("mode", ["sum", "mean", "sqrtn", "max"])
def test_bag_gradcheck(mode):
    rng = np.random.default_rng(3)
    ids, offsets, w0 = _bag_case(rng, num=8, dim=3, n=25)
    w = st.tensor(w0, requires_grad=True)
    psw = st.tensor(rng.standard_normal(ids.size), requires_grad=True)
    i, o = st.tensor(ids), st.tensor(offsets)
    if mode == "max":
        assert gradcheck(lambda w: F.embedding_bag(i, w, o, mode=mode), (w,))
        return
    assert gradcheck(lambda w, p: F.embedding_bag(i, w, o, mode=mode, per_sample_weights=p,
                                                  padding_idx=2), (w, psw))
    assert gradgradcheck(lambda w, p: F.embedding_bag(i, w, o, mode=mode, per_sample_weights=p),
                         (w, psw))


def test_bag_scale_grad_by_freq():
    # each occurrence's gradient is divided by its id's count in the batch (Embedding's rule;
    # torch 2.13's EmbeddingBag divides differently, so this checks a written-out reference)
    ids = np.array([1, 1, 2, 1, 3, 3])
    bounds = [0, 2, 6]
    w0 = np.random.default_rng(0).standard_normal((5, 2))
    for mode in ("sum", "mean", "sqrtn"):
        for sparse in (False, True):
            w = st.tensor(w0, requires_grad=True)
            F.embedding_bag(st.tensor(ids), w, st.tensor(bounds[:-1]), mode=mode,
                            scale_grad_by_freq=True, sparse=sparse).sum().backward()
            exp = np.zeros_like(w0)
            for b in range(2):
                n = bounds[b + 1] - bounds[b]
                div = {"sum": 1.0, "mean": n, "sqrtn": np.sqrt(n)}[mode]
                for j in range(bounds[b], bounds[b + 1]):
                    exp[ids[j]] += 1.0 / div / np.sum(ids == ids[j])
            np.testing.assert_allclose(_dense(w.grad), exp, rtol=1e-12)


# ---- EmbeddingBag: torch parity ----

@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("pad", [None, 4])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("last", [False, True])
def test_bag_torch_parity(kernels, mode, pad, sparse, last):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 10, 40)
    ids[::7] = 4
    offsets = np.array([0, 5, 5, 17, 30] + ([40] if last else []))  # torch mishandles ids past it
    bag = nn.EmbeddingBag(10, 6, mode=mode, sparse=sparse, padding_idx=pad, include_last_offset=last)
    ref = torch.nn.EmbeddingBag(10, 6, mode=mode, sparse=sparse and mode != "max", padding_idx=pad,
                                include_last_offset=last)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(bag.weight.detach().numpy()))
    psw = rng.standard_normal(40).astype(np.float32) if mode == "sum" else None
    sp = None if psw is None else st.tensor(psw, requires_grad=True)
    tp = None if psw is None else torch.tensor(psw, requires_grad=True)
    out = bag(st.tensor(ids), st.tensor(offsets), sp)
    exp = ref(torch.tensor(ids), torch.tensor(offsets), tp)
    if mode != "sum" or psw is None:
        np.testing.assert_array_equal(out.detach().numpy(), exp.detach().numpy())  # bitwise
    np.testing.assert_allclose(out.detach().numpy(), exp.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = rng.standard_normal(tuple(exp.shape)).astype(np.float32)
    out.backward(st.tensor(g))
    exp.backward(torch.tensor(g))
    np.testing.assert_allclose(_dense(bag.weight.grad), ref.weight.grad.to_dense().numpy(),
                               rtol=1e-5, atol=1e-6)
    if psw is not None:
        np.testing.assert_allclose(sp.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_bag_2d_torch_parity():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(5).standard_normal((9, 3)).astype(np.float32)
    ids = np.random.default_rng(6).integers(0, 9, (4, 5))
    for mode in ("sum", "mean", "max"):
        a = F.embedding_bag(st.tensor(ids), st.tensor(w0), mode=mode)
        b = torch.nn.functional.embedding_bag(torch.tensor(ids), torch.tensor(w0), mode=mode)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


# ---- EmbeddingBag: bad inputs ----

def test_bag_errors():
    w = st.randn(5, 3)
    ids = st.tensor([0, 1, 2])
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(st.tensor([0, 5]), w, st.tensor([0]))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(st.tensor([-1, 2]), w, st.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(ids, w, st.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        F.embedding_bag(ids, w, st.tensor([0, 2, 1]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater"):
        F.embedding_bag(ids, w, st.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="offsets"):
        F.embedding_bag(ids, w, st.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(st.tensor([[0, 1]]), w, st.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(ids, w)
    with pytest.raises(NotImplementedError, match="per_sample_weights .*mode='max'"):
        F.embedding_bag(ids, w, st.tensor([0]), mode="max", per_sample_weights=st.ones(3))
    with pytest.raises(ValueError, match="same shape as the input"):
        F.embedding_bag(ids, w, st.tensor([0]), mode="sum", per_sample_weights=st.ones(2))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.embedding_bag(ids, w, st.tensor([0]), mode="sum",
                        per_sample_weights=st.ones(3, dtype=st.float64))
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding_bag(st.tensor([0.0, 1.0]), w, st.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of"):
        F.embedding_bag(ids, w, st.tensor([0]), mode="median")
    with pytest.raises(ValueError, match="frequency"):
        F.embedding_bag(ids, w, st.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="mode has to be one of"):
        nn.EmbeddingBag(3, 2, mode="median")


# ---- Embedding ----

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("pad", [None, 3, -2])
@pytest.mark.parametrize("freq", [False, True])
def test_embedding_torch_parity(sparse, pad, freq):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    emb = nn.Embedding(10, 4, padding_idx=pad, sparse=sparse, scale_grad_by_freq=freq)
    ref = torch.nn.Embedding(10, 4, padding_idx=pad, sparse=sparse and not freq,
                             scale_grad_by_freq=freq)
    assert emb.padding_idx == ref.padding_idx
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(emb.weight.detach().numpy()))
    ids = rng.integers(0, 10, (3, 5))
    ids[0, 0] = emb.padding_idx if pad is not None else 0
    out, exp = emb(st.tensor(ids)), ref(torch.tensor(ids))
    np.testing.assert_array_equal(out.detach().numpy(), exp.detach().numpy())
    g = rng.standard_normal(tuple(exp.shape)).astype(np.float32)
    out.backward(st.tensor(g))
    exp.backward(torch.tensor(g))
    np.testing.assert_allclose(_dense(emb.weight.grad), ref.weight.grad.to_dense().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_embedding_sparse_grad_layout():
    emb = nn.Embedding(6, 2, sparse=True)
    emb(st.tensor([[1, 4, 1]])).sum().backward()
    g = emb.weight.grad
    assert g.layout is st.sparse_coo and not g.is_coalesced()
    assert tuple(g._indices().shape) == (1, 3) and tuple(g._values().shape) == (3, 2)
    np.testing.assert_array_equal(g._indices().numpy(), [[1, 4, 1]])
    dense = nn.Embedding(6, 2)
    dense.weight = emb.weight.__class__(emb.weight.detach().clone())
    dense(st.tensor([[1, 4, 1]])).sum().backward()
    np.testing.assert_array_equal(g.to_dense().numpy(), dense.weight.grad.numpy())


def test_embedding_gradcheck():
    w = st.randn(6, 3, dtype=st.float64, requires_grad=True)
    ids = st.tensor([[0, 2, 2], [5, 1, 2]])
    # (padding_idx and scale_grad_by_freq alter the gradient on purpose: checked against torch)
    assert gradcheck(lambda w: F.embedding(ids, w), (w,))
    assert gradgradcheck(lambda w: F.embedding(ids, w), (w,))


def test_embedding_max_norm_and_init():
    torch = pytest.importorskip("torch")
    emb = nn.Embedding(8, 5, max_norm=1.0, padding_idx=2)
    assert float(emb.weight[2].abs().sum()) == 0
    ref = torch.nn.Embedding(8, 5, max_norm=1.0)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(emb.weight.detach().numpy()))
    ids = [1, 3, 3, 7]
    np.testing.assert_allclose(emb(st.tensor(ids)).detach().numpy(),
                               ref(torch.tensor(ids)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(emb.weight.detach().numpy(), ref.weight.detach().numpy(), rtol=1e-6)
    assert repr(emb) == "Embedding(8, 5, padding_idx=2, max_norm=1.0)"
    assert repr(nn.EmbeddingBag(4, 2, mode="sqrtn", sparse=True)) == \
        "EmbeddingBag(4, 2, mode='sqrtn', sparse=True)"


def test_from_pretrained():
    w = st.randn(4, 3)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e.num_embeddings == 4 and e.embedding_dim == 3
    np.testing.assert_array_equal(e(st.tensor([2])).numpy(), w[2:3].numpy())
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    b = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    np.testing.assert_allclose(b(st.tensor([[0, 1]])).numpy(), (w[0] + w[1]).numpy()[None])
    assert list(e.state_dict()) == ["weight"]
    with pytest.raises(AssertionError):
        nn.Embedding.from_pretrained(st.randn(3))


def test_embedding_errors():
    w = st.randn(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(st.tensor([5]), w)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding(st.tensor([1.0]), w)
    with pytest.raises(AssertionError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


# ---- SparseLinear ----

def test_sparse_linear_forward_and_masked_grad():
    lin = nn.Linear(6, 4) if hasattr(nn, "Linear") else None
    w = st.randn(4, 6, dtype=st.float64)
    mask = st.rand(4, 6) > 0.5
    for layout in (st.sparse_csr, st.sparse_coo):
        m = nn.SparseLinear(6, 4, mask=mask, layout=layout, dtype=st.float64)
        assert m.weight.layout is layout and m.weight._nnz() == int(mask.sum())
        x = st.randn(3, 6, dtype=st.float64, requires_grad=True)
        y = m(x)
        ref = x.detach().numpy() @ m.weight.detach().to_dense().numpy().T + m.bias.detach().numpy()
        np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-12)
        y.sum().backward()
        g = m.weight.grad
        assert g.layout is layout
        dense_g = np.ones((3, 1)).T @ x.detach().numpy()
        np.testing.assert_allclose(g.to_dense().numpy(), np.repeat(dense_g, 4, 0) * mask.numpy())
        assert m(st.randn(2, 5, 6, dtype=st.float64)).shape == (2, 5, 4)
    if lin is not None:
        s = nn.SparseLinear.from_dense(lin, sparsity=0.75)
        assert s.weight._nnz() == 6
        kept = s.weight.to_dense().detach().abs().numpy()
        dropped = lin.weight.detach().abs().numpy()[kept == 0]
        assert dropped.max() <= kept[kept > 0].min()
        s2 = nn.SparseLinear.from_dense(lin, mask=st.ones(4, 6, dtype=st.bool))
        x = st.randn(2, 6)
        np.testing.assert_allclose(s2(x).detach().numpy(), lin(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    del w


def test_sparse_linear_gradcheck_and_errors():
    m = nn.SparseLinear(5, 3, sparsity=0.5, dtype=st.float64)
    x = st.randn(2, 5, dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda x: m(x), (x,))
    with pytest.raises(ValueError, match="sparsity"):
        nn.SparseLinear(5, 3, sparsity=1.5)
    with pytest.raises(RuntimeError, match="mask"):
        nn.SparseLinear(5, 3, mask=st.ones(2, 2, dtype=st.bool))


def test_sparse_linear_state_dict_round_trip():
    m = nn.SparseLinear(6, 4, sparsity=0.5)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and sd["weight"].layout is st.sparse_csr
    m2 = nn.SparseLinear(6, 4, sparsity=0.5)
    m2.load_state_dict(sd)
    x = st.randn(3, 6)
    np.testing.assert_allclose(m2(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("scaled,weighted", [(False, False), (True, False), (False, True), (True, True)])
def test_bag_grad_kernels_one_and_many_threads_agree(scaled, weighted):
    """The numba table-gradient kernel: the one-thread and the parallel kernels give the same
    rows and the same bits, each row summed from zero in entry order (a float32 reference summed
    that way), padding left out; ids too wide to pack beside the bag (the argsort fallback) give
    the same result as the radix sort of their ranks."""
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is None:
        pytest.skip("numba not available")
    rng = np.random.default_rng(3)
    num, bags, per, dim = 50, 40, 7, 5
    ids = rng.integers(0, num, bags * per)
    bounds = np.concatenate(([0, 0], np.sort(rng.integers(0, ids.size, bags - 2)), [ids.size]))
    g = rng.standard_normal((bags, dim)).astype(np.float32)
    e = np.empty(0, np.float32)
    coef = rng.standard_normal(ids.size).astype(np.float32) if weighted else e
    scale = rng.uniform(1, 3, bags).astype(np.float32) if scaled else e
    got = [k[2](ids, bounds, g, 7, coef, scale, num, T) for T in (1, 2, 3)]
    ref = np.zeros((num, dim), np.float32)
    for b in range(bags):
        gb = g[b] / scale[b] if scaled else g[b]
        for j in range(bounds[b], bounds[b + 1]):
            if ids[j] != 7:
                ref[ids[j]] += coef[j] * gb if weighted else gb
    rows0, vals0 = got[0]
    np.testing.assert_array_equal(rows0, np.unique(ids[ids != 7]))
    np.testing.assert_array_equal(vals0, ref[rows0])
    for rows, vals in got[1:]:
        np.testing.assert_array_equal(rows, rows0)
        np.testing.assert_array_equal(vals, vals0)
    wide = (ids * (2**55)) | 7  # ids of a (nominal) 2**61-row table: no room for the bag bits
    rows, vals = k[2](wide, bounds, g, 7 * 2**55 | 7, coef, scale, 2**61, 1)
    np.testing.assert_array_equal(rows, rows0 * 2**55 | 7)
    np.testing.assert_array_equal(vals, vals0)


def test_bag_sum_serial_twin_same_bits():
    """The forward's serial twin (small work) and the parallel kernel give the same bits."""
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is None:
        pytest.skip("numba not available")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((40, 6)).astype(np.float32)
    ids = rng.integers(0, 40, 90)
    bounds = np.array([0, 0, 5, 31, 31, 60, 90])
    e = np.empty(0, np.float32)
    psw = rng.standard_normal(90).astype(np.float32)
    scale = rng.uniform(1, 3, 6).astype(np.float32)
    for a, b in ((e, e), (psw, e), (e, scale), (psw, scale)):
        np.testing.assert_array_equal(k[3](w, ids, bounds, 3, a, b), k[0](w, ids, bounds, 3, a, b))


@pytest.mark.parametrize("dim", [3, 16, 64, 83, 130])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bag_gather_sum_widths_torch_bits(dim, dtype):
    """The register-held gather-sum (groups of 4 vectors, single vectors, scalar columns): every
    width and both float types give torch's bits in 'sum' and 'mean', padding ids left out,
    empty bags zero; the serial twin and the parallel kernel agree."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(dim)
    num = 50
    w = rng.standard_normal((num, dim)).astype(dtype)
    ids = rng.integers(0, num, 300)
    ids[-1] = num - 1  # the last row of the table, last of the ids (the prefetch's edge)
    ids[::11] = 7
    offsets = np.array([0, 0, 1, 40, 40, 200, 299])
    for mode in ("sum", "mean"):
        for pad in (None, 7):
            out = F.embedding_bag(st.tensor(ids), st.tensor(w), st.tensor(offsets), mode=mode,
                                  padding_idx=pad)
            exp = torch.nn.functional.embedding_bag(torch.tensor(ids), torch.tensor(w),
                                                    torch.tensor(offsets), mode=mode,
                                                    padding_idx=pad)
            assert out.dtype is getattr(st, dtype)
            np.testing.assert_array_equal(out.numpy(), exp.numpy())
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is not None:
        e = np.empty(0, dtype)
        bounds = np.append(offsets, ids.size)
        scale = rng.uniform(1, 3, bounds.size - 1).astype(dtype)
        for s in (e, scale):
            np.testing.assert_array_equal(k[3](w, ids, bounds, 7, e, s), k[0](w, ids, bounds, 7, e, s))


@pytest.mark.parametrize("mode", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("pad", [None, 2, -3])
@pytest.mark.parametrize("form", ["offsets", "last", "2d"])
def test_bag_lean_path_equals_full_path(mode, pad, form):
    """The common case's short path (ids and offsets checked and the bounds built in one kernel)
    gives the full path's bits, forward and gradient; per_sample_weights of ones (exact) send the
    same bags through the full path. Its grad_fn has torch's two edges."""
    rng = np.random.default_rng(5)
    w = st.tensor(rng.standard_normal((9, 5)).astype(np.float32), requires_grad=True)
    ids = rng.integers(0, 9, 24)
    ids[::5] = 2 if pad == 2 else 6
    if form == "2d":
        x, off = st.tensor(ids.reshape(6, 4)), None
    else:
        off = st.tensor([0, 0, 3, 3, 10, 24] if form == "last" else [0, 0, 3, 3, 10])
        x = st.tensor(ids)
    last = form == "last"
    out = F.embedding_bag(x, w, off, mode=mode, padding_idx=pad, include_last_offset=last,
                          sparse=True)
    assert len(out.grad_fn.next_functions) == 2
    g = st.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
    out.backward(g)
    lean = w.grad.to_dense().numpy()
    w.grad = None
    ref = F.embedding_bag(x, w, off, mode=mode, padding_idx=pad, include_last_offset=last,
                          sparse=True, per_sample_weights=st.ones(tuple(x.shape)))
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    ref.backward(g)
    np.testing.assert_allclose(lean, w.grad.to_dense().numpy(), rtol=1e-6, atol=1e-7)


def test_bag_ids_checked_in_the_kernel():
    """The forward kernel checks every id, in a bag or past the last offset, on both kernels
    (serial twin and parallel), and an error leaves nothing half-built: torch's IndexError."""
    w = st.randn(6, 4)
    cases = [(st.tensor([0, 6, 1]), st.tensor([0, 2]), False),
             (st.tensor([[1, -1], [2, 3]]), None, False),
             (st.tensor([0, 1, 2, 9]), st.tensor([0, 2, 3]), True)]  # 9: after the last bag
    for x, off, last in cases:
        for mode in ("sum", "mean"):
            with pytest.raises(IndexError, match="index out of range in self"):
                F.embedding_bag(x, w, off, mode=mode, include_last_offset=last)
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is not None:
        e = np.empty(0, np.float32)
        wd = np.ones((6, 4), np.float32)
        for ids in ([0, 6, 1], [-2, 1, 1], [1, 1, 7]):
            for f in (k[0], k[3]):
                assert f(wd, np.array(ids), np.array([0, 1, 2]), -1, e, e).shape == (0, 4)
        assert k[3](wd, np.array([1, 1, 5]), np.array([0, 1, 2]), -1, e, e).shape == (2, 4)
    # the gather checks the ids as it reads them: every column group of a wide row (64 + 16 +
    # scalars), the extremes of int64, an id equal to padding_idx's -1 form, an empty table
    w = st.randn(50, 83)
    for bad in (50, -1, -51, 2 ** 62, -2 ** 63, 2 ** 63 - 1):
        x = st.tensor([1, 2, bad, 3] * 40000)  # bags on both threads' shares
        for pad in (None, -1):
            with pytest.raises(IndexError, match="index out of range in self"):
                F.embedding_bag(x, w, st.arange(0, x.shape[0], 4), mode="sum", padding_idx=pad)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(st.tensor([0]), st.empty(0, 4), st.tensor([0]))
    assert tuple(F.embedding_bag(st.tensor([], dtype=st.int64), st.empty(0, 4), st.tensor([0])).shape) == (1, 4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_take_kernel(dtype):
    """Embedding's forward kernel (rows copied, ids checked as they are read, the serial twin
    and the parallel one): torch's values for every id shape, torch's IndexError for an id
    outside the table (negative ones too), max_norm and empty ids on the full path."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    w = rng.standard_normal((30, 7)).astype(dtype)
    for shape in [(5,), (3, 4), (2, 3, 2)]:
        ids = rng.integers(0, 30, shape)
        out = F.embedding(st.tensor(ids), st.tensor(w))
        exp = torch.nn.functional.embedding(torch.tensor(ids), torch.tensor(w))
        assert tuple(out.shape) == tuple(exp.shape)
        np.testing.assert_array_equal(out.numpy(), exp.numpy())
    assert tuple(F.embedding(st.tensor(np.zeros((2, 0), np.int64)), st.tensor(w)).shape) == (2, 0, 7)
    for bad in ([1, 30, 2], [[0, -1]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(st.tensor(bad), st.tensor(w))
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(st.tensor(bad), st.tensor(w), max_norm=1.0)
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is not None:
        ids = rng.integers(0, 30, 100)
        for kern in (k[5], k[6]):  # into the caller's array (NumPy's: huge pages), 0 bad ids
            out = np.empty((100, 7), dtype)
            assert kern(w, ids, out) == 0
            np.testing.assert_array_equal(out, w[ids])
        ids[57] = -3
        assert k[5](w, ids, out) == 1 and k[6](w, ids, out) == 1


def test_tables_start_on_a_cache_line():
    """Embedding / EmbeddingBag tables are allocated from a 64-byte boundary (a 16-float row is
    one cache line), in every float dtype, and behave as any parameter (state_dict round trip)."""
    for cls in (nn.Embedding, nn.EmbeddingBag):
        for dt in (None, st.float64, st.float16):
            m = cls(100, 16, dtype=dt)
            a = m.weight.detach().numpy()
            assert a.ctypes.data % 64 == 0 and a.flags.c_contiguous and a.shape == (100, 16)
            assert m.weight.is_leaf and m.weight.requires_grad
        m2 = cls(100, 16)
        m2.load_state_dict(m.state_dict())
        np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_bag_sparse_grad_accumulates_as_torch(mode):
    """EmbeddingBag(sparse=True) gradients of zipf ids (hot rows hit hundreds of times), from
    two backward calls into one .grad: coalesced here (sorted unique rows, one entry each), equal
    to torch's uncoalesced gradient after its coalesce(); large enough for the parallel kernels
    (ids x columns past PAR_MIN_WORK) when numba has several threads."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    num, dim, n, per = 5000, 64, 9000, 9
    ids = (rng.zipf(1.2, n) % num).astype(np.int64)
    off = np.arange(0, n, per)
    w0 = rng.standard_normal((num, dim)).astype(np.float32)
    w = st.tensor(w0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    for _ in range(2):
        g = rng.standard_normal((n // per, dim)).astype(np.float32)
        F.embedding_bag(st.tensor(ids), w, st.tensor(off), mode=mode, sparse=True).backward(
            st.tensor(g))
        torch.nn.functional.embedding_bag(torch.tensor(ids), tw, torch.tensor(off), mode=mode,
                                          sparse=True).backward(torch.tensor(g))
    assert w.grad.layout is st.sparse_coo and w.grad.is_coalesced()
    a, b = w.grad, tw.grad.coalesce()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    np.testing.assert_allclose(a.values().numpy(), b.values().numpy(), rtol=1e-5, atol=1e-4)
    assert a.values().dtype is st.float32


def test_bag_lean_kernels_serial_and_parallel_agree():
    """The one-call forward kernels (offsets checked, bounds and divisors built, bags summed):
    the parallel one and its serial twin give the same bits, bounds and divisors in every mode
    and offsets form; invalid offsets give empty bounds, an id outside the table (in a bag or
    past the last) an output of no rows; ids with no bags go to the full path (IndexError)."""
    from sparsetorch._backend import CPU
    from sparsetorch.nn._kernels import embedding as K

    k = K.kernels(CPU)
    if k is None:
        pytest.skip("numba not available")
    rng = np.random.default_rng(12)
    w = rng.standard_normal((30, 20)).astype(np.float32)
    ids = rng.integers(0, 30, 200)
    e = np.empty(0, np.float32)
    for off, last in (([0, 0, 7, 7, 120], False), ([0, 3, 150, 200], True), ([0], False)):
        off = np.array(off)
        for mode in (0, 1, 3):
            a = k[7](w, ids, off, last, 4, mode, e)
            b = k[8](w, ids, off, last, 4, mode, e)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
            ref = F.embedding_bag(st.tensor(ids), st.tensor(w), st.tensor(off), padding_idx=4,
                                  mode={0: "sum", 1: "mean", 3: "sqrtn"}[mode],
                                  include_last_offset=last, per_sample_weights=st.ones(200))
            np.testing.assert_array_equal(a[0], ref.numpy())
    for f in (k[7], k[8]):
        assert f(w, ids, np.array([1, 5]), False, -1, 0, e)[1].size == 0  # offsets[0] != 0
        assert f(w, ids, np.array([0, 9, 5]), False, -1, 0, e)[1].size == 0  # decreasing
        bad = ids.copy()
        bad[-1] = 30  # past the last bag (include_last_offset)
        out, bounds, _ = f(w, bad, np.array([0, 3, 150]), True, -1, 0, e)
        assert out.shape == (0, 20) and bounds.size == 3
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(st.tensor([1, 30]), st.tensor(w), st.tensor(np.zeros(0, np.int64)))
