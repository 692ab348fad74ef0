"""The float32 sigmoid family of issue 14 (``_fastmath.fsigmoid``: exp(-|x|) with a degree-4
polynomial, the reciprocal estimate plus Newton steps): sigmoid, silu and the tanh-form gelu
within a few ulps of a float64 reference, exact 1 / 0 / 0.5 / nan where torch has them (also in
the loops' 128/256-bit tails, which get a coarser estimate), float64 on libm as before."""

import numpy as np
import pytest

from sparsetorch import _jit
from sparsetorch._backend import CPU
from sparsetorch.nn._kernels import pointwise as PK

from ._fastmath_checks import needs_numba_kernels, ulps

torch = pytest.importorskip("torch")
F = np.float32


def _numba():
    needs_numba_kernels()


def _ulps(got, ref, scale):
    return ulps(got, ref, scale, 2.0 ** -126)


def _sweep():  # odd length: the vector loops end in a scalar / narrow tail
    bits = np.arange(0, 0x7F800000, 4099, dtype=np.int64).astype(np.uint32).view(F)
    return np.concatenate([np.linspace(-80, 30, 400_003).astype(F), bits, -bits])


def test_sigmoid_silu_gelu_tanh_float32_within_a_few_ulps():
    _numba()
    x = _sweep()
    x = x[x > -80]  # below, the results are under 2e-35 (flushed below exp(-87); next test)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        sig = 1 / (1 + np.exp(-xd))
        u2 = 2 * np.sqrt(2 / np.pi) * (xd + 0.044715 * xd ** 3)
        cases = [(PK.SIGMOID, sig, sig, 3, 0.3), (PK.SILU, xd * sig, xd * sig, 4, 0.3),
                 # gelu (tanh) = x sigmoid(2u): the float32 roundings of u (a few ulps) are
                 # amplified by |2u| in the left tail (torch's 1 + tanh(u) cancels to 0 there);
                 # its ulps are counted where |2u| < 8
                 (PK.GELU_TANH, xd / (1 + np.exp(-u2)), xd, 16, 0.5)]
    for kind, ref, scale, top, mean in cases:
        got = PK.activation(CPU, kind, x)
        assert got.dtype == np.float32
        ok = np.isfinite(ref) & ((kind != PK.GELU_TANH) | (np.abs(u2) < 8))
        u = _ulps(got, ref, ref)[ok]
        assert u.max() <= top and u.mean() < mean, (kind, u.max(), u.mean())
    # derivatives: silu s (1 + x (1 - s)), ulps of its larger term (it crosses zero at -1.28)
    gb = PK.activation_backward(CPU, PK.SILU, np.ones_like(x), x)
    ref = sig * (1 + xd * (1 - sig))
    ok = np.isfinite(ref)
    u = _ulps(gb, ref, np.maximum(np.abs(ref), np.abs(sig * xd * (1 - sig))))[ok]
    assert u.max() <= 10 and u.mean() < 0.5, (u.max(), u.mean())


def test_sigmoid_float32_exact_values_and_tails():
    _numba()
    n = (1 << 15) + 13  # a 13-element tail after the 512-bit loop
    for v, want in [(17.0, 1.0), (30.0, 1.0), (1e30, 1.0), (np.inf, 1.0), (0.0, 0.5),
                    (-0.0, 0.5), (-np.inf, 0.0), (-100.0, 0.0)]:
        got = PK.sigmoid(CPU, np.full(n, v, F))
        assert (got == F(want)).all(), (v, np.unique(got))
    assert np.isnan(PK.sigmoid(CPU, np.full(n, np.nan, F))).all()
    # below exp(-87) the result is flushed to 0 (no denormal operands); above, a normal float32
    x = np.linspace(-90, -85, n).astype(F)
    got = PK.sigmoid(CPU, x)
    ref = 1 / (1 + np.exp(-x.astype(np.float64)))
    assert (got[x < -87] == 0).all() and (got[x >= -87] >= np.finfo(F).tiny).all()
    assert np.abs(got - ref).max() < 2e-38
    np.testing.assert_allclose(got[x >= -87], ref[x >= -87], rtol=3e-7)


def test_sigmoid_family_matches_torch_and_float64_is_libm():
    _numba()
    rng = np.random.default_rng(0)
    x = np.concatenate([np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 50.0, -50.0], F),
                        (rng.standard_normal(1 << 15) * 6).astype(F)])
    tx = torch.from_numpy(x)
    TF = torch.nn.functional
    for kind, want in [(PK.SIGMOID, torch.sigmoid(tx)), (PK.SILU, TF.silu(tx)),
                       (PK.GELU_TANH, TF.gelu(tx, approximate="tanh"))]:
        np.testing.assert_allclose(PK.activation(CPU, kind, x), want.numpy(), rtol=2e-6,
                                   atol=1e-6)
    for kind, want in [(PK.SILU, torch.ops.aten.silu_backward(torch.ones_like(tx), tx)),
                       (PK.GELU_TANH, torch.ops.aten.gelu_backward(torch.ones_like(tx), tx,
                                                                   approximate="tanh"))]:
        got = PK.activation_backward(CPU, kind, np.ones_like(x), x)
        np.testing.assert_allclose(got, want.numpy(), rtol=2e-5, atol=2e-6)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(PK.sigmoid(CPU, xd), 1 / (1 + np.exp(-xd)), rtol=1e-15)
        np.testing.assert_allclose(PK.activation(CPU, PK.SILU, xd), xd / (1 + np.exp(-xd)),
                                   rtol=1e-15)


@pytest.mark.parametrize("n", [(1 << 14) + 1, (1 << 14) + 63, 70_001])
def test_kernels_give_the_same_values_at_any_offset_and_length(n):
    # the kernels run the elements before the output's first 64-byte boundary apart, four
    # quarters of a multiple of 64 elements, and the rest through a padded block
    _numba()
    rng = np.random.default_rng(n)
    base = (rng.standard_normal(n) * 5).astype(F)
    g = rng.standard_normal(n).astype(F)
    params = {PK.LEAKY_RELU: (0.01, 0.0, 0.0), PK.ELU: (1.0, 1.0, 1.0), PK.SOFTPLUS: (1.0, 20.0, 0.0)}
    for kind in range(8):
        p = params.get(kind, (0.0, 0.0, 0.0))
        want = PK.activation(CPU, kind, base, *p)
        wantb = PK.activation_backward(CPU, kind, g, base, *p)
        old = _jit.use_numba(False)  # the NumPy formulas
        try:
            np.testing.assert_allclose(want, PK.activation(CPU, kind, base, *p), rtol=2e-6,
                                       atol=1e-6)
            # (the NumPy derivatives of gelu cancel to ~1e-6 in the left tail)
            np.testing.assert_allclose(wantb, PK.activation_backward(CPU, kind, g, base, *p),
                                       rtol=2e-5, atol=1e-5)
        finally:
            _jit.use_numba(old)
        for off in (0, 5, 11):
            xs = np.empty(n + 16, F)[off:off + n]
            xs[:] = base
            gs = np.empty(n + 16, F)[off:off + n]
            gs[:] = g
            np.testing.assert_allclose(PK.activation(CPU, kind, xs, *p), want, rtol=1e-6, atol=1e-30)
            np.testing.assert_allclose(PK.activation_backward(CPU, kind, gs, xs, *p), wantb,
                                       rtol=1e-6, atol=1e-30)
