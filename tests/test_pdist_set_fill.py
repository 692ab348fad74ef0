"""torch parity for pdist (values and gradients, every p), Tensor.fill_diagonal_ and Tensor.set_."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")

A = np.array([[1.0, 2, 0], [1, 2, 0], [0, 1, 3], [0, 2, 3.5], [-1, 0.5, 2]])


@pytest.mark.parametrize("p", [2, 1, 0, 0.5, 1.5, 3, float("inf")])
def test_pdist_values_and_gradients(p):
    xs, xt = st.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    rs, rt = st.pdist(xs, p), torch.pdist(xt, p)
    np.testing.assert_allclose(rs.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    w = np.arange(1.0, 11.0)
    (rs * st.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    # includes a repeated row (zero distance) and tied maxima (p = inf)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert st.nn.functional.pdist is st.pdist
    assert st.pdist(st.tensor(A, dtype=st.float32), p).dtype is st.float32


def test_pdist_empty_and_errors():
    assert tuple(st.pdist(st.ones(1, 2)).shape) == (0,)
    assert tuple(st.pdist(st.ones(0, 2)).shape) == (0,)
    np.testing.assert_array_equal(st.pdist(st.ones(3, 0)).numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        st.pdist(st.ones(3))
    with pytest.raises(NotImplementedError, match="to_dense"):
        st.pdist(st.ones(3, 2).to_sparse())


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True),
                                        ((8, 3), True), ((3, 7), True), ((2, 2, 2), False),
                                        ((0, 3), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    a = st.zeros(shape).fill_diagonal_(5, wrap)
    b = torch.zeros(shape).fill_diagonal_(5, wrap)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_fill_diagonal_autograd_and_dtypes():
    xs, xt = st.ones(3, 3, requires_grad=True), torch.ones(3, 3, requires_grad=True)
    ys, yt = xs * 2, xt * 2
    assert ys.fill_diagonal_(0) is ys
    yt.fill_diagonal_(0)
    (ys * ys).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), xt.grad.numpy())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        st.ones(2, 2, requires_grad=True).fill_diagonal_(1)
    li = st.zeros(2, 2, dtype=st.int64).fill_diagonal_(1.5)
    assert li.tolist() == torch.zeros(2, 2, dtype=torch.long).fill_diagonal_(1.5).tolist()
    assert st.zeros(2, 2).fill_diagonal_(st.tensor(2.0)).tolist() == [[2, 0], [0, 2]]


def test_set_forms():
    s = st.arange(6.0)
    t = st.ones(2)
    assert t.set_(s) is t
    s[0] = -1.0  # shares the elements
    assert t.tolist() == [-1.0, 1, 2, 3, 4, 5]
    t = st.ones(2)
    t.set_(source=s)
    assert tuple(t.shape) == (6,)
    v = st.empty(0)
    v.set_(s, 1, (2, 2), (1, 2))
    ts = torch.arange(6.0)
    ts[0] = -1.0
    vt = torch.empty(0).set_(ts, 1, (2, 2), (1, 2))
    assert v.tolist() == vt.tolist()
    s[1] = 9.0
    assert v[0, 0].item() == 9.0
    w = st.empty(0).set_(s, 2, (3,))
    assert w.tolist() == torch.empty(0).set_(ts, 2, (3,)).tolist()
    e = st.ones(3)
    v0 = e._version
    assert e.set_() is e and tuple(e.shape) == (0,) and e.dtype is st.float32
    assert e._version > v0


def test_set_errors_and_autograd():
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor "
                                           "of type float"):
        st.ones(2).set_(st.ones(2, dtype=st.int64))
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        st.ones(2).set_(5)
    with pytest.raises(TypeError, match=r"got \(Tensor, int\)"):
        st.ones(2).set_(st.ones(3), 0)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        st.ones(2).set_(st.ones(3), 0, (7,))
    # (torch grows the source's storage there instead; sparsetorch has no storage to grow)

    class FakeStorage:
        pass
    with pytest.raises(NotImplementedError, match="storage sources are not supported"):
        st.ones(2).set_(FakeStorage())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        st.zeros(2, requires_grad=True).set_(st.ones(3))
    with st.no_grad():
        x = st.zeros(2, requires_grad=True)
        x.set_(st.ones(3))
    assert x.requires_grad and x.tolist() == [1.0, 1, 1]
    # as torch: set_ records, but its derivative is not implemented
    a, b = st.ones(3), st.zeros(2, requires_grad=True)
    a.set_(b)
    assert a.requires_grad
    with pytest.raises(RuntimeError, match="derivative for set_ is not implemented"):
        a.sum().backward()
