"""``z @ z.t()`` of a large thin matrix goes to gemm, not NumPy's syrk + strided mirror (issue 14,
the GAE step's inner-product decoder): same values as torch, the gradient of both operands."""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch._ops import linalg as _lin

torch = pytest.importorskip("torch")


def test_no_syrk_copies_only_one_buffer_thin_products():
    z = np.ones((1100, 16), np.float32)
    zt = z.T
    assert _lin._no_syrk(z, zt) is not zt  # one buffer, thin: a copy (gemm)
    assert _lin._no_syrk(z, z.T).base is None
    other = z.T.copy()
    assert _lin._no_syrk(z, other) is other  # two buffers: gemm already
    w = np.ones((1100, 600), np.float32)
    wt = w.T
    assert _lin._no_syrk(w, wt) is wt  # k > n / 8: syrk's half of the flops wins
    s = np.ones((200, 4), np.float32)
    st_ = s.T
    assert _lin._no_syrk(s, st_) is st_  # small: NumPy's choice stands
    zt = z.T
    assert _lin._no_syrk(z[0], zt) is zt  # 1-D operand


@pytest.mark.parametrize("how", ["matmul", "mm", "t_mm"])
def test_inner_product_decoder_matches_torch(how):
    z0 = np.random.default_rng(0).standard_normal((1100, 16)).astype(np.float32)
    z = st.from_numpy(z0.copy()).requires_grad_()
    tz = torch.from_numpy(z0.copy()).requires_grad_()
    if how == "matmul":
        y, ty = z @ z.t(), tz @ tz.t()
    elif how == "mm":
        y, ty = st.mm(z, z.t()), torch.mm(tz, tz.t())
    else:
        y, ty = z.mm(z.T), tz.mm(tz.T)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    y.backward(st.from_numpy(g))
    ty.backward(torch.from_numpy(g))
    np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy(), rtol=1e-4, atol=1e-3)
    assert z.grad.dtype is st.float32
