"""Behaviours the fake CUDA backend cannot show by itself (docs/gpu.md, "Still needs a GPU"):
page-locked memory and ``DataLoader(pin_memory=True)``, ``einsum`` with a contraction path,
multi-key sorts (``lexsort``), and index ranges past int32 (cupyx's sparse matrices hold int32
indices: the answer must be right or a clear error, never wrong). Each runs on the device and is
compared with the CPU."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.utils.data import DataLoader, TensorDataset

from ._util import CUDA_MARKS, assert_close, assert_on

pytestmark = CUDA_MARKS


def test_pin_memory_dense_and_sparse(device):
    t = st.arange(12.0).reshape(3, 4)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and p.pin_memory() is p
    assert p[1:].is_pinned()  # a view of pinned memory is pinned
    assert_close(p, t)
    d = p.to(device, non_blocking=True)
    st.cuda.synchronize()
    assert_on(d, device)
    assert_close(d, t)
    assert not d.is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        d.pin_memory()
    s = st.sparse_coo_tensor([[0, 2], [1, 3]], [1.0, 2.0], (3, 4)).pin_memory()
    assert s.is_pinned()
    assert_close(s.cuda(), s)
    c = t.to_sparse_csr().pin_memory()
    assert c.is_pinned()
    assert_close(c.cuda(), t)


def test_pin_memory_is_differentiable_and_factories_pin(device):
    x = st.ones(3, requires_grad=True)
    x.pin_memory().sum().backward()
    assert_close(x.grad, st.ones(3))
    z = st.zeros(4, pin_memory=True)
    assert z.is_pinned()
    assert st.tensor([1.0, 2.0], pin_memory=True).is_pinned()


def test_dataloader_pin_memory(device):
    ds = TensorDataset(st.arange(10.0), st.arange(10))
    for workers in (0, 1):
        batches = list(DataLoader(ds, batch_size=4, pin_memory=True, num_workers=workers))
        assert len(batches) == 3
        for xb, yb in batches:
            assert xb.is_pinned() and yb.is_pinned()
        assert_close(st.cat([b[0] for b in batches]), st.arange(10.0))
    assert not next(iter(DataLoader(ds, batch_size=4)))[0].is_pinned()


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk,kl->il", ((5, 6), (6, 7), (7, 3))),  # three operands: the kernel asks for a path
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("ii->i", ((4, 4),)),
])
def test_einsum_on_device(eq, shapes, device):
    rng = np.random.default_rng(0)
    ops = [st.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    want = st.einsum(eq, *ops)
    got = st.einsum(eq, *[t.to(device) for t in ops])
    assert_on(got, device)
    assert_close(got, want, 1e-4, 1e-4)


def test_multikey_sorts_coalesce_3d(device):
    rng = np.random.default_rng(1)
    idx = st.from_numpy(rng.integers(0, 4, (3, 200)))
    vals = st.from_numpy(rng.standard_normal(200).astype(np.float32))
    s = st.sparse_coo_tensor(idx, vals, (4, 4, 4))
    want = s.coalesce()
    got = st.sparse_coo_tensor(idx.to(device), vals.to(device), (4, 4, 4)).coalesce()
    assert_on(got, device)
    assert got.is_coalesced()
    assert_close(got.indices(), want.indices())
    assert_close(got.values(), want.values(), 1e-5, 1e-5)


BIG = 2**33  # a dimension past int32 (and past 2**32)


def _big(dev):
    return st.sparse_coo_tensor([[0, 2, 1, 0], [5, BIG - 1, 2**31 + 7, 5]], [1.0, 2.0, 3.0, 4.0],
                                (3, BIG), device=dev)


@pytest.mark.parametrize("op", ["coalesce", "t", "add", "mul", "scale", "to_sparse_csr",
                                "csr_roundtrip", "sum0", "sum1", "sparse_mask"])
def test_indices_past_int32(op, device):
    """The answer on the device equals the CPU's, or the device refuses with a clear error."""
    fns = {
        "coalesce": lambda a: a.coalesce(),
        "t": lambda a: a.t().coalesce(),
        "add": lambda a: (a + a).coalesce(),
        "mul": lambda a: (a * a).coalesce(),
        "to_sparse_csr": lambda a: a.coalesce().to_sparse_csr(),
        "sum1": lambda a: st.sparse.sum(a, dim=1),
        "scale": lambda a: (a * 3.0).coalesce(),
        "csr_roundtrip": lambda a: a.coalesce().to_sparse_csr().to_sparse_coo(),
        "sum0": lambda a: st.sparse.sum(a, dim=0),
        "sparse_mask": lambda a: (a + a).sparse_mask(a.coalesce()),
    }
    fn = fns[op]
    want = fn(_big("cpu"))
    try:
        got = fn(_big(device))
    except (RuntimeError, NotImplementedError, ValueError) as e:  # a refusal must say why
        msg = str(e)
        assert "int32" in msg or "2**31" in msg or "2^31" in msg or "too large" in msg, msg
        return
    assert_on(got, device)
    assert tuple(got.shape) == tuple(want.shape)
    wl, gl = want, got
    if wl.layout is st.sparse_csr:
        wl, gl = wl.to_sparse_coo(), gl.to_sparse_coo()
    if wl.layout is st.sparse_coo:
        wl, gl = wl.coalesce(), gl.coalesce()
        assert_close(gl.indices(), wl.indices())
        assert_close(gl.values(), wl.values())
    else:
        assert_close(gl, wl)


def test_cupyx_int32_limit_is_a_clear_error(device):
    """Past 2**31 - 1 entries, rows or columns, a cupyx matrix would wrap its int32 indices: the
    guard refuses before one is built (exercised directly: such operands need ~40 GB)."""
    from sparsetorch._backend import get_backend
    from sparsetorch.sparse._spmm import check_int32_limits

    be = get_backend(st.device(device))
    check_int32_limits(be, 2**31 - 1, (2**31 - 1, 5), "ok")  # the largest that fits
    for nnz, shape in ((2**31, (10, 10)), (5, (2**31, 3)), (5, (3, 2**33))):
        with pytest.raises(RuntimeError, match=r"int32 indices \(at most 2\*\*31 - 1"):
            check_int32_limits(be, nnz, shape, "sparse @ dense")
    check_int32_limits(get_backend(st.device("cpu")), 2**40, (2**40, 2**40), "cpu has no limit")
