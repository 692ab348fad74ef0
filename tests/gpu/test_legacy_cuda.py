"""Legacy typed tensors on CUDA (torch.cuda.FloatTensor & co., torch.cuda.sparse.*), x.type()
moves, x.new() placement, and the older sparse products on the device. Runs on a GPU or on the
fake backend (SPARSETORCH_FAKE_CUDA)."""

import numpy as np
import pytest

import sparsetorch as st

from ._util import CUDA_MARKS

pytestmark = CUDA_MARKS


def test_cuda_typed_constructors(device):
    for t in (st.cuda.FloatTensor(2, 3), st.cuda.FloatTensor(st.Size([2, 3])),
              st.cuda.FloatTensor([[1, 2, 3], [4, 5, 6]]), st.cuda.FloatTensor(2, 3, device="cuda:0")):
        assert t.device == device and t.dtype is st.float32 and tuple(t.shape) == (2, 3)
        assert t.type() == "torch.cuda.FloatTensor"
        assert isinstance(t, st.cuda.FloatTensor) and not isinstance(t, st.FloatTensor)
    x = st.cuda.LongTensor(np.array([1.7, -2.2]))
    assert x.device == device and x.cpu().tolist() == [1, -2]
    assert st.cuda.DoubleTensor().shape == (0,) and st.cuda.BoolTensor([1, 0]).dtype is st.bool
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cuda"):
        st.cuda.FloatTensor(2, device="cpu")
    with pytest.raises(TypeError, match="expected TensorOptions"):
        st.cuda.FloatTensor(st.ones(2))  # a CPU tensor is not a cuda.FloatTensor
    assert st.cuda.FloatTensor(st.ones(2, device="cuda")).device == device


def test_cuda_sparse_typed_constructors(device):
    i = st.tensor([[0, 1, 1], [2, 0, 2]], device="cuda")
    v = st.tensor([3.0, 4.0, 5.0], device="cuda")
    with pytest.warns(UserWarning, match="deprecated"):
        s = st.cuda.sparse.FloatTensor(i, v, st.Size([2, 3]))
    assert s.device == device and s.is_sparse and s.type() == "torch.cuda.sparse.FloatTensor"
    assert isinstance(s, st.cuda.sparse.FloatTensor) and not isinstance(s, st.sparse.FloatTensor)
    assert s.to_dense().cpu().tolist() == [[0, 0, 3], [4, 0, 5]]
    with pytest.warns(UserWarning):
        e = st.cuda.sparse.DoubleTensor(2, 3)
    assert e.device == device and e._nnz() == 0 and e.dtype is st.float64
    with pytest.raises(RuntimeError, match="device type"):
        st.cuda.sparse.FloatTensor(i.cpu(), v.cpu(), (2, 3))  # CPU values for a CUDA type


def test_type_moves_between_devices(device):
    x = st.tensor([1.5, 2.0])
    c = x.type(st.cuda.FloatTensor)
    assert c.device == device and c.dtype is st.float32
    assert x.type("torch.cuda.DoubleTensor").device == device
    assert c.type(st.cuda.FloatTensor) is c
    back = c.type(st.LongTensor)
    assert back.device.type == "cpu" and back.tolist() == [1, 2]
    s = x.to_sparse().type(st.cuda.sparse.DoubleTensor)
    assert s.device == device and s.layout is st.sparse_coo and s.dtype is st.float64
    g = st.tensor([1.0, 2.0], requires_grad=True)
    (g.type(st.cuda.FloatTensor) * 3).sum().backward()
    assert g.grad.device.type == "cpu" and g.grad.tolist() == [3.0, 3.0]


def test_new_keeps_the_device(device):
    c = st.ones(2, device="cuda")
    assert c.new(3).device == device and c.new([1, 2]).device == device and c.new().device == device
    s = c.to_sparse()
    assert s.new(2, 3).device == device and s.new_zeros(2, 3).device == device
    with pytest.raises(RuntimeError, match="expects device type: cuda"):
        c.new(2, device="cpu")


def test_sparse_products_on_device(device):
    cpu_s = st.sparse_coo_tensor(st.tensor([[0, 1, 1, 3], [2, 0, 2, 1]]),
                                 st.tensor([3.0, 4.0, 5.0, -1.0]), (4, 3))
    cpu_d = st.arange(6.0).reshape(3, 2)
    cpu_a = st.sparse_coo_tensor(st.tensor([[0, 3], [0, 1]]), st.tensor([10.0, 20.0]), (4, 2))
    s, d, a = cpu_s.to("cuda"), cpu_d.to("cuda"), cpu_a.to("cuda")
    for f, args, cargs in ((st.spmm, (s, d), (cpu_s, cpu_d)), (st.smm, (s, d), (cpu_s, cpu_d)),
                           (st.hspmm, (s, d), (cpu_s, cpu_d)),
                           (st.sspaddmm, (a, s, d), (cpu_a, cpu_s, cpu_d))):
        r, want = f(*args), f(*cargs)
        assert r.device == device and r.layout is want.layout
        np.testing.assert_allclose(r.to_dense().cpu().numpy(), want.to_dense().numpy())
    sg = s.detach().requires_grad_()
    st.hspmm(sg, d).to_dense().sum().backward()
    assert sg.grad.device == device and sg.grad.layout is st.sparse_coo


def test_default_tensor_type_refuses_cuda():
    with pytest.raises(RuntimeError, match="no default device"), pytest.warns(UserWarning):
        st.set_default_tensor_type(st.cuda.FloatTensor)
    assert st.get_default_dtype() is st.float32
