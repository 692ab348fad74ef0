"""Device rules on CUDA: placement, moves, autograd across moves, cross-device errors, sparse
tensors, the current-device context, and that the CPU-only (numba) kernels never see CUDA
arrays. Runs on a GPU or on the fake backend (SPARSETORCH_FAKE_CUDA)."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch._backend import get_backend

from ._util import CUDA_MARKS, assert_close, requires_two

pytestmark = CUDA_MARKS


# ---- placement and moves ----


def test_creation_with_device(device):
    for t in (st.zeros(2, 3, device="cuda"), st.ones(2, device=device), st.empty(4, device="cuda:0"),
              st.full((2,), 3.0, device="cuda"), st.arange(5, device="cuda"),
              st.tensor([1.0, 2.0], device="cuda"), st.rand(3, device="cuda"),
              st.randn(3, device="cuda"), st.randint(0, 5, (3,), device="cuda"),
              st.eye(3, device="cuda"), st.linspace(0, 1, 5, device="cuda")):
        assert t.device == device and t.is_cuda and not t.is_cpu
        assert t.get_device() == 0
    assert st.zeros_like(st.ones(2, device="cuda")).device == device
    assert st.zeros_like(st.ones(2), device="cuda").device == device
    assert st.ones(2).get_device() == -1


def test_cuda_means_the_current_device(device):
    assert st.ones(1, device="cuda").device.index == st.cuda.current_device() == 0
    assert st.device("cuda").index is None  # the device object itself keeps no index


def test_to_cuda_cpu_roundtrip(device):
    a = st.arange(6.0).reshape(2, 3)
    for b in (a.cuda(), a.to("cuda"), a.to(device), a.cuda(0), a.to(device="cuda", dtype=st.float64)):
        assert b.device == device
        assert_close(b.cpu().to(st.float32), a)
    c = a.cuda()
    assert c.to("cuda") is c and c.cuda() is c  # nothing to do: the tensor itself, as torch
    assert c.cpu().device == st.device("cpu")
    assert c.to(a).device == st.device("cpu")  # to(other): other's device and dtype
    assert a.to(c).device == device
    d = a.cuda()
    d.add_(1)  # a copy, not a view of the CPU tensor
    assert a[0, 0].item() == 0.0


def test_moves_copy_data(device):
    a = st.ones(3)
    b = a.cuda()
    a.mul_(5)
    assert_close(b.cpu(), st.ones(3))


def test_numpy_and_item_on_cuda(device):
    t = st.tensor([1.5, 2.5], device="cuda")
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        t.numpy()
    np.testing.assert_array_equal(t.cpu().numpy(), [1.5, 2.5])
    assert t[1].item() == 2.5 and t.tolist() == [1.5, 2.5]
    assert "device='cuda:0'" in repr(t)


def test_type_strings(device):
    t = st.ones(2, device="cuda")
    assert t.type() == "torch.cuda.FloatTensor"
    assert st.ones(2).type("torch.cuda.DoubleTensor").device == device


# ---- autograd across devices ----


def test_gradient_flows_back_to_the_cpu_leaf(device):
    x = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.cuda() * 2).pow(2).sum()
    assert y.device == device
    y.backward()
    assert x.grad.device == st.device("cpu")
    assert_close(x.grad, st.tensor([8.0, 16.0, 24.0]))


def test_gradient_of_a_cuda_leaf_stays_on_cuda(device):
    w = st.randn(4, 3, device="cuda", requires_grad=True)
    x = st.randn(2, 4)
    (x.cuda() @ w).sum().backward()
    assert w.grad.device == device
    assert_close(w.grad.cpu(), x.sum(0, keepdim=True).t().expand(4, 3))


# ---- cross-device errors ----


def test_cross_device_binary_op_raises(device):
    a, b = st.ones(2, device="cuda"), st.ones(2)
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        b * a
    with pytest.raises(RuntimeError, match="same device"):
        st.mm(st.ones(2, 2), st.ones(2, 2, device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        st.where(st.ones(2, dtype=st.bool), a, b)


def test_cpu_scalar_tensor_combines_with_cuda(device):
    a = st.tensor([1.0, 2.0], device="cuda")
    s = st.tensor(3.0)  # 0-d CPU tensors act like scalars, as in torch
    assert_close((a * s).cpu(), st.tensor([3.0, 6.0]))
    assert (s + a).device == device
    w = st.tensor(2.0, requires_grad=True)
    (a * w).sum().backward()
    assert w.grad.device == st.device("cpu") and w.grad.item() == 3.0


@requires_two
def test_two_devices():
    a = st.ones(2, device="cuda:0")
    b = st.ones(2, device="cuda:1")
    assert b.get_device() == 1 and b.device == st.device("cuda:1")
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        a + b
    assert_close((a + b.to("cuda:0")).cpu(), st.full((2,), 2.0))
    assert (b.cuda(0)).device == st.device("cuda:0")
    with st.cuda.device(1):
        assert st.cuda.current_device() == 1
        assert st.zeros(1, device="cuda").get_device() == 1
        assert st.ones(1).cuda().get_device() == 1
    assert st.cuda.current_device() == 0
    x = st.ones(3, requires_grad=True, device="cuda:1")
    (x.to("cuda:0") * 2).sum().backward()
    assert x.grad.device == st.device("cuda:1")


# ---- sparse tensors ----


def test_sparse_tensors_on_cuda(device):
    i = st.tensor([[0, 1, 1], [2, 0, 2]])
    v = st.tensor([3.0, 4.0, 5.0])
    s = st.sparse_coo_tensor(i, v, (2, 3)).cuda()
    assert s.device == device and s.is_sparse and s.is_cuda
    assert s._indices().device == device and s.coalesce().values().device == device
    assert_close(s.to_dense().cpu(), st.tensor([[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]))
    c = s.to_sparse_csr()
    assert c.device == device and c.crow_indices().device == device
    assert st.sparse_coo_tensor(i.cuda(), v.cuda(), (2, 3)).device == device
    back = c.cpu()
    assert back.device == st.device("cpu") and back.layout is st.sparse_csr


def test_sparse_mm_gradient_on_cuda(device):
    a = st.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    x = st.randn(3, 4)
    for sp in (a.to_sparse(), a.to_sparse_csr()):
        sd = sp.cuda().requires_grad_()
        xd = x.cuda().requires_grad_()
        st.sparse.mm(sd, xd).sum().backward()
        sc = sp.clone().requires_grad_()
        xc = x.clone().requires_grad_()
        st.sparse.mm(sc, xc).sum().backward()
        assert sd.grad.device == device and sd.grad.layout is sc.grad.layout
        assert_close(sd.grad, sc.grad)
        assert_close(xd.grad, xc.grad)


def test_sparse_cross_device_raises(device):
    s = st.eye(3).to_sparse().cuda()
    with pytest.raises(RuntimeError, match="same device"):
        st.sparse.mm(s, st.ones(3, 2))


# ---- the CPU-only kernels never see CUDA arrays ----


def test_numba_kernels_are_cpu_only(device):
    from sparsetorch.nn._kernels import embedding as emb_k
    from sparsetorch.optim import _kernels as opt_k
    from sparsetorch.sparse import _merge, _rowsort, _spmm

    be = get_backend(device)
    assert be.name == "cuda" and be is not get_backend(st.device("cpu"))
    assert emb_k.kernels(be) is None
    assert opt_k.kernels(be, np.dtype(np.float32)) is None
    assert _spmm._nb(be, np.dtype(np.float32)) is None
    assert _rowsort._kernels(be) is None
    a = st.eye(3).to_sparse()._data
    assert _merge._compiled(be, a, a) is None


def test_backend_per_device(device):
    be = get_backend(device)
    assert get_backend(st.device("cuda:0")) is be and be.index == 0
    assert get_backend(st.device("cpu")).index is None


# ---- checkpoints ----


def test_save_load_keeps_or_maps_the_device(device):
    import io

    serialization = pytest.importorskip("sparsetorch.serialization")
    t = st.arange(4.0, device="cuda")
    s = st.eye(3).to_sparse().cuda()
    buf = io.BytesIO()
    serialization.save({"t": t, "s": s}, buf)
    buf.seek(0)
    d = serialization.load(buf)  # as torch: back on the device it was saved from
    assert d["t"].device == device and d["s"].device == device
    assert_close(d["t"], t)
    for ml in ("cpu", {"cuda:0": "cpu"}, st.device("cpu")):
        buf.seek(0)
        d = serialization.load(buf, map_location=ml)
        assert d["t"].device == st.device("cpu")
        assert_close(d["t"], t)
    buf.seek(0)
    d = serialization.load(buf, map_location="cpu")
    assert d["s"].device == st.device("cpu") and d["s"].layout is st.sparse_coo


def test_sparse_constructor_device_rules(device):
    i = st.tensor([[0, 1], [1, 0]])
    v = st.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"device of indices \(cpu\) must match device of values"):
        st.sparse_coo_tensor(i, v.cuda(), (2, 2))
    with pytest.raises(RuntimeError, match="device of crow_indices"):
        st.sparse_csr_tensor(st.tensor([0, 1, 2]), st.tensor([1, 0]).cuda(), v.cuda(), (2, 2))
    s = st.sparse_coo_tensor(i, v, (2, 2), device="cuda")  # device=: everything moves
    assert s.device == device and s._indices().device == device
    c = st.sparse_csr_tensor(st.tensor([0, 1, 2]), st.tensor([1, 0]), v, (2, 2), device="cuda")
    assert c.device == device and c.col_indices().device == device
    assert_close(c.to_dense(), s.to_dense())


def test_indexing_with_cpu_index_tensors(device):
    x = st.arange(6.0, device="cuda")
    i = st.tensor([0, 2])
    assert_close(x[i], st.tensor([0.0, 2.0]))
    assert x[i].device == device and x[x.cpu() > 2].device == device
    y = x.clone()
    y[i] = 5.0
    assert_close(y, st.tensor([5.0, 1.0, 5.0, 3.0, 4.0, 5.0]))
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        st.arange(6.0)[i.cuda()]
    with pytest.raises(RuntimeError, match="same device"):
        x.index_select(0, i)  # torch's index_select takes no CPU index for a CUDA tensor
