"""The fused BCE-with-logits kernels take two halves of a row per iteration (issue 14): rows of
odd and even length, with and without weights, forward and backward, against torch."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


@pytest.mark.parametrize("shape", [(7, 2709), (6, 2708), (1, 20001)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce_with_logits_rows_of_any_length(shape, reduction):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 6).astype(np.float32)
    x.ravel()[:3] = [np.inf, -np.inf, 0.0]
    y = (rng.random(shape) < 0.3).astype(np.float32)
    pw = (rng.random(shape[-1]) * 5).astype(np.float32)
    w = rng.random(shape[-1]).astype(np.float32)
    out = []
    for m, F in ((torch, TF), (st, SF)):
        xs = m.tensor(x, requires_grad=True)
        r = F.binary_cross_entropy_with_logits(xs, m.tensor(y), m.tensor(w), reduction=reduction,
                                               pos_weight=m.tensor(pw))
        (g,) = m.autograd.grad(r.sum(), [xs])
        out.append((r.detach().numpy(), g.numpy()))
    (rt, gt), (rs, gs) = out
    np.testing.assert_allclose(rs, rt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gs, gt, rtol=1e-5, atol=1e-6)
